import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import { OperationQueue } from '../../service/card/operation-queue.ts';

const later = (ms: number) => Date.now() + ms;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('OperationQueue', () => {
  test('when operations overlap, then they run one at a time in order', async () => {
    const queue = new OperationQueue(10);
    const log: string[] = [];
    const op = (name: string) => async () => {
      log.push(`start ${name}`);
      await sleep(10);
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name) => queue.run(op(name), later(1_000))),
    );
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  test('when too many wait, then the next one is refused with CardBusy', async () => {
    const queue = new OperationQueue(1);
    const slow = () => sleep(50);
    const first = queue.run(slow, later(1_000));
    const second = queue.run(slow, later(1_000));
    await assert.rejects(queue.run(slow, later(1_000)), { code: 'CardBusy' });
    await Promise.all([first, second]);
  });

  test('when an operation started, then its caller gets its true result even past the wait deadline', async () => {
    const queue = new OperationQueue(5);
    const result = await queue.run(async () => {
      await sleep(40);
      return 'landed';
    }, later(10));
    assert.equal(result, 'landed');
  });

  test('when an operation ends with an APDU still held, then the next one waits for that APDU', async () => {
    const queue = new OperationQueue(5);
    let apduDone = false;
    const first = queue.run(async (hold) => {
      hold(sleep(60).then(() => (apduDone = true)));
      throw new Error('timed out waiting for the card');
    }, later(1_000));
    await assert.rejects(first, /timed out/);
    assert.equal(apduDone, false, 'the caller got its answer before the APDU ended');
    await queue.run(async () => assert.equal(apduDone, true), later(1_000));
  });

  test('when a waiter gives up before its turn, then its operation never runs', async () => {
    const queue = new OperationQueue(5);
    let ran = false;
    const first = queue.run(() => sleep(60), later(1_000));
    const waiter = queue.run(async () => {
      ran = true;
    }, later(10));
    await assert.rejects(waiter, { code: 'CardNotResponding' });
    await first;
    await queue.drained();
    assert.equal(ran, false);
  });

  test('when 20 operations queue at once and each is quicker than the wait window, then none gives up, however long the line', async () => {
    // The line takes 20 x 40 ms, far past the 300 ms window, but the queue moves every 40 ms.
    const queue = new OperationQueue(32);
    const answers = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        queue.run(async () => {
          await sleep(40);
          return i;
        }, later(300)),
      ),
    );
    const failed = answers.filter((answer) => answer.status === 'rejected');
    assert.deepEqual(failed, [], `gave up: ${JSON.stringify(failed)}`);
  });

  test('when an operation fails, then the error reaches its caller and the queue goes on', async () => {
    const queue = new OperationQueue(5);
    await assert.rejects(
      queue.run(() => Promise.reject(new Error('card says no')), later(1_000)),
      /card says no/,
    );
    assert.equal(await queue.run(async () => 'next', later(1_000)), 'next');
  });
});

describe('OperationQueue: the card’s answers are progress', () => {
  test('when the operation ahead runs past the wait window while its card keeps answering, then the waiter still gets its turn', async () => {
    let answeredAt = -Infinity;
    const queue = new OperationQueue(5, () => answeredAt);
    // Five APDUs of 40 ms each: 200 ms in all, twice the waiter's 100 ms window.
    const first = queue.run(async () => {
      for (let apdu = 0; apdu < 5; apdu += 1) {
        await sleep(40);
        answeredAt = performance.now();
      }
      return 'first';
    }, later(1_000));
    const second = queue.run(async () => 'second', later(100));
    assert.deepEqual(await Promise.all([first, second]), ['first', 'second']);
  });

  test('when the card ahead stops answering, then the waiter gives up one window after its last answer', async () => {
    let answeredAt = -Infinity;
    const queue = new OperationQueue(5, () => answeredAt);
    let silent!: () => void;
    const first = queue.run(async () => {
      await sleep(40);
      answeredAt = performance.now();
      await new Promise<void>((resolve) => (silent = resolve));
    }, later(1_000));
    await assert.rejects(
      queue.run(async () => 'never', later(100)),
      {
        code: 'CardNotResponding',
      },
    );
    assert.ok(performance.now() - answeredAt >= 100, 'not before a whole window of silence');
    silent();
    await first;
  });
});
