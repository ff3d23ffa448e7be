/**
 * Migration 4: a recharge may say what the card held before it (`cardCredits`); a card holding
 * more than the shop put on it is flagged `card-above-account` (docs/cloud-api.md, "Card
 * accounts"). Only the flag kinds' CHECK changes.
 */
export const migration004 = {
  version: 4,
  name: 'card-above-account',
  sql: /* sql */ `
ALTER TABLE card_flags DROP CONSTRAINT card_flags_kind_check;
ALTER TABLE card_flags ADD CONSTRAINT card_flags_kind_check
  CHECK (kind IN ('discharge-exceeds-account', 'overdrawn-before-accounts', 'card-above-account'));
`,
};
