import type { RequestHandler, Response } from 'express';
import type { ReaderEvent, ReaderStatus } from '../card/reader-manager.ts';
import { errors } from '../errors.ts';
import type { FloatStatus } from '../wallet/float-status.ts';
import { authenticatedLocals } from './authenticate.ts';

/** Bounds of the event stream (docs/integrators.md, "Card events"). */
export const EVENT_STREAM = {
  /** Open streams allowed per API key; one more is 429. */
  maxStreamsPerKey: 3,
  /** A comment line this often keeps proxies and the caller's read loop awake. */
  heartbeatMs: 15_000,
  /** Events kept for Last-Event-ID resume. */
  replay: 100,
} as const;

/** The `till` event: the till went offline or online (docs/integrators.md, "Card events"). */
export interface TillEventData {
  online: boolean;
  /** The till float's state (FloatStatus.state). */
  float: FloatStatus['state'];
  floatLeft: number;
  floatSize: number;
  toReport: number;
  offlineSince: string | null;
  offlineSalesStopAt: string | null;
}

export type CardStreamEvent =
  | { event: 'reader'; data: { state: 'ready' | 'unavailable' | 'stopped'; reader: string | null } }
  | { event: 'card'; data: { type: 'present' | 'removed'; cardId: string; reader: string } }
  | { event: 'till'; data: TillEventData };

/** What the stream needs of the till float: its state, and word when it changes. */
export interface TillStatusSource {
  status(): FloatStatus;
  on(event: 'status', listener: (status: FloatStatus) => void): unknown;
}

/** What the stream needs of the reader manager. */
export interface ReaderEvents {
  readonly status: ReaderStatus;
  on(event: 'event', listener: (event: ReaderEvent) => void): unknown;
}

interface Numbered {
  id: number;
  payload: CardStreamEvent;
}

/**
 * GET /events: what the reader sees, as Server-Sent Events, so a POS can react to a tap
 * without polling /readcard. A new stream starts with the current state; a stream resumed with
 * Last-Event-ID gets the events it missed (or the current state, when they are no longer kept).
 */
export class CardEventStream {
  readonly #readers: ReaderEvents;
  readonly #heartbeatMs: number;
  readonly #recent: Numbered[] = [];
  readonly #streams = new Map<Response, string>();
  readonly #till: TillStatusSource | undefined;
  #lastId = 0;
  #tillState = '';

  constructor(
    readers: ReaderEvents,
    heartbeatMs: number = EVENT_STREAM.heartbeatMs,
    till?: TillStatusSource,
  ) {
    this.#readers = readers;
    this.#heartbeatMs = heartbeatMs;
    this.#till = till;
    readers.on('event', (event) => {
      const payload = this.#toStreamEvent(event);
      if (payload) this.#publish(payload);
    });
    if (till) {
      this.#tillState = tillState(till.status());
      // Only when the till goes offline or online (or its offline sales stop or are held).
      till.on('status', (status) => {
        const state = tillState(status);
        if (state === this.#tillState) return;
        this.#tillState = state;
        this.#publish({ event: 'till', data: tillEventOf(status) });
      });
    }
  }

  handler(): RequestHandler {
    return (req, res, next) => {
      const { keyFingerprint } = authenticatedLocals(res);
      const open = [...this.#streams.values()].filter((key) => key === keyFingerprint).length;
      if (open >= EVENT_STREAM.maxStreamsPerKey) {
        res.setHeader('Retry-After', String(Math.ceil(this.#heartbeatMs / 1000)));
        next(errors.tooManyEventStreams());
        return;
      }
      res.status(200);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Accel-Buffering', 'no');
      res.flushHeaders();
      res.write(`retry: 2000\n\n`);
      this.#streams.set(res, keyFingerprint);

      const lastSeen = Number(req.headers['last-event-id']);
      const first = this.#recent[0];
      const canResume =
        Number.isInteger(lastSeen) && lastSeen <= this.#lastId && first && lastSeen >= first.id - 1;
      if (canResume) {
        for (const event of this.#recent) if (event.id > lastSeen) write(res, event);
      } else {
        for (const payload of this.#snapshot()) write(res, { id: this.#lastId, payload });
      }

      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.#heartbeatMs);
      req.on('close', () => {
        clearInterval(heartbeat);
        this.#streams.delete(res);
      });
    };
  }

  /**
   * Ends the streams of one key (the operator replaced it): a key that no longer authenticates
   * must not go on hearing about cards.
   */
  closeKey(keyFingerprint: string): void {
    for (const [res, key] of this.#streams) {
      if (key !== keyFingerprint) continue;
      res.end();
      this.#streams.delete(res);
    }
  }

  /** Ends every stream (the service is stopping): the listener can then close at once. */
  closeAll(): void {
    for (const res of this.#streams.keys()) res.end();
    this.#streams.clear();
  }

  #publish(payload: CardStreamEvent): void {
    this.#lastId += 1;
    const event = { id: this.#lastId, payload };
    this.#recent.push(event);
    if (this.#recent.length > EVENT_STREAM.replay) this.#recent.shift();
    for (const res of this.#streams.keys()) write(res, event);
  }

  #snapshot(): CardStreamEvent[] {
    const status = this.#readers.status;
    const events: CardStreamEvent[] = [
      {
        event: 'reader',
        data: { state: readerState(status.pcsc, status.reader), reader: status.reader },
      },
    ];
    if (status.card) {
      events.push({
        event: 'card',
        data: { type: 'present', cardId: status.card.cardId, reader: status.card.reader },
      });
    }
    // A stream opened while the till is offline hears so at once.
    const till = this.#till?.status();
    if (till && !till.online) events.push({ event: 'till', data: tillEventOf(till) });
    return events;
  }

  #toStreamEvent(event: ReaderEvent): CardStreamEvent | undefined {
    const status = this.#readers.status;
    switch (event.type) {
      case 'pcsc':
      case 'reader-attached':
      case 'reader-detached':
        return {
          event: 'reader',
          data: { state: readerState(status.pcsc, status.reader), reader: status.reader },
        };
      case 'card-present':
        return {
          event: 'card',
          data: { type: 'present', cardId: event.cardId, reader: event.reader },
        };
      case 'card-removed':
        return {
          event: 'card',
          data: { type: 'removed', cardId: event.cardId, reader: event.reader },
        };
      default:
        return undefined;
    }
  }
}

/** "ready" only with a reader to use: PC/SC without a reader is of no use to a POS. */
function readerState(pcsc: string, reader: string | null): 'ready' | 'unavailable' | 'stopped' {
  if (pcsc === 'stopped') return 'stopped';
  return pcsc === 'ready' && reader !== null ? 'ready' : 'unavailable';
}

function write(res: Response, { id, payload }: Numbered): void {
  res.write(`id: ${id}\nevent: ${payload.event}\ndata: ${JSON.stringify(payload.data)}\n\n`);
}

/** What makes a `till` event: online or not, and the float's offline state. */
function tillState(status: FloatStatus): string {
  return status.online ? 'online' : `offline ${status.state}`;
}

function tillEventOf(status: FloatStatus): TillEventData {
  return {
    online: status.online,
    float: status.state,
    floatLeft: status.left,
    floatSize: status.size,
    toReport: status.toReport,
    offlineSince: status.offlineSince,
    offlineSalesStopAt: status.offlineSalesStopAt,
  };
}
