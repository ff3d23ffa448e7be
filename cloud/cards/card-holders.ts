import type { Queryable } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';

/**
 * A card's optional holder label (docs/cloud-api.md, "Holder labels"): a name or a phone
 * number, the shop's choice, so a customer who lost an anonymous card can be found. It is the
 * customer's personal data: deleting it removes it from the ledger (the audit log says that it
 * was set or deleted, never what it said).
 */

export const MAX_HOLDER_LABEL = 100;

/** A label as given: trimmed, 1 to 100 characters, no control characters. */
export function checkedHolderLabel(value: unknown, name = 'label'): string {
  const label = typeof value === 'string' ? value.trim() : '';
  // eslint-disable-next-line no-control-regex
  if (label === '' || label.length > MAX_HOLDER_LABEL || /[\u0000-\u001f\u007f]/.test(label)) {
    throw ledgerErrors.invalidRequest(
      `${name}: must be 1 to ${MAX_HOLDER_LABEL} characters on one line`,
    );
  }
  return label;
}

/** Sets (or replaces) the card's label; answers whether it changed. */
export async function setHolderLabel(
  tx: Queryable,
  customerId: string,
  cardId: string,
  label: string,
  by: string,
): Promise<boolean> {
  const { rows } = await tx.query<{ changed: boolean }>(
    `INSERT INTO card_holders AS h (customer_id, card_id, label, set_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (customer_id, card_id) DO UPDATE
       SET label = EXCLUDED.label, set_at = now(), set_by = EXCLUDED.set_by
       WHERE h.label IS DISTINCT FROM EXCLUDED.label
     RETURNING true AS changed`,
    [customerId, cardId, label, by],
  );
  return rows.length > 0;
}

/** Deletes the card's label; answers whether it had one. */
export async function deleteHolderLabel(
  tx: Queryable,
  customerId: string,
  cardId: string,
): Promise<boolean> {
  const { rows } = await tx.query(
    'DELETE FROM card_holders WHERE customer_id = $1 AND card_id = $2 RETURNING card_id',
    [customerId, cardId],
  );
  return rows.length > 0;
}

export async function holderLabelOf(
  db: Queryable,
  customerId: string,
  cardId: string,
): Promise<string | null> {
  const { rows } = await db.query<{ label: string }>(
    'SELECT label FROM card_holders WHERE customer_id = $1 AND card_id = $2',
    [customerId, cardId],
  );
  return rows[0]?.label ?? null;
}

/** The shop's cards whose label contains `text` (any case), at most 50, by label. */
export async function cardsByHolderLabel(
  db: Queryable,
  customerId: string,
  text: string,
): Promise<{ cardId: string; label: string }[]> {
  const pattern = `%${text.trim().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  const { rows } = await db.query<{ card_id: string; label: string }>(
    `SELECT card_id, label FROM card_holders
     WHERE customer_id = $1 AND label ILIKE $2
     ORDER BY lower(label), card_id LIMIT 50`,
    [customerId, pattern],
  );
  return rows.map((row) => ({ cardId: row.card_id, label: row.label }));
}
