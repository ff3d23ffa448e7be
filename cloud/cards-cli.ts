/**
 * `card-wallet-cloud card block|unblock|replace|correct|cancel-change|list|rules` and
 * `blocklist key`: a shop's lost cards, corrections and bonus tiers at the command line
 * (docs/cloud-api.md, "Lost cards, refunds and bonuses").
 */
import { randomUUID } from 'node:crypto';
import { checkedTiers, parseBonusTiers } from '../common/bonus-tiers.ts';
import type { BonusSpend, CardRules } from '../common/ledger-contract.ts';
import {
  integer,
  parse,
  print,
  text,
  UsageError,
  uuid,
  withDatabase,
  type CliIo,
  type Values,
} from './cli-args.ts';
import { BlocklistFeeds } from './cards/blocklist-feed.ts';
import type { AuditActor } from './audit/audit-log.ts';
import { readCardList } from './cards/card-blocks.ts';
import { checkedHolderLabel } from './cards/card-holders.ts';
import { Cards, type CardActor } from './cards/cards.ts';
import { setCardRules, UNDO_WINDOW_BOUNDS } from './cards/card-rules.ts';
import { CARD_ID } from './card-accounts.ts';
import type { Database } from './db/database.ts';
import { ledgerErrors, type LedgerError } from './errors.ts';
import { findCustomer, toCardRules, type CustomerRow } from './records.ts';

export const CARD_RULES_USAGE = `  card block|unblock --customer ID --card CARDID --reason TEXT
      Block a lost card (every till refuses it, the ledger moves no credits for it, and a
      till that sees it empties it), or lift its block.
  card replace --customer ID --card OLD --new-card NEW --reason TEXT [--id UUID]
      Move a blocked card's account to a new card: it waits there until a till's next
      POST with the new card picks it up, once.
  card correct --customer ID --card CARDID --recharge MOVEMENT --credits N --reason TEXT [--id UUID]
      Take up to N credits of a recharge back from its card at its next till POST,
      refunding them at the recharge's price (bonus credits first, for nothing).
  card cancel-change --customer ID --id CHANGE --reason TEXT
      Cancel a replacement or correction still waiting for its card.
  card list --customer ID
      The shop's blocked cards, the changes waiting for cards and the cards held for an
      operator's word given without them (what its tills poll).
  card holder --customer ID --card CARDID (--label TEXT | --delete)
      Put a holder label on a card (a name or a phone number, up to 100 characters), so a
      customer who lost it can be found; --delete removes it, as its holder may ask.
  card rules --customer ID [--undo-window DURATION] [--bonus-tiers TIERS|none]
             [--bonus-spend first|last]
      The shop's card rules: how long a cashier may undo a recharge (10m by default; 0:
      never), its bonus tiers (like 20.00=2,50.00=8,100.00=10%: from an amount paid, credits
      or a percentage of the credits paid for; none: no bonus, the default), and whether a
      payout spends bonus credits first (the default) or last. Prints them all.
  blocklist key --customer ID
      The public key the shop's machines check its blocklist feed with.`;

export async function cardRulesCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number | undefined> {
  switch (sub) {
    case 'block':
    case 'unblock': {
      const values = parse(args, withReason({ customer: {}, card: {} }));
      const customerId = uuid(values, 'customer');
      const cardId = cardIdOf(values, 'card');
      const by = cliBy(io, values);
      print(
        io,
        await onShop(io, values, customerId, (db) => new Cards(db)[sub](customerId, cardId, by)),
      );
      return 0;
    }
    case 'replace': {
      const values = parse(args, withReason({ customer: {}, card: {}, 'new-card': {}, id: {} }));
      const customerId = uuid(values, 'customer');
      const input = {
        id: uuid(values, 'id', false) ?? randomUUID(),
        cardId: cardIdOf(values, 'card'),
        newCardId: cardIdOf(values, 'new-card'),
      };
      if (input.newCardId === input.cardId) throw new UsageError('--new-card must be another card');
      const by = cliBy(io, values);
      print(
        io,
        await onShop(io, values, customerId, (db) => new Cards(db).replace(customerId, input, by)),
      );
      return 0;
    }
    case 'correct': {
      const values = parse(
        args,
        withReason({ customer: {}, card: {}, recharge: {}, credits: {}, id: {} }),
      );
      const customerId = uuid(values, 'customer');
      const input = {
        id: uuid(values, 'id', false) ?? randomUUID(),
        cardId: cardIdOf(values, 'card'),
        recharge: uuid(values, 'recharge'),
        credits: integer(values, 'credits', 1, 2_147_483_647),
      };
      const by = cliBy(io, values);
      print(
        io,
        await onShop(io, values, customerId, (db) => new Cards(db).correct(customerId, input, by)),
      );
      return 0;
    }
    case 'cancel-change': {
      const values = parse(args, withReason({ customer: {}, id: {} }));
      const customerId = uuid(values, 'customer');
      const id = uuid(values, 'id');
      const by = cliBy(io, values);
      print(
        io,
        await onShop(io, values, customerId, (db) =>
          new Cards(db).cancelChange(customerId, id, by),
        ),
      );
      return 0;
    }
    case 'list': {
      const values = parse(args, strings({ customer: {} }));
      const customerId = uuid(values, 'customer');
      print(io, await onShop(io, values, customerId, (db) => readCardList(db, customerId)));
      return 0;
    }
    case 'rules':
      return rules(io, args);
    case 'holder': {
      const values = parse(args, {
        ...strings({ customer: {}, card: {}, label: {} }),
        delete: { type: 'boolean' as const },
      });
      const customerId = uuid(values, 'customer');
      const cardId = cardIdOf(values, 'card');
      const given = text(values, 'label', false);
      if ((given === undefined) === (values.delete !== true)) {
        throw new UsageError('card holder takes either --label TEXT or --delete');
      }
      let label: string | null = null;
      if (given !== undefined) {
        try {
          label = checkedHolderLabel(given, '--label');
        } catch (error) {
          throw new UsageError((error as LedgerError).detail ?? String(error));
        }
      }
      print(
        io,
        await onShop(io, values, customerId, (db) =>
          new Cards(db).holderLabel(customerId, cardId, label, { actor: cliActor(io) }),
        ),
      );
      return 0;
    }
    default:
      return undefined;
  }
}

/** `blocklist key`. */
export async function blocklistCommand(
  io: CliIo,
  sub: string | undefined,
  args: string[],
): Promise<number> {
  if (sub !== 'key') throw new UsageError(`unknown command "blocklist ${sub ?? ''}"; use key`);
  const values = parse(args, strings({ customer: {} }));
  const customerId = uuid(values, 'customer');
  print(
    io,
    await onShop(io, values, customerId, (db) => new BlocklistFeeds(db).publicKey(customerId)),
  );
  return 0;
}

async function rules(io: CliIo, args: string[]): Promise<number> {
  const values = parse(
    args,
    strings({ customer: {}, 'undo-window': {}, 'bonus-tiers': {}, 'bonus-spend': {} }),
  );
  const customerId = uuid(values, 'customer');
  const change: Partial<CardRules> = {};
  const window = text(values, 'undo-window', false);
  if (window !== undefined) change.undoWindowSeconds = undoWindowSeconds(window);
  const tiers = text(values, 'bonus-tiers', false);
  if (tiers !== undefined) {
    const parsed = tiers === 'none' ? checkedTiers([]) : parseBonusTiers(tiers);
    if (typeof parsed === 'string') throw new UsageError(`--bonus-tiers: ${parsed}`);
    change.bonusTiers = parsed;
  }
  const spend = text(values, 'bonus-spend', false);
  if (spend !== undefined) {
    if (spend !== 'first' && spend !== 'last') {
      throw new UsageError(`--bonus-spend must be first or last (got "${spend}")`);
    }
    change.bonusSpend = `bonus-${spend}` as BonusSpend;
  }
  print(
    io,
    await onShop(io, values, customerId, async (db) =>
      Object.keys(change).length === 0
        ? toCardRules((await findCustomer(db, customerId)) as CustomerRow)
        : setCardRules(db, customerId, change, { actor: cliActor(io) }),
    ),
  );
  return 0;
}

/** `10m`, `600s`, `1h`, `0` or a number of seconds, within the undo window's bounds. */
export function undoWindowSeconds(raw: string): number {
  const match = /^(\d{1,6})([smh]?)$/.exec(raw.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600 }[match?.[2] ?? ''] ?? 1;
  const seconds = match ? Number(match[1]) * unit : NaN;
  if (!(seconds >= UNDO_WINDOW_BOUNDS.min && seconds <= UNDO_WINDOW_BOUNDS.max)) {
    throw new UsageError(
      `--undo-window must be a duration from 0 to 24h, like 10m, 90s or 1h (got "${raw}")`,
    );
  }
  return seconds;
}

/** The provider at the command line (`cli:USER`), and the command's reason (required). */
function cliBy(io: CliIo, values: Values): CardActor {
  const reason = text(values, 'reason', false)?.trim() ?? '';
  if (reason === '' || reason.length > 500) {
    throw new UsageError('--reason is required: say why, in 1 to 500 characters');
  }
  return { actor: cliActor(io), reason };
}

function cliActor(io: CliIo): AuditActor {
  return { kind: 'cli', user: io.env.USER ?? io.env.USERNAME ?? io.env.LOGNAME ?? 'unknown' };
}

function cardIdOf(values: Values, name: string): string {
  const cardId = (text(values, name) ?? '').toUpperCase();
  if (!CARD_ID.test(cardId)) {
    throw new UsageError(`--${name} must be a card id of 8 or 14 hex digits (got "${cardId}")`);
  }
  return cardId;
}

/** Runs `fn` on the database, after checking the shop exists (CustomerNotFound, exit 1). */
function onShop<T>(
  io: CliIo,
  values: Values,
  customerId: string,
  fn: (db: Database) => Promise<T>,
): Promise<T> {
  return withDatabase(io, values, async (db) => {
    if (!(await findCustomer(db, customerId))) throw ledgerErrors.customerNotFound(customerId);
    return fn(db);
  });
}

function strings<T extends Record<string, object>>(names: T) {
  return Object.fromEntries(
    Object.keys(names).map((name) => [name, { type: 'string' as const }]),
  ) as Record<keyof T, { type: 'string' }>;
}

function withReason<T extends Record<string, object>>(names: T) {
  return strings({ ...names, reason: {} });
}
