import type {
  CardBlock,
  CardBlockAnswer,
  CardChange,
  CardList,
} from '../../common/ledger-contract.ts';
import type { Database, Queryable } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import { toIso } from '../records.ts';
import { callRoutine } from './routine-call.ts';

/**
 * Blocked cards (docs/cloud-api.md, "Lost cards"): a shop blocks a lost card, with who and
 * why, and lifts the block; its tills poll the card list (blocked cards and the changes waiting
 * for cards) by its sequence number, the ETag. `by` names who acts: `key:` and a key's
 * fingerprint (the ledger API), `cli:` and a user (the admin CLI), an operator of the console.
 */

/** Blocks a card (nothing changes when it is blocked already). */
export function blockCard(
  db: Queryable,
  customerId: string,
  cardId: string,
  by: { by: string; reason: string },
): Promise<CardBlockAnswer> {
  return setBlock(db, customerId, cardId, true, by);
}

/** Lifts a card's block (nothing changes when it has none). */
export function unblockCard(
  db: Queryable,
  customerId: string,
  cardId: string,
  by: { by: string; reason: string },
): Promise<CardBlockAnswer> {
  return setBlock(db, customerId, cardId, false, by);
}

async function setBlock(
  db: Queryable,
  customerId: string,
  cardId: string,
  block: boolean,
  { by, reason }: { by: string; reason: string },
): Promise<CardBlockAnswer> {
  const answer = await callRoutine<CardBlockAnswer & { blocked: RawBlock | null }>(
    db,
    'SELECT ledger_block_card($1, $2, $3, $4, $5) AS answer',
    [customerId, cardId, block, by, reason],
    customerId,
  );
  return { ...answer, blocked: toBlock(answer.blocked), seq: Number(answer.seq) };
}

/** The card list's sequence number now: what a till's ETag is compared with. */
export async function cardListSeq(db: Queryable, customerId: string): Promise<number> {
  const { rows } = await db.query<{ seq: number | string }>(
    'SELECT card_list_seq AS seq FROM customers WHERE id = $1',
    [customerId],
  );
  const row = rows[0];
  if (!row) throw ledgerErrors.customerNotFound(customerId);
  return Number(row.seq);
}

/**
 * The shop's card list: its blocked cards, the changes waiting for cards and the cards held for
 * an operator's word given without them, one snapshot.
 */
export function readCardList(db: Database, customerId: string): Promise<CardList> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const shop = await tx.query<{ seq: number | string; changed_at: Date | string | null }>(
      'SELECT card_list_seq AS seq, card_list_changed_at AS changed_at FROM customers WHERE id = $1',
      [customerId],
    );
    const row = shop.rows[0];
    if (!row) throw ledgerErrors.customerNotFound(customerId);
    const blocked = await tx.query<{ card_id: string; blocked_at: Date | string }>(
      `SELECT card_id, blocked_at FROM card_blocks
       WHERE customer_id = $1 AND lifted_at IS NULL ORDER BY card_id`,
      [customerId],
    );
    const waiting = await tx.query<{
      id: string;
      kind: CardChange['kind'];
      card_id: string;
      credits: number | string;
      bonus_credits: number | string;
    }>(
      `SELECT id, kind, card_id, credits, bonus_credits FROM card_changes
       WHERE customer_id = $1 AND state = 'waiting' ORDER BY card_id, created_at, id`,
      [customerId],
    );
    const held = await tx.query<{ card_id: string; id: string; state: 'posted' | 'voided' }>(
      `SELECT card_id, id, state FROM movements
       WHERE customer_id = $1 AND awaits_card ORDER BY card_id, created_at, id`,
      [customerId],
    );
    return {
      seq: Number(row.seq),
      changedAt: row.changed_at === null ? null : toIso(row.changed_at),
      blocked: blocked.rows.map((block) => ({
        cardId: block.card_id,
        since: toIso(block.blocked_at),
      })),
      waiting: waiting.rows.map((change) => ({
        id: change.id,
        kind: change.kind,
        cardId: change.card_id,
        credits: Number(change.credits),
        bonusCredits: Number(change.bonus_credits),
      })),
      held: held.rows.map((movement) => ({
        cardId: movement.card_id,
        movementId: movement.id,
        state: movement.state,
      })),
    };
  });
}

/** A block as the routines answer it (timestamps as PostgreSQL writes them in JSON). */
export interface RawBlock {
  since: string;
  by: string;
  reason: string;
}

export function toBlock(raw: RawBlock | null): CardBlock | null {
  return raw && { since: toIso(raw.since), by: raw.by, reason: raw.reason };
}
