import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the proxy does with the next requests:
 * - `pass`: forward to the target and relay its answer;
 * - `refuse`: reset the connection at once (the ledger is down);
 * - `slow`: wait `delayMs` before forwarding (past the client's timeout);
 * - `error500`: answer 500 without forwarding;
 * - `drop-response`: forward (the ledger commits) but cut the connection instead of answering;
 * - `intercept`: call `before` (return false to cut the connection without forwarding), then
 *   forward, then call `after` (return false to cut it instead of answering): for crashing
 *   the caller at an exact point. Either may return a promise, to hold the request or its
 *   answer until something else happened (for interleaving two requests in a chosen order).
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'refuse' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'error500' }
  | { kind: 'drop-response' }
  | {
      kind: 'intercept';
      before?: (request: ProxiedRequest) => boolean | Promise<boolean>;
      after?: (request: ProxiedRequest) => boolean | Promise<boolean>;
    };

export interface ProxiedRequest {
  method: string;
  path: string;
  mode: FaultMode['kind'];
  /** Set once the proxy has sent the ledger's answer back (a dropped answer is never sent). */
  answered?: true;
}

export interface FaultProxy {
  url: string;
  /** Every request seen, in order. */
  readonly requests: ProxiedRequest[];
  /** Sets the mode for all requests from now on (optionally only those whose path matches). */
  setMode(mode: FaultMode, matches?: (method: string, path: string) => boolean): void;
  close(): Promise<void>;
}

/** An HTTP proxy on 127.0.0.1 in front of a real server, to cause ledger faults on demand. */
export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  const requests: ProxiedRequest[] = [];
  let mode: FaultMode = { kind: 'pass' };
  let matches: (method: string, path: string) => boolean = () => true;
  const sockets = new Set<Socket>();

  const forward = (
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    drop: boolean | ((request: ProxiedRequest) => boolean | Promise<boolean>),
    seen: ProxiedRequest,
  ) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', async () => {
          if (typeof drop === 'function' ? !(await drop(seen)) : drop) {
            res.socket?.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks), () => (seen.answered = true));
        });
      },
    );
    upstream.on('error', () => res.socket?.destroy());
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const path = req.url ?? '/';
      const method = req.method ?? 'GET';
      const active: FaultMode = matches(method, path) ? mode : { kind: 'pass' };
      const seen: ProxiedRequest = { method, path, mode: active.kind };
      requests.push(seen);
      const body = Buffer.concat(chunks);
      switch (active.kind) {
        case 'pass':
          return forward(req, body, res, false, seen);
        case 'drop-response':
          return forward(req, body, res, true, seen);
        case 'intercept':
          if (active.before && !(await active.before(seen))) return req.socket.destroy();
          return forward(req, body, res, active.after ?? false, seen);
        case 'refuse':
          return req.socket.resetAndDestroy();
        case 'error500':
          res.writeHead(500, { 'Content-Type': 'application/json' });
          return res.end('{"error":"InternalError"}');
        case 'slow': {
          const timer = setTimeout(() => forward(req, body, res, false, seen), active.delayMs);
          res.on('close', () => clearTimeout(timer));
          return;
        }
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setMode(next, filter) {
      mode = next;
      matches = filter ?? (() => true);
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
