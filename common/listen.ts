import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Loopback only: the service is for programs on this PC, never for the network. */
export const LISTEN_HOST = '127.0.0.1';

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish (bounded), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Listens on `host` (loopback unless a caller such as the provider's ledger says otherwise) and
 * resolves once connections are accepted.
 */
export function listen(
  app: RequestListener,
  port: number,
  host: string = LISTEN_HOST,
): Promise<RunningServer> {
  // requireHostHeader off: node would answer a missing Host with a bare 400 of its own; our
  // Host check answers it in the documented error shape instead.
  const server = createServer({ requireHostHeader: false }, app);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    answerMalformed(error, socket as Socket),
  );
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => {
      server.off('error', reject);
      const actual = (server.address() as AddressInfo).port;
      resolve({
        host,
        port: actual,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`,
        close: (graceMs = 10_000) => closeServer(server, graceMs),
      });
    });
  });
}

const MALFORMED = JSON.stringify({ error: 'BadRequest' });

/**
 * A request node's HTTP parser cannot read (bad framing, oversized headers) never reaches the
 * app; it still gets an answer in the documented error shape, then the connection closes.
 */
function answerMalformed(error: NodeJS.ErrnoException, socket: Socket): void {
  // As node's own handler: answer only when nothing was sent on this connection yet (the
  // garbage may follow a request already answered), else just close it.
  if (error.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? '431 Request Header Fields Too Large'
      : '400 Bad Request';
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(MALFORMED)}\r\nCache-Control: no-store\r\n` +
      `Connection: close\r\n\r\n${MALFORMED}`,
  );
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
