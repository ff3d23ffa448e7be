/**
 * The wall clock the service's money engine runs on (service/wallet/clock.ts): its timers run
 * after their delay, can be cleared, and never keep the process alive.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../service/wallet/clock.ts';

/** Resolves after `ms` on a timer set now: Node runs timers of equal delay in the order set. */
const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('systemClock', () => {
  test('when a timer is set, then it runs after its delay, without keeping the process alive', async () => {
    const ran: string[] = [];
    const timer = systemClock.setTimer(() => ran.push('timer'), 5);
    assert.equal((timer as NodeJS.Timeout).hasRef(), false, 'the timer is unref()ed');
    await after(5);
    assert.deepEqual(ran, ['timer']);
  });

  test('when a timer is cleared before its delay, then it never runs', async () => {
    const ran: string[] = [];
    const timer = systemClock.setTimer(() => ran.push('cleared timer'), 5);
    systemClock.clearTimer(timer);
    // Set after the cleared one with the same delay: it would have run first.
    await after(5);
    assert.deepEqual(ran, []);
  });
});
