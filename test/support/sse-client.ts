import { request, type ClientRequest } from 'node:http';
import { assertMatchesContract } from './openapi-contract.ts';

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

export interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Events so far, in order. */
  events: SseEvent[];
  /** Comment lines (heartbeats) seen. */
  comments: number;
  /** The first event from now (or already queued after `from`) that matches. */
  next(matches: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
}

/** Opens GET /events like a fetch-based reader would, parsing the text/event-stream. */
export function openEventStream(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req: ClientRequest = request(
      { host: target.hostname, port: target.port, path: target.pathname, headers, agent: false },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        if (!contentType.startsWith('text/event-stream')) {
          // An error answer: read it whole and check it against the contract.
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            try {
              assertMatchesContract('GET', url, {
                status: res.statusCode ?? 0,
                headers: res.headers,
                text,
                json,
              });
            } catch (error) {
              reject(error);
              return;
            }
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              events: [{ event: 'error', data: json }],
              comments: 0,
              next: () => Promise.reject(new Error('not a stream')),
              close: () => undefined,
              ended: Promise.resolve(),
            });
          });
          return;
        }
        const events: SseEvent[] = [];
        const waiters = new Set<{
          matches: (event: SseEvent) => boolean;
          resolve: (event: SseEvent) => void;
        }>();
        let buffer = '';
        let comments = 0;
        let resolveEnded!: () => void;
        const ended = new Promise<void>((done) => (resolveEnded = done));
        res.on('end', () => resolveEnded());
        res.on('close', () => resolveEnded());
        res.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) {
                comments += 1;
                stream.comments = comments;
                continue;
              }
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
            }
            if (fields.data === undefined) continue;
            const event: SseEvent = {
              id: fields.id,
              event: fields.event ?? 'message',
              data: JSON.parse(fields.data),
            };
            events.push(event);
            for (const waiter of waiters) {
              if (waiter.matches(event)) {
                waiters.delete(waiter);
                waiter.resolve(event);
              }
            }
          }
        });
        const stream: SseStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          comments,
          ended,
          next(matches, timeoutMs = 5_000) {
            const found = events.find(matches);
            if (found) return Promise.resolve(found);
            return new Promise((resolveEvent, rejectEvent) => {
              const waiter = {
                matches,
                resolve: (event: SseEvent) => {
                  clearTimeout(timer);
                  resolveEvent(event);
                },
              };
              const timer = setTimeout(() => {
                waiters.delete(waiter);
                rejectEvent(
                  new Error(`no matching event in ${timeoutMs} ms; got ${JSON.stringify(events)}`),
                );
              }, timeoutMs);
              waiters.add(waiter);
            });
          },
          close: () => req.destroy(),
        };
        resolve(stream);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
