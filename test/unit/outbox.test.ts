/**
 * The outbox's timer and the reconciliation schedule, on a clock that moves only when told:
 * when each pass runs, how the backoff grows and resets, and that a request during a pass is
 * never lost nor run twice at once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Outbox } from '../../service/wallet/outbox.ts';
import { ReconcileSchedule } from '../../service/wallet/reconcile-schedule.ts';
import { ManualClock, settled } from '../support/money-rig.ts';

/** A pass the test ends when it likes: `finish(allDone)`. */
function controlledPasses() {
  const passes: ((allDone: boolean) => void)[] = [];
  return {
    started: () => passes.length,
    run: () => new Promise<boolean>((resolve) => passes.push(resolve)),
    finish: async (allDone: boolean) => {
      const pass = passes.at(-1);
      assert.ok(pass, 'a pass is running');
      pass(allDone);
      await settled();
    },
  };
}

describe('Outbox', () => {
  test('when passes fail, then the next waits twice as long each time up to the maximum; once one succeeds, the delay is back to the first', async () => {
    const clock = new ManualClock();
    let results = [false, false, false, false, true];
    const outbox = new Outbox({
      clock,
      drain: async () => results.shift() ?? true,
      retryMs: 10,
      maxRetryMs: 35,
    });
    outbox.kick(0);
    await clock.advance(1_000);
    assert.deepEqual(clock.delays, [0, 20, 35, 35, 35]);
    assert.equal(clock.pending, 0, 'nothing left to retry');
    outbox.kick();
    assert.equal(clock.delays.at(-1), 10);
    results = [false];
    await clock.advance(10);
    assert.equal(clock.delays.at(-1), 20);
    await outbox.close();
  });

  test('when kicked while a pass is due, then no second pass is scheduled', async () => {
    const clock = new ManualClock();
    const outbox = new Outbox({ clock, drain: async () => true, retryMs: 10, maxRetryMs: 40 });
    outbox.kick(5);
    outbox.kick(0);
    outbox.kick();
    assert.deepEqual(clock.delays, [5]);
    await outbox.close();
  });

  test('when kicked during a pass, then one more pass runs right after it, never two at once', async () => {
    for (const firstDone of [true, false]) {
      const clock = new ManualClock();
      const passes = controlledPasses();
      const outbox = new Outbox({ clock, drain: passes.run, retryMs: 10, maxRetryMs: 40 });
      outbox.kick(0);
      await clock.advance(0);
      assert.equal(passes.started(), 1);
      outbox.kick(0);
      await clock.advance(0);
      assert.equal(passes.started(), 1, 'not while the first runs');
      await passes.finish(firstDone);
      assert.equal(passes.started(), 2, 'right after it, without waiting for a timer');
      await passes.finish(true);
      assert.equal(passes.started(), 2);
      assert.equal(clock.pending, 0);
      await outbox.close();
    }
  });

  test('when closed, then the pass due is cancelled, a running one is awaited and nothing runs after it', async () => {
    const clock = new ManualClock();
    const passes = controlledPasses();
    const outbox = new Outbox({ clock, drain: passes.run, retryMs: 10, maxRetryMs: 40 });
    outbox.kick(0);
    await clock.advance(0);
    let closed = false;
    const closing = outbox.close().then(() => (closed = true));
    await settled();
    assert.equal(closed, false, 'close waits for the running pass');
    await passes.finish(false);
    await closing;
    outbox.kick(0);
    await clock.advance(1_000);
    assert.equal(passes.started(), 1);

    const idle = new Outbox({ clock, drain: passes.run, retryMs: 10, maxRetryMs: 40 });
    idle.kick(50);
    await idle.close();
    assert.equal(clock.pending, 0, 'the due pass is cancelled');
  });
});

describe('ReconcileSchedule', () => {
  test('when asked soon, then it runs at once and then every period', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const schedule = new ReconcileSchedule(clock, 60_000, async () => {
      runs += 1;
    });
    schedule.soon();
    await clock.advance(0);
    assert.equal(runs, 1);
    await clock.advance(59_999);
    assert.equal(runs, 1);
    await clock.advance(1);
    assert.equal(runs, 2);
    // Asked again between runs: at once, and the period counts from then.
    await clock.advance(30_000);
    schedule.soon();
    await clock.advance(0);
    assert.equal(runs, 3);
    await clock.advance(59_999);
    assert.equal(runs, 3);
    await schedule.close();
  });

  test('when asked during a run, then it runs once more right after, not at the same time', async () => {
    const clock = new ManualClock();
    const runs = controlledPasses();
    const schedule = new ReconcileSchedule(clock, 60_000, async () => {
      await runs.run();
    });
    schedule.soon();
    await clock.advance(0);
    schedule.soon();
    schedule.soon();
    await clock.advance(0);
    assert.equal(runs.started(), 1);
    await runs.finish(true);
    assert.equal(runs.started(), 2);
    await runs.finish(true);
    assert.equal(runs.started(), 2);
    assert.deepEqual(clock.delays, [0, 0, 0, 60_000]);
    await schedule.close();
  });

  test('when closed, then the next run is cancelled, a running one is awaited, and nothing is scheduled after it', async () => {
    const clock = new ManualClock();
    const runs = controlledPasses();
    const schedule = new ReconcileSchedule(clock, 60_000, async () => {
      await runs.run();
    });
    schedule.soon();
    await clock.advance(0);
    schedule.soon();
    await clock.advance(0);
    const closing = schedule.close();
    await runs.finish(true);
    await closing;
    assert.equal(runs.started(), 1, 'the run asked for during the first is not run after close');
    assert.equal(clock.pending, 0);
    schedule.soon();
    await clock.advance(120_000);
    assert.equal(runs.started(), 1);

    const idle = new ReconcileSchedule(clock, 60_000, async () => undefined);
    idle.soon();
    await idle.close();
    assert.equal(clock.pending, 0, 'the due run is cancelled');
  });
});
