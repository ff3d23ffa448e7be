/**
 * Migration 16: the day report lists the compensations of refunds, corrections, pickups and
 * block-clears by what they did (redone or undone). daily_takings nets them into their kind's
 * line, so the report reads them from the movements: this partial index keeps that read to the
 * day's few compensations, whatever the shop's size, and costs other movements nothing but
 * the predicate.
 */
export const migration016 = {
  version: 16,
  name: 'compensations-by-day',
  sql: /* sql */ `
CREATE INDEX movements_customer_compensations ON movements (customer_id, occurred_at)
  WHERE compensates IS NOT NULL;
`,
};
