import assert from 'node:assert/strict';
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

  test('when an operation overruns its deadline, then its caller gets CardNotResponding but the lock holds until it ends', async () => {
    const queue = new OperationQueue(5);
    let finished = false;
    const stalled = queue.run(async () => {
      await sleep(80);
      finished = true;
    }, later(20));
    await assert.rejects(stalled, { code: 'CardNotResponding' });
    assert.equal(finished, false);
    let ranAt = 0;
    await queue.run(async () => {
      ranAt = Date.now();
    }, later(1_000));
    assert.equal(finished, true, 'the next operation waited for the stalled one');
    assert.ok(ranAt > 0);
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

  test('when an operation fails, then the error reaches its caller and the queue goes on', async () => {
    const queue = new OperationQueue(5);
    await assert.rejects(
      queue.run(() => Promise.reject(new Error('card says no')), later(1_000)),
      /card says no/,
    );
    assert.equal(await queue.run(async () => 'next', later(1_000)), 'next');
  });
});
