import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import { installDue, tillActivity } from '../../../main/install-window.ts';

describe("the till's activity, for an update at the shop's time", () => {
  test('when the service answers a request or holds the reader, then the till is not idle', () => {
    let clock = 1_000;
    const activity = tillActivity(() => clock);
    const readers = { busy: false };
    const requests = new EventEmitter();
    activity.follow({ readers, activity: requests });
    clock += 31 * 60_000;
    const policy = { when: 'idle', idleMinutes: 30 } as const;
    assert.equal(installDue(policy, activity, new Date(clock)), true, 'idle 31 minutes');
    requests.emit('request');
    assert.equal(installDue(policy, activity, new Date(clock)), false, 'a request just now');
    clock += 31 * 60_000;
    readers.busy = true;
    assert.equal(activity.busy(), true);
    assert.equal(installDue(policy, activity, new Date(clock)), false, 'a card operation runs');
  });

  test('when no service runs yet, then nothing holds the reader', () => {
    assert.equal(tillActivity().busy(), false);
  });
});
