/** The reader's state: `ready` (a reader is there), `unavailable`, or `stopped`. */
export interface ReaderEvent {
  id: string;
  type: 'reader';
  data: { state: 'ready' | 'unavailable' | 'stopped'; reader: string | null };
}

/** A card came onto the reader (`present`) or left it (`removed`). */
export interface CardEvent {
  id: string;
  type: 'card';
  data: { type: 'present' | 'removed'; cardId: string; reader: string };
}

/** What `GET /events` streams (docs/integrators.md, "Card events"). */
export type CardWalletEvent = ReaderEvent | CardEvent;

const EVENT_TYPES = new Set(['reader', 'card']);

/**
 * Reads a text/event-stream body (the WHATWG Server-Sent Events format: `field: value` lines,
 * an event per blank line, `:` comments such as the heartbeat) and yields its reader and card
 * events. `onData` is called for every chunk, heartbeats included, so a caller can tell a
 * quiet stream from a dead one.
 */
export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  onData: () => void,
): AsyncGenerator<CardWalletEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let type = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onData();
      buffer += decoder.decode(value, { stream: true });
      // A line ends at \n, \r\n or \r; a \r at the very end may be the first half of \r\n.
      for (let end = lineEnd(buffer); end >= 0; end = lineEnd(buffer)) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
        if (line === '') {
          if (data.length > 0 && EVENT_TYPES.has(type)) {
            yield { id, type, data: JSON.parse(data.join('\n')) } as CardWalletEvent;
          }
          type = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(text);
        else if (field === 'event') type = text;
        else if (field === 'id' && !text.includes('\0')) id = text;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function lineEnd(buffer: string): number {
  const match = /\r\n|\n|\r(?=[^\n])/.exec(buffer);
  return match ? match.index : -1;
}
