/**
 * Migration 8: the shop's tills as a table of their own, and when each movement happened.
 *
 * - `tills`: every till the ledger has heard from, per customer (a till id may serve another
 *   shop later: it is a till of each). Filled from the movements made before it; from now on a
 *   create that names a till adds it. The till float and the back office add their columns.
 * - `movements.occurred_at`: when a posted movement happened by the till's clock (the card
 *   write proven, `occurredAt` of the post); the ledger's own time of it is `resolved_at`. Day
 *   reports count a shop's local day of `occurred_at`. Movements posted before it take their
 *   post time.
 */
export const migration008 = {
  version: 8,
  name: 'tills-and-occurred-at',
  sql: /* sql */ `
ALTER TABLE movements ADD COLUMN occurred_at timestamptz;
UPDATE movements SET occurred_at = resolved_at WHERE state = 'posted';

CREATE TABLE tills (
  customer_id uuid NOT NULL REFERENCES customers (id),
  id uuid NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, id)
);
INSERT INTO tills (customer_id, id, first_seen_at)
SELECT customer_id, till_id, min(created_at) FROM movements
WHERE till_id IS NOT NULL
GROUP BY customer_id, till_id;
`,
};
