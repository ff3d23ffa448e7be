import type { Queryable } from '../db/database.ts';
import { movementColumnsOf, toMovement, type Movement, type MovementRow } from '../records.ts';
import type { CardFlagKind } from '../../common/ledger-contract.ts';

/**
 * What waits for a person at a shop: movements still pending (each holds its card for the
 * other tills until it is decided, by the card at a till or by an operator without it),
 * decisions made without the card that wait for it, and cards flagged suspect.
 */
export interface FlaggedCard {
  cardId: string;
  flags: number;
  lastKind: CardFlagKind;
  lastAt: string;
}

export interface HeldAndFlagged {
  pending: Movement[];
  awaitingCard: Movement[];
  flagged: FlaggedCard[];
}

const SHOWN = 200;

async function movementsWhere(db: Queryable, shopId: string, where: string): Promise<Movement[]> {
  const { rows } = await db.query<MovementRow & { customer_credits: number | string }>(
    `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
     FROM movements m JOIN customers c ON c.id = m.customer_id
     WHERE m.customer_id = $1 AND ${where}
     ORDER BY m.created_at, m.id LIMIT ${SHOWN}`,
    [shopId],
  );
  return rows.map((row) => toMovement(row, row.customer_credits));
}

export async function heldAndFlagged(db: Queryable, shopId: string): Promise<HeldAndFlagged> {
  const flagged = await db.query<{
    card_id: string;
    flags: number | string;
    last_kind: CardFlagKind;
    last_at: Date | string;
  }>(
    `SELECT DISTINCT ON (card_id) card_id, count(*) OVER (PARTITION BY card_id) AS flags,
            kind AS last_kind, created_at AS last_at
     FROM card_flags WHERE customer_id = $1
     ORDER BY card_id, id DESC`,
    [shopId],
  );
  return {
    pending: await movementsWhere(db, shopId, `m.state = 'pending'`),
    awaitingCard: await movementsWhere(db, shopId, 'm.awaits_card'),
    flagged: flagged.rows
      .map((row) => ({
        cardId: row.card_id,
        flags: Number(row.flags),
        lastKind: row.last_kind,
        lastAt: (row.last_at instanceof Date ? row.last_at : new Date(row.last_at)).toISOString(),
      }))
      .sort((a, b) => b.lastAt.localeCompare(a.lastAt))
      .slice(0, SHOWN),
  };
}

/** How many movements wait for a decision and how many cards are flagged (the shop page). */
export async function heldCounts(
  db: Queryable,
  shopId: string,
): Promise<{ held: number; flagged: number }> {
  const { rows } = await db.query<{ held: number | string; flagged: number | string }>(
    `SELECT (SELECT count(*) FROM movements WHERE customer_id = $1 AND state = 'pending') AS held,
            (SELECT count(DISTINCT card_id) FROM card_flags WHERE customer_id = $1) AS flagged`,
    [shopId],
  );
  return { held: Number(rows[0]?.held ?? 0), flagged: Number(rows[0]?.flagged ?? 0) };
}
