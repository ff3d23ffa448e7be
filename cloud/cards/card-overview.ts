import type { CardBlock, CardChange } from '../../common/ledger-contract.ts';
import type { Queryable } from '../db/database.ts';
import { toBlock, type RawBlock } from './card-blocks.ts';
import { toChange } from './card-changes.ts';

/**
 * What the back office lists of a shop's lost cards: its blocked cards with who blocked them
 * and why, and the card changes (replacements, corrections) still waiting for their cards.
 */
export interface CardOverview {
  blocked: (CardBlock & { cardId: string })[];
  waiting: CardChange[];
}

const SHOWN = 500;

export async function cardOverview(db: Queryable, shopId: string): Promise<CardOverview> {
  const blocked = await db.query<{ card_id: string; view: RawBlock }>(
    `SELECT card_id, jsonb_build_object('since', blocked_at, 'by', blocked_by, 'reason', reason) AS view
     FROM card_blocks WHERE customer_id = $1 AND lifted_at IS NULL
     ORDER BY blocked_at DESC, id DESC LIMIT ${SHOWN}`,
    [shopId],
  );
  const waiting = await db.query<{ view: CardChange }>(
    `SELECT ledger_card_change_view(w) AS view FROM card_changes w
     WHERE w.customer_id = $1 AND w.state = 'waiting'
     ORDER BY w.created_at DESC, w.id DESC LIMIT ${SHOWN}`,
    [shopId],
  );
  return {
    blocked: blocked.rows.map((row) => ({
      cardId: row.card_id,
      ...(toBlock(row.view) as CardBlock),
    })),
    waiting: waiting.rows.map((row) => toChange(row.view)),
  };
}
