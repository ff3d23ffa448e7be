import { appendAudit, type AuditedBy } from './audit/audit-log.ts';
import type { Database } from './db/database.ts';
import { ledgerErrors } from './errors.ts';
import { changesOfCard } from './cards/card-changes.ts';
import { holderLabelOf } from './cards/card-holders.ts';
import { toBlock, type RawBlock } from './cards/card-blocks.ts';
import { canonicalDecimal, movementColumnsOf, toMovement, type MovementRow } from './records.ts';
import type { CardAccount, CardFlag, CardFlagKind } from '../common/ledger-contract.ts';

export type { CardAccount, CardFlag };

/**
 * Card accounts: per shop and card, the credits a discharge may still take (imported + posted
 * recharges - posted discharges - pending discharges). A pending discharge takes its credits
 * from the account when it is created, under the account's row lock, so two discharges of one
 * card can never both take the same credits; a void gives them back. A recharge adds to the
 * account only when it is posted: credits reserved but not yet on the card cannot be paid out.
 */

export const CARD_ID = /^(?:[0-9A-F]{8}|[0-9A-F]{14})$/;
/** The largest balance a card can hold (int32), so the largest import. */
export const MAX_CARD_CREDITS = 2_147_483_647;
const CARD_MOVEMENTS_SHOWN = 100;

interface FlagRow {
  kind: CardFlagKind;
  movement_id: string | null;
  requested_credits: number | string | null;
  account_credits: number | string | null;
  record_counter: number | string | null;
  record_movement_id: string | null;
  record_value_after: number | string | null;
  created_at: Date | string;
}

const toNumber = (value: number | string | null): number | null =>
  value === null ? null : Number(value);
const toIso = (value: Date | string): string =>
  (value instanceof Date ? value : new Date(value)).toISOString();

/** A card's account at one shop, its flags and its latest movements (one snapshot). */
export async function readCardAccount(
  db: Database,
  customerId: string,
  cardId: string,
): Promise<CardAccount> {
  if (!CARD_ID.test(cardId)) throw ledgerErrors.invalidCardId();
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const account = await tx.query<{
      credits: number | string;
      bonus_credits: number | string;
      paid_amount: string;
    }>(
      `SELECT credits, bonus_credits, paid_amount FROM card_accounts
       WHERE customer_id = $1 AND card_id = $2`,
      [customerId, cardId],
    );
    const blocked = await tx.query<{ view: RawBlock | null }>(
      'SELECT ledger_card_block_view($1, $2) AS view',
      [customerId, cardId],
    );
    const imported = await tx.query<{ credits: number | string }>(
      'SELECT credits FROM card_imports WHERE customer_id = $1 AND card_id = $2',
      [customerId, cardId],
    );
    const flags = await tx.query<FlagRow>(
      `SELECT kind, movement_id, requested_credits, account_credits, record_counter,
              record_movement_id, record_value_after, created_at FROM card_flags
       WHERE customer_id = $1 AND card_id = $2 ORDER BY id`,
      [customerId, cardId],
    );
    const movements = await tx.query<MovementRow & { customer_credits: number | string }>(
      `SELECT ${movementColumnsOf('m')}, c.credits AS customer_credits
       FROM movements m JOIN customers c ON c.id = m.customer_id
       WHERE m.customer_id = $1 AND m.card_id = $2
       ORDER BY m.created_at DESC, m.id DESC
       LIMIT ${CARD_MOVEMENTS_SHOWN}`,
      [customerId, cardId],
    );
    return {
      cardId,
      credits: Number(account.rows[0]?.credits ?? 0),
      bonusCredits: Number(account.rows[0]?.bonus_credits ?? 0),
      paidAmount: canonicalDecimal(account.rows[0]?.paid_amount ?? '0'),
      blocked: toBlock(blocked.rows[0]?.view ?? null),
      changes: await changesOfCard(tx, customerId, cardId),
      holderLabel: await holderLabelOf(tx, customerId, cardId),
      importedCredits: toNumber(imported.rows[0]?.credits ?? null),
      suspect: flags.rows.length > 0,
      flags: flags.rows.map((row) => ({
        kind: row.kind,
        movementId: row.movement_id,
        requestedCredits: toNumber(row.requested_credits),
        accountCredits: toNumber(row.account_credits),
        record:
          row.record_movement_id === null
            ? null
            : {
                counter: Number(row.record_counter),
                movementId: row.record_movement_id,
                valueAfter: Number(row.record_value_after),
              },
        createdAt: toIso(row.created_at),
      })),
      movements: movements.rows.map((row) => toMovement(row, row.customer_credits)),
    };
  });
}

export interface CardImportLine {
  cardId: string;
  credits: number;
}

export interface CardImportResult {
  /** Cards that got an account from this import. */
  imported: number;
  /** Cards imported before with the same credits: left as they are. */
  unchanged: number;
}

/**
 * Gives cards a shop sold before it used this ledger their account, once, in one transaction:
 * either every line is taken or nothing changes. A card imported before with the same credits
 * is left as it is (so running one file twice is harmless); one imported with other credits,
 * or one that already has movements at this shop (its account comes from them), is a
 * CardImportConflict naming the cards. Imported credits are cards already sold: they do not
 * come out of the shop's pool (a later discharge of them returns credits to it, as any
 * discharge does).
 */
export async function importCards(
  db: Database,
  customerId: string,
  lines: readonly CardImportLine[],
  by?: AuditedBy,
): Promise<CardImportResult> {
  return db.transaction(async (tx) => {
    // The customer row lock makes concurrent imports of one shop run one after the other.
    const { rowCount } = await tx.query('SELECT 1 FROM customers WHERE id = $1 FOR NO KEY UPDATE', [
      customerId,
    ]);
    if (rowCount === 0) throw ledgerErrors.customerNotFound(customerId);
    const conflicts: string[] = [];
    let imported = 0;
    let unchanged = 0;
    for (const line of lines) {
      const before = await tx.query<{ credits: number | string }>(
        'SELECT credits FROM card_imports WHERE customer_id = $1 AND card_id = $2',
        [customerId, line.cardId],
      );
      const previous = before.rows[0];
      if (previous !== undefined) {
        if (Number(previous.credits) === line.credits) unchanged += 1;
        else conflicts.push(`${line.cardId} was imported with ${previous.credits} credits`);
        continue;
      }
      const moved = await tx.query(
        'SELECT 1 FROM movements WHERE customer_id = $1 AND card_id = $2 LIMIT 1',
        [customerId, line.cardId],
      );
      if (moved.rowCount > 0) {
        conflicts.push(`${line.cardId} already has movements at this shop`);
        continue;
      }
      // Valued at the shop's credit cost now: what a payout of them returns at most.
      await tx.query(
        `INSERT INTO card_imports (customer_id, card_id, credits, amount)
         SELECT $1::uuid, $2::text, $3::bigint, $3::bigint * credit_cost FROM customers WHERE id = $1::uuid`,
        [customerId, line.cardId, line.credits],
      );
      await tx.query(
        `SELECT ledger_card_account_change($1::uuid, $2::text, $3::bigint, 0, $3::bigint * credit_cost)
         FROM customers WHERE id = $1`,
        [customerId, line.cardId, line.credits],
      );
      imported += 1;
    }
    if (conflicts.length > 0) {
      throw ledgerErrors.cardImportConflict(
        `nothing imported: ${conflicts.slice(0, 20).join('; ')}${conflicts.length > 20 ? `; and ${conflicts.length - 20} more` : ''}`,
      );
    }
    if (by && imported > 0) {
      await appendAudit(tx, {
        ...by,
        customerId,
        action: 'card.import',
        detail: {
          imported,
          credits: lines.reduce((sum, line) => sum + line.credits, 0),
        },
      });
    }
    return { imported, unchanged };
  });
}

/**
 * Reads a card import file: one `cardId,credits` per line (UID hex, 8 or 14 digits, any case;
 * credits 0 to 2147483647), an optional `cardId,credits` header, blank lines ignored. A card
 * listed twice must list the same credits. Every problem names its line.
 */
export function parseCardImportCsv(text: string): { lines: CardImportLine[]; problems: string[] } {
  const lines: CardImportLine[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNumber = index + 1;
    const line = raw.trim();
    if (line === '' || (index === 0 && /^card_?id\s*,\s*credits$/i.test(line))) return;
    const fields = line.split(',').map((field) => field.trim());
    const [rawCard = '', rawCredits = ''] = fields;
    const cardId = rawCard.toUpperCase();
    if (fields.length !== 2) {
      problems.push(`line ${lineNumber}: expected "cardId,credits", got "${line}"`);
    } else if (!CARD_ID.test(cardId)) {
      problems.push(`line ${lineNumber}: card id must be 8 or 14 hex digits, got "${rawCard}"`);
    } else if (!/^\d{1,10}$/.test(rawCredits) || Number(rawCredits) > MAX_CARD_CREDITS) {
      problems.push(
        `line ${lineNumber}: credits must be an integer from 0 to ${MAX_CARD_CREDITS}, got "${rawCredits}"`,
      );
    } else {
      const credits = Number(rawCredits);
      const earlier = seen.get(cardId);
      if (earlier !== undefined && earlier !== credits) {
        problems.push(`line ${lineNumber}: ${cardId} is listed before with ${earlier} credits`);
      } else if (earlier === undefined) {
        seen.set(cardId, credits);
        lines.push({ cardId, credits });
      }
    }
  });
  return { lines, problems };
}
