/**
 * What the tray and the POS are told of the till float (service/wallet/float-status.ts): its
 * state, figures and line, online and offline, with times of the till's local day (the zone is
 * set to Rome here, so a time shown in UTC would fail).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import { emptyFloatFolds, type TillFloat } from '../../service/wallet/float-entries.ts';
import { floatStatus } from '../../service/wallet/float-status.ts';

process.env.TZ = 'Europe/Rome';

const SETTINGS: FloatSettings = {
  size: 500,
  lowWater: 100,
  offlineCap: 40,
  offlineLimitSeconds: 24 * 3600,
  cardTypes: ['classic'],
};
const FLOAT = { floatId: 'float-1' } as TillFloat;
/** 10:42 in Rome (09:42 UTC). */
const SINCE = Date.parse('2026-11-26T09:42:00.000Z');

function statusOf(overrides: Partial<Parameters<typeof floatStatus>[0]> = {}) {
  return floatStatus({
    now: SINCE + 5 * 60_000,
    online: false,
    lastAnsweredAt: SINCE,
    settings: SETTINGS,
    folds: emptyFloatFolds(),
    float: FLOAT,
    available: () => 340,
    toReport: 7,
    ...overrides,
  });
}

describe('floatStatus', () => {
  test('when offline with a float, then it says since when, what is to report, what is left, and when sales stop (tomorrow)', () => {
    assert.deepEqual(statusOf(), {
      state: 'offline',
      online: false,
      floatId: 'float-1',
      size: 500,
      left: 340,
      toReport: 7,
      offlineSince: '2026-11-26T09:42:00.000Z',
      offlineSalesStopAt: '2026-11-27T09:42:00.000Z',
      line: 'offline since 10:42: 7 recharges to report, float 340 of 500 credits left, offline sales stop at 10:42 tomorrow',
    });
  });

  test('when online, then no offline times, and one recharge is said in the singular', () => {
    assert.deepEqual(statusOf({ online: true, toReport: 1 }), {
      state: 'online',
      online: true,
      floatId: 'float-1',
      size: 500,
      left: 340,
      toReport: 1,
      offlineSince: null,
      offlineSalesStopAt: null,
      line: 'online: 1 recharge to report, float 340 of 500 credits left',
    });
    assert.equal(
      statusOf({ online: true, toReport: 0 }).line,
      'online: 0 recharges to report, float 340 of 500 credits left',
    );
  });

  test('when the offline limit is reached, then it is stopped, and said so; a minute before, not', () => {
    const limit = SETTINGS.offlineLimitSeconds * 1000;
    const before = statusOf({ now: SINCE + limit - 1 });
    assert.equal(before.state, 'offline');
    const at = statusOf({ now: SINCE + limit });
    assert.equal(at.state, 'stopped');
    assert.equal(
      at.line,
      'offline since 10:42 yesterday: 7 recharges to report, float 340 of 500 credits left, offline sales stopped at 10:42',
    );
  });

  test('when the float is used up offline, then it is stopped though the limit is hours away', () => {
    const status = statusOf({ available: () => 0 });
    assert.equal(status.state, 'stopped');
    assert.equal(status.left, 0);
    assert.match(
      status.line,
      /float 0 of 500 credits left, offline sales stopped at 10:42 tomorrow$/,
    );
  });

  test('when the times are days apart, then the line gives their date', () => {
    const status = statusOf({ now: SINCE + 3 * 86_400_000 });
    assert.equal(
      status.line,
      'offline since 10:42 on 2026-11-26: 7 recharges to report, float 340 of 500 credits left, offline sales stopped at 10:42 on 2026-11-27',
    );
  });

  test('when a date is days apart and its month and day are below ten, then they have two digits', () => {
    const march = Date.parse('2027-03-05T09:42:00.000Z'); // 10:42 in Rome
    const status = statusOf({ lastAnsweredAt: march, now: march + 3 * 86_400_000 });
    assert.equal(
      status.line,
      'offline since 10:42 on 2027-03-05: 7 recharges to report, float 340 of 500 credits left, offline sales stopped at 10:42 on 2027-03-06',
    );
  });

  test('when a time is before ten, then its hour and minute have two digits', () => {
    const early = Date.parse('2026-11-26T07:05:00.000Z'); // 08:05 in Rome
    assert.match(statusOf({ lastAnsweredAt: early, now: early }).line, /^offline since 08:05: /);
  });

  test('when the last answer was just before midnight, then it was yesterday, minutes ago as it is', () => {
    const lateEvening = Date.parse('2026-11-26T22:50:00.000Z'); // 23:50 in Rome
    const status = statusOf({ lastAnsweredAt: lateEvening, now: lateEvening + 20 * 60_000 });
    assert.match(status.line, /^offline since 23:50 yesterday: .* stop at 23:50$/);
  });

  test('when the day the clocks went forward (23 hours long) ends before sales stop, then the next day is still tomorrow', () => {
    const changeDay = Date.parse('2026-03-29T10:00:00.000Z'); // 12:00 in Rome, summer time since 02:00
    const status = statusOf({ lastAnsweredAt: changeDay, now: changeDay + 60_000 });
    assert.match(status.line, /offline sales stop at 12:00 tomorrow$/);
  });

  test('when the ledger never answered, then no since, no stop time, and the limit cannot stop it by time', () => {
    const status = statusOf({ lastAnsweredAt: undefined });
    assert.equal(status.state, 'offline');
    assert.equal(status.offlineSince, null);
    assert.equal(status.offlineSalesStopAt, null);
    assert.equal(status.line, 'offline: 7 recharges to report, float 340 of 500 credits left');
  });

  test('when the settings are not learnt, then the size is 0 and no stop time is known', () => {
    const status = statusOf({ settings: undefined });
    assert.equal(status.size, 0);
    assert.equal(status.offlineSalesStopAt, null);
    assert.equal(status.offlineSince, '2026-11-26T09:42:00.000Z');
    assert.equal(
      status.line,
      'offline since 10:42: 7 recharges to report, float 340 of 0 credits left',
    );
  });

  test('when the shop gives no float, then off: "no float" online, no sales offline', () => {
    const off = { settings: { ...SETTINGS, size: 0 }, float: undefined };
    assert.deepEqual(statusOf({ ...off, online: true }), {
      state: 'off',
      online: true,
      floatId: null,
      size: 0,
      left: 0,
      toReport: 7,
      offlineSince: null,
      offlineSalesStopAt: null,
      line: 'no float',
    });
    assert.equal(statusOf(off).line, 'offline since 10:42: no float, no sales');
    assert.equal(
      statusOf({ ...off, lastAnsweredAt: undefined }).line,
      'offline: no float, no sales',
    );
  });

  test('when the shop gives a float the till does not hold yet, then opening', () => {
    assert.equal(statusOf({ float: undefined, online: true }).line, 'opening the float');
    const offline = statusOf({ float: undefined });
    assert.equal(offline.state, 'opening');
    assert.equal(offline.left, 0);
    assert.equal(offline.line, 'offline since 10:42: no float yet, no sales');
  });

  test('when the float is closing with a size of 0 still held, then it is shown with its figures, not as off', () => {
    assert.equal(statusOf({ settings: { ...SETTINGS, size: 0 }, online: true }).state, 'online');
  });

  test("when the ledger holds a float this till's journal lost, then held, whatever else", () => {
    const folds = {
      ...emptyFloatFolds(),
      lost: { floatId: 'float-0', at: '2026-11-26T09:00:00.000Z' },
    };
    const status = statusOf({ folds, float: undefined });
    assert.equal(status.state, 'held');
    assert.equal(status.offlineSince, '2026-11-26T09:42:00.000Z');
    assert.equal(
      status.line,
      "float float-0 awaits an operator's close (this till's journal does not know it): no float sales",
    );
  });
});
