import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Loopback only: the service is for programs on this PC (design.md section 7). */
export const LISTEN_HOST = '127.0.0.1';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish (bounded), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

export function listen(app: RequestListener, port: number): Promise<RunningServer> {
  // requireHostHeader off: node would answer a missing Host with a bare 400 of its own; our
  // Host check answers it in the documented error shape instead.
  const server = createServer({ requireHostHeader: false }, app);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: LISTEN_HOST, exclusive: true }, () => {
      server.off('error', reject);
      const actual = (server.address() as AddressInfo).port;
      resolve({
        port: actual,
        url: `http://${LISTEN_HOST}:${actual}`,
        close: (graceMs = 10_000) => closeServer(server, graceMs),
      });
    });
  });
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
