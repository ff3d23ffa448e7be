import type { Queryable } from '../db/database.ts';
import type { TillFloatReport } from '../../common/ledger-contract.ts';

/**
 * Float recharges sold at a shop's tills and not reported to the ledger yet. The ledger cannot
 * count them (it has not heard of them); each till says how many it holds in its heartbeat, a
 * snapshot as of the heartbeat's time. So they belong to today's report only: the report of
 * the shop's current local day lists each till whose last heartbeat held some, with the time
 * of that heartbeat; a past day's report has none (null), as no heartbeat tells what was
 * unreported at that day's end.
 */
export interface TillFloatNotReported {
  tillId: string;
  tillName: string | null;
  /** Float recharges the till sold and has not reported yet, and their credits. */
  movements: number;
  credits: number;
  /** When the till said so (its last heartbeat), ISO 8601 UTC. */
  asOf: string;
}

export interface FloatNotReported {
  /** The sums over `tills`. */
  movements: number;
  credits: number;
  /** Per till, named tills first; a till whose last heartbeat held none is not listed. */
  tills: TillFloatNotReported[];
}

interface Row {
  id: string;
  name: string | null;
  last_seen_at: Date | string;
  reported_float: TillFloatReport | string;
}

/** What the shop's tills said in their last heartbeats they have not reported yet. */
export async function floatNotReported(db: Queryable, shopId: string): Promise<FloatNotReported> {
  const { rows } = await db.query<Row>(
    `SELECT id, name, last_seen_at, reported_float FROM tills
     WHERE customer_id = $1 AND reported_float IS NOT NULL AND last_seen_at IS NOT NULL
     ORDER BY name IS NULL, lower(name), id`,
    [shopId],
  );
  const tills: TillFloatNotReported[] = [];
  for (const row of rows) {
    const float = (
      typeof row.reported_float === 'string' ? JSON.parse(row.reported_float) : row.reported_float
    ) as TillFloatReport;
    if (float.unreportedMovements === 0 && float.unreportedCredits === 0) continue;
    tills.push({
      tillId: row.id,
      tillName: row.name,
      movements: float.unreportedMovements,
      credits: float.unreportedCredits,
      asOf: (row.last_seen_at instanceof Date
        ? row.last_seen_at
        : new Date(row.last_seen_at)
      ).toISOString(),
    });
  }
  return {
    movements: tills.reduce((sum, till) => sum + till.movements, 0),
    credits: tills.reduce((sum, till) => sum + till.credits, 0),
    tills,
  };
}
