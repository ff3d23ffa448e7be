/**
 * Migration 7: an operator's decision made without the card waits for the card
 * (docs/cloud-api.md, "Tills").
 *
 * An operator who posts or voids a movement with the admin CLI (no till, so no card read) gives
 * the ledger's final word, but not the card's: a payout voided because its card was reported
 * lost may have been written to the card all the same. Such a movement, when it carries the
 * card state its write was planned from (`card_before`), now **awaits its card**
 * (`awaits_card`): the card stays held as if the movement were pending (CardMovementPending, for
 * every till, its own included) until a till reads the card and says what it shows. That
 * till either confirms the operator's word (the same post or void again, with its till and the
 * card as evidence, kept in `card_evidence`; the till that made it needs none, its journal
 * knows the write) or sets the books right with a compensating
 * movement, which releases the card when the ledger takes or refuses it. A movement has at most
 * one compensation: another is refused (409 `MovementCompensated`), so two tills that both saw
 * the card cannot compensate it twice.
 *
 * And a create planned from the card state its card's latest posted movement was planned from
 * is refused (409 `CardStateMovedOn`): that movement's write landed, so the card had left the
 * state before this create came. It happens to a create that reaches the ledger late, after
 * another till read the card in the same state and wrote it: both writes are the same card
 * block, so the card could not tell them apart, and both would be counted.
 *
 * (The rules live in the functions of cloud/db/routines/; this migration adds their columns.)
 */
export const migration007 = {
  version: 7,
  name: 'awaits-card',
  sql: /* sql */ `
ALTER TABLE movements
  ADD COLUMN awaits_card boolean NOT NULL DEFAULT false,
  ADD COLUMN card_evidence text CHECK (length(card_evidence) BETWEEN 1 AND 500);
CREATE INDEX movements_customer_card_awaiting ON movements (customer_id, card_id)
  WHERE awaits_card;
`,
};
