/** The takings chart's weeks: a year of days summed per calendar week, in decimal. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addDays,
  takingsByWeek,
  takingsOver,
  type TakingsDay,
} from '../../cloud/reports/takings-chart.ts';

/** `count` days from `first` on, each taking 0.10 more than the one before (never a round sum). */
function days(first: string, count: number): TakingsDay[] {
  return Array.from({ length: count }, (_, i) => ({
    date: addDays(first, i),
    taken: `${i + 1}.10`,
    paidOut: '0.70',
    refunded: i % 7 === 0 ? '0.20' : '0.00',
    net: 'unused',
    movements: 2,
  }));
}

describe('takingsByWeek', () => {
  test('when a span starts on a Wednesday and ends on a Monday, then it has a short first and last week, every other week starts on a Monday and holds seven days', () => {
    // 2026-06-10 is a Wednesday.
    const weeks = takingsByWeek(days('2026-06-10', 20));
    assert.deepEqual(
      weeks.map((week) => [week.date, week.days]),
      [
        ['2026-06-10', 5],
        ['2026-06-15', 7],
        ['2026-06-22', 7],
        ['2026-06-29', 1],
      ],
    );
  });

  test('when the days are summed per week, then every figure is the exact decimal sum of its days, and the weeks add up to the whole span', () => {
    const span = days('2025-06-11', 365);
    const weeks = takingsByWeek(span);
    const [first] = weeks;
    // Days 1..5 take 1.10 + 2.10 + 3.10 + 4.10 + 5.10; day 1 refunds 0.20.
    assert.deepEqual(first, {
      date: '2025-06-11',
      days: 5,
      taken: '15.50',
      paidOut: '3.50',
      refunded: '0.20',
      net: '11.80',
      movements: 10,
    });
    const whole = takingsOver(span);
    const ofWeeks = takingsOver(weeks);
    assert.deepEqual(
      [ofWeeks.taken, ofWeeks.paidOut, ofWeeks.refunded, ofWeeks.net, ofWeeks.movements],
      [whole.taken, whole.paidOut, whole.refunded, whole.net, whole.movements],
    );
    assert.equal(
      weeks.reduce((sum, week) => sum + week.days, 0),
      365,
    );
  });

  test('when there are no days, then there are no weeks and the sum is zero', () => {
    assert.deepEqual(takingsByWeek([]), []);
    assert.deepEqual(takingsOver([]), {
      date: '',
      days: 0,
      taken: '0.00',
      paidOut: '0.00',
      refunded: '0.00',
      net: '0.00',
      movements: 0,
    });
  });
});
