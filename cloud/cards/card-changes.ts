import type { CardChange, CardChangeAnswer } from '../../common/ledger-contract.ts';
import type { Queryable } from '../db/database.ts';
import { canonicalDecimal, toIso } from '../records.ts';
import { callRoutine } from './routine-call.ts';

/**
 * What waits for a card until a till's next POST with it applies it (docs/cloud-api.md,
 * "Replacements" and "Refunds and corrections"): a blocked card's account moved to a new card,
 * an operator's correction of a recharge. Each is idempotent by its id, says who and why, and
 * can be cancelled while it waits.
 */

export interface ByWhom {
  by: string;
  reason: string;
}

/** Moves a blocked card's account to a new card, where it waits for that card. */
export async function replaceCard(
  db: Queryable,
  customerId: string,
  input: { id: string; cardId: string; newCardId: string } & ByWhom,
): Promise<CardChangeAnswer> {
  return changeAnswer(
    await callRoutine<RawAnswer>(
      db,
      'SELECT ledger_replace_card($1, $2, $3, $4, $5, $6) AS answer',
      [customerId, input.id.toLowerCase(), input.cardId, input.newCardId, input.by, input.reason],
      customerId,
    ),
  );
}

/** Up to `credits` of a posted recharge of the card taken back at the card's next till POST. */
export async function correctCard(
  db: Queryable,
  customerId: string,
  input: { id: string; cardId: string; recharge: string; credits: number } & ByWhom,
): Promise<CardChangeAnswer> {
  return changeAnswer(
    await callRoutine<RawAnswer>(
      db,
      'SELECT ledger_correct_card($1, $2, $3, $4, $5, $6, $7) AS answer',
      [
        customerId,
        input.id.toLowerCase(),
        input.cardId,
        input.recharge.toLowerCase(),
        input.credits,
        input.by,
        input.reason,
      ],
      customerId,
    ),
  );
}

/** Cancels a change still waiting for its card (a replacement's credits go back). */
export async function cancelCardChange(
  db: Queryable,
  customerId: string,
  input: { id: string } & ByWhom,
): Promise<CardChangeAnswer> {
  return changeAnswer(
    await callRoutine<RawAnswer>(
      db,
      'SELECT ledger_cancel_card_change($1, $2, $3, $4) AS answer',
      [customerId, input.id.toLowerCase(), input.by, input.reason],
      customerId,
    ),
  );
}

/** The card changes of a card: waiting for it, made from it (a replacement), newest first. */
export async function changesOfCard(
  tx: Queryable,
  customerId: string,
  cardId: string,
): Promise<CardChange[]> {
  const { rows } = await tx.query<{ view: RawChange }>(
    `SELECT ledger_card_change_view(w) AS view FROM card_changes w
     WHERE w.customer_id = $1 AND (w.card_id = $2 OR w.from_card = $2)
     ORDER BY w.created_at DESC, w.id DESC LIMIT 100`,
    [customerId, cardId],
  );
  return rows.map((row) => toChange(row.view));
}

type RawChange = CardChange;
type RawAnswer = { created?: boolean; changed?: boolean; change: RawChange };

function changeAnswer(answer: RawAnswer): CardChangeAnswer {
  return { changed: answer.created ?? answer.changed ?? false, change: toChange(answer.change) };
}

export function toChange(raw: RawChange): CardChange {
  return {
    ...raw,
    credits: Number(raw.credits),
    bonusCredits: Number(raw.bonusCredits),
    paidAmount: canonicalDecimal(raw.paidAmount),
    createdAt: toIso(raw.createdAt),
    resolvedAt: raw.resolvedAt === null ? null : toIso(raw.resolvedAt),
  };
}
