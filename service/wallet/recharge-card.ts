import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { MAX_CARD_BALANCE } from '../card/wallet-format.ts';
import type { LedgerCustomer } from '../cloud/ledger-client.ts';
import { cardAccountRefusal, otherTillRefusal } from '../cloud/ledger-refusals.ts';
import { errors } from '../errors.ts';
import type { CardAccess, CardOnReader } from './card-access.ts';
import { onCardRequest } from './card-request.ts';
import { withCardChanges, type CardChanges } from './card-changes.ts';
import { clearBlockedCard } from './block-clear.ts';
import { blockedRefusal, type CardBlocks } from './card-blocks.ts';
import { cardHeldOffline, type CardHolds } from './card-holds.ts';
import type { MovementEngine, RechargeAnswer } from './movement-engine.ts';
import type { Idempotency } from './journal-entries.ts';
import type { CardPersonalizer } from './personalize-card.ts';
import { buysAtLeastOneCredit, type RechargeRequest } from './recharge-request.ts';
import { floatReportRefusal } from './till-floats.ts';

export interface RechargeInput {
  request: RechargeRequest;
  /** The POS's reference of the sale, kept with the movement. */
  reference?: string;
  customer: LedgerCustomer;
  keyFingerprint: string;
  idempotency?: Idempotency;
  /** Personalizes a card still on the transport key before anything is reserved. */
  personalizer?: Pick<CardPersonalizer, 'beforeRecharge'>;
  /** Refuse a card holding more than its account at the ledger (default: only flagged). */
  refuseAboveAccount?: boolean;
  /** The ledger refused the card (refuseAboveAccount) and flagged it: the host shows it. */
  onFlagged?: (cardId: string, credits: number, reason: string) => void;
  /** The shop's blocked cards: refused before anything is reserved or sold (CardBlocked). */
  blocks?: CardBlocks;
  /** The changes waiting for cards: applied before the recharge. */
  changes?: CardChanges;
  /** The cards the ledger holds for an operator's word: never sold to from the float unread. */
  holds?: CardHolds;
}

/**
 * POST /writecard: loads credits onto the card on the reader. Paid from the till's float when
 * it covers them (docs/integrators.md, "When the internet drops"): the journal, the card
 * written and read back, the answer, and the ledger told afterwards. Otherwise paid from the
 * shop's pool: the ledger reserves the credits (and converts an amount at its own credit
 * cost), the card is written and read back, and only then is the movement posted. Offline, a
 * recharge the float cannot pay is NoCredits, with a detail saying why.
 */
export function rechargeCard(
  cards: CardAccess,
  movements: MovementEngine,
  input: RechargeInput,
): Promise<RechargeAnswer> {
  const { request, customer } = input;
  if (request.amount !== undefined && !buysAtLeastOneCredit(request.amount, customer.creditCost)) {
    throw errors.invalidCreditsOrAmount('amount below one credit');
  }
  return onCardRequest(cards, movements, input, async (card, idempotency) => {
    await input.personalizer?.beforeRecharge(card);
    // A replacement or correction waiting for the card is applied first.
    const changes = { changes: input.changes, keyFingerprint: input.keyFingerprint };
    return withCardChanges(card, movements, changes, () =>
      rechargeOnCard(card, movements, input, idempotency),
    );
  });
}

/** The recharge itself, once the card is known to be neither blocked nor awaited by a change. */
async function rechargeOnCard(
  card: CardOnReader,
  movements: MovementEngine,
  input: RechargeInput,
  idempotency: Idempotency | undefined,
): Promise<RechargeAnswer> {
  const { request, customer, blocks, keyFingerprint } = input;
  const wallet = await movements.readWallet(card);
  if (wallet.balance < 0) throw errors.negativeCredits();
  const fits = (credits: number) => wallet.balance + credits <= MAX_CARD_BALANCE;
  if (request.credits !== undefined && !fits(request.credits)) throw errors.cardBalanceOverflow();
  const balanceAfter = (credits: number) => {
    if (!fits(credits)) throw errors.cardBalanceOverflow();
    return wallet.balance + credits;
  };

  const floats = movements.floats;
  // What the card shows of other floats' recharges is reported, whatever is written next.
  await floats?.noteEvidence(wallet);
  const terms = { keyFingerprint: input.keyFingerprint, customer, request };
  const quote = await floats?.ledgerQuote(terms);
  // A card the ledger holds for an operator's word takes the ledger's path, which settles that
  // word from the card first; a float sale would write over the evidence unseen.
  const held = floats ? (input.holds?.heldFor(card.cardId) ?? []) : [];
  if (held.length > 0 && !floats?.keeper.online) throw cardHeldOffline(card.cardId, held);
  const plan =
    held.length > 0 ? undefined : floats?.plan({ ...terms, wallet, ...(quote ? { quote } : {}) });
  if (plan && 'refusal' in plan) throw plan.refusal;
  if (plan) {
    const sale = await movements.sellFromFloat(card, {
      keyFingerprint: input.keyFingerprint,
      idempotency,
      wallet,
      plan,
      balanceAfter,
      ...(input.reference === undefined ? {} : { reference: input.reference }),
    });
    try {
      return await movements.commit<RechargeAnswer>(sale, card);
    } finally {
      // Sold or undecided (the card left mid-write): either way reported, and the float kept.
      floats?.sold(customer);
    }
  }
  // The ledger counts this till's float recharges of the card before it reserves.
  await floats?.reportBeforeLedger();
  const reservation = await movements
    .reserve(card, {
      kind: 'recharge',
      keyFingerprint: input.keyFingerprint,
      idempotency,
      wallet,
      // What the card holds, so the ledger can tell a card above its account.
      request: {
        ...request,
        ...(input.reference === undefined ? {} : { reference: input.reference }),
        cardCredits: wallet.balance,
        ...(input.refuseAboveAccount ? { refuseAboveAccount: true } : {}),
      },
      balanceAfter,
    })
    .catch(async (error: unknown) => {
      // Only with refuseAboveAccount: the card holds more than the shop put on it.
      const refusal = cardAccountRefusal(error);
      if (refusal) {
        input.onFlagged?.(card.cardId, wallet.balance, refusal.code);
        throw refusal;
      }
      // Blocked since the till's list was fetched: emptied now, as the list would have.
      const blocked = blockedRefusal(error, card.cardId, blocks);
      if (blocked) await clearBlockedCard(card, movements, { blocks, keyFingerprint });
      throw blocked ?? rechargeRefusal(error);
    });
  // Reserved: the ledger holds the card no more (its word was settled from the card).
  if (held.length > 0) input.holds?.learntRead(card.cardId);
  return movements.commit<RechargeAnswer>(reservation, card);
}

/** The ledger's refusals of a reservation, as the spec's errors. */
function rechargeRefusal(error: unknown): never {
  const held = otherTillRefusal(error) ?? floatReportRefusal(error);
  if (held) throw held;
  const code = (error as { code?: unknown }).code;
  if (code === ledgerErrorCodes.noCredits.code) throw errors.noCredits();
  if (code === ledgerErrorCodes.amountBelowOneCredit.code)
    throw errors.invalidCreditsOrAmount('amount below one credit');
  throw error;
}
