import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCardRig, waitUntil, type CardRig } from '../support/card-rig.ts';
import { openEventStream, type SseStream } from '../support/sse-client.ts';
import { TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard } from '../support/virtual-card.ts';

let rig: CardRig;
before(
  async () =>
    (rig = await startCardRig(
      { allowedOrigins: ['https://pos.example.com'] },
      { eventHeartbeatMs: 200 },
    )),
);
after(() => rig.close());

const open = (headers: Record<string, string> = {}) =>
  openEventStream(`${rig.service.url}/events`, { 'X-Api-Key': TEST_API_KEY, ...headers });

describe('GET /events', () => {
  test('when a stream opens, then it starts with the reader state and streams card taps', async () => {
    const stream = await open();
    try {
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const reader = await stream.next((event) => event.event === 'reader');
      assert.deepEqual(reader.data, { state: 'ready', reader: 'Virtual PCD 00 00' });

      const card = new VirtualCard({ uid: Buffer.from('04A1B2C3', 'hex') });
      await rig.present(card);
      const present = await stream.next(
        (event) => event.event === 'card' && (event.data as { type: string }).type === 'present',
      );
      assert.deepEqual(present.data, {
        type: 'present',
        cardId: '04A1B2C3',
        reader: 'Virtual PCD 00 00',
      });
      await rig.takeAway();
      const removed = await stream.next(
        (event) => event.event === 'card' && (event.data as { type: string }).type === 'removed',
      );
      assert.deepEqual(removed.data, {
        type: 'removed',
        cardId: '04A1B2C3',
        reader: 'Virtual PCD 00 00',
      });
      assert.ok(Number(removed.id) > Number(present.id), 'ids increase');
    } finally {
      stream.close();
    }
  });

  test('when a stream resumes with Last-Event-ID, then it gets exactly the events it missed', async () => {
    const first = await open();
    const card = new VirtualCard({ uid: Buffer.from('04B1B2C3', 'hex') });
    await rig.present(card);
    const present = await first.next(
      (event) => (event.data as { cardId?: string }).cardId === '04B1B2C3',
    );
    first.close();
    await rig.takeAway();
    const resumed = await open({ 'Last-Event-ID': String(present.id) });
    try {
      const missed = await resumed.next(() => true);
      assert.deepEqual(missed.data, {
        type: 'removed',
        cardId: '04B1B2C3',
        reader: 'Virtual PCD 00 00',
      });
      assert.equal(resumed.events.filter((event) => event.event === 'card').length, 1);
    } finally {
      resumed.close();
    }
  });

  test('when nothing happens, then heartbeat comments keep the stream alive', async () => {
    const stream = await open();
    try {
      await waitUntil(() => stream.comments >= 2, 3_000, 'two heartbeats');
    } finally {
      stream.close();
    }
  });

  test('when a key opens a 4th stream, then 429; closing one makes room', async () => {
    const streams: SseStream[] = [await open(), await open(), await open()];
    try {
      const fourth = await open();
      assert.equal(fourth.status, 429);
      assert.deepEqual(fourth.events[0]?.data, { error: 'TooManyRequests' });
      streams.pop()?.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await open();
      assert.equal(again.status, 200);
      streams.push(again);
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  test('when the operator replaces the API key, then the streams of the old key are closed', async () => {
    const stream = await open();
    try {
      assert.equal(stream.status, 200);
      await rig.service.applySettings({ apiKey: 'a-new-key-for-this-till-0123' });
      const closed = await Promise.race([
        stream.ended.then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still open after 10 s')),
      ]);
      assert.equal(closed, 'closed');
      const old = await open();
      assert.equal(old.status, 401, 'the old key opens no new stream');
    } finally {
      stream.close();
      await rig.service.applySettings({ apiKey: TEST_API_KEY });
    }
  });

  test('when the key is missing or the origin not allowed, then no stream', async () => {
    const anonymous = await openEventStream(`${rig.service.url}/events`, {});
    assert.equal(anonymous.status, 401);
    const foreign = await open({ Origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    const allowed = await open({ Origin: 'https://pos.example.com' });
    try {
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://pos.example.com');
    } finally {
      allowed.close();
    }
  });
});
