import { bonusFor } from '../../common/bonus-tiers.ts';
import {
  amountForCredits,
  creditsForAmount,
  formatDecimal,
  parseDecimal,
} from '../../common/decimal.ts';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerClient, type LedgerCustomer } from '../cloud/ledger-client.ts';
import { didYouMean } from '../did-you-mean.ts';
import { AppError, errors } from '../errors.ts';
import { RECHARGE_BOUNDS } from './recharge-request.ts';

/**
 * What a recharge by `amount` buys (docs/integrators.md, "Bonus tiers"): the credits paid for,
 * the bonus the shop's tiers add, the credits the card gets, and what is charged. Money is
 * decimal strings.
 */
export interface AmountQuote {
  amount: string;
  /** floor(amount / creditCost). */
  paidCredits: number;
  bonusCredits: number;
  /** paidCredits + bonusCredits: what the card gets. */
  credits: number;
  /** paidCredits x creditCost: what the recharge charges. */
  rechargeAmount: string;
  creditCost: string;
  /**
   * True when the ledger could not be reached: the quote comes from the price and tiers this
   * till learnt last (what its float sells by while offline).
   */
  offline: boolean;
}

/** Whether a shop's card rules give any bonus. */
export function hasBonusTiers(customer: LedgerCustomer): boolean {
  return (customer.cards?.bonusTiers.length ?? 0) > 0;
}

/**
 * The quote by the price and tiers of `customer` as this till knows it: what the float sells
 * by while the ledger cannot be reached. `amount` buys at least one credit (checked before).
 */
export function quoteByLearntTiers(customer: LedgerCustomer, amount: string): AmountQuote {
  const cost = parseDecimal(customer.creditCost) ?? 0n;
  const paidCredits = Number(creditsForAmount(parseDecimal(amount) ?? 0n, cost));
  const bonusCredits = bonusFor(customer.cards?.bonusTiers ?? [], paidCredits, cost);
  return {
    amount,
    paidCredits,
    bonusCredits,
    credits: paidCredits + bonusCredits,
    rechargeAmount: formatDecimal(amountForCredits(paidCredits, cost)),
    creditCost: customer.creditCost,
    offline: true,
  };
}

/**
 * What `amount` buys now: the ledger's quote by the shop's current price and tiers (where
 * they live); the one by what the till learnt last only when the ledger cannot be reached
 * (`offline`), or when it is a ledger from before bonus tiers (no tiers there: none given).
 */
export async function quoteAmount(
  ledger: Pick<LedgerClient, 'getBonusQuote'>,
  apiKey: string,
  customer: LedgerCustomer,
  amount: string,
): Promise<AmountQuote> {
  try {
    const quote = await ledger.getBonusQuote(apiKey, amount);
    return {
      amount: quote.amount,
      paidCredits: quote.paidCredits,
      bonusCredits: quote.bonusCredits,
      credits: quote.paidCredits + quote.bonusCredits,
      rechargeAmount: quote.rechargeAmount,
      creditCost: quote.creditCost,
      offline: false,
    };
  } catch (error) {
    if (error instanceof LedgerRefusal) {
      if (error.code === ledgerErrorCodes.amountBelowOneCredit.code) {
        throw errors.invalidCreditsOrAmount('amount below one credit');
      }
      // A ledger from before bonus tiers has no quote, and gives no bonus.
      if (error.status === 404 && !hasBonusTiers(customer)) {
        return { ...quoteByLearntTiers(customer, amount), offline: false };
      }
      throw error;
    }
    if (error instanceof AppError && error.code === 'LedgerUnavailable') {
      if (!belowOneCredit(amount, customer.creditCost)) {
        return quoteByLearntTiers(customer, amount);
      }
      throw errors.invalidCreditsOrAmount('amount below one credit');
    }
    throw error;
  }
}

function belowOneCredit(amount: string, creditCost: string): boolean {
  const cost = parseDecimal(creditCost) ?? 0n;
  return cost <= 0n || (parseDecimal(amount) ?? 0n) < cost;
}

/** The most euros one recharge takes, in ten-thousandths. */
const MAX_AMOUNT = parseDecimal(RECHARGE_BOUNDS.maxAmount) ?? 0n;

/**
 * The query of `GET /quote`: exactly `amount`, once, euros with at most 2 decimals within the
 * bounds of a recharge (`amount=20.00`, `amount=7.5`). Anything else is 400 "Invalid credits
 * or amount value" with a detail, as a bad /writecard body.
 */
export function parseQuoteQuery(query: Record<string, unknown>): string {
  const invalid = errors.invalidCreditsOrAmount;
  const unknown = Object.keys(query).find((name) => name !== 'amount');
  if (unknown !== undefined) {
    throw invalid(
      `${JSON.stringify(unknown)}: not a parameter of /quote, which takes amount` +
        didYouMean(unknown, ['amount']),
    );
  }
  const { amount } = query;
  if (amount === undefined) throw invalid('the query needs amount, e.g. /quote?amount=20.00');
  if (typeof amount !== 'string') throw invalid('amount: give it once');
  if (!/^\d{1,12}(\.\d+)?$/.test(amount)) {
    throw invalid(`amount: must be a number of euros, like 20.00 (got ${shownText(amount)})`);
  }
  const value = parseDecimal(amount, { maxDecimals: 2 });
  if (value === undefined) throw invalid(`amount: at most 2 decimals (got ${shownText(amount)})`);
  if (value <= 0n || value > MAX_AMOUNT) {
    throw invalid(`amount: must be 0.01 to ${RECHARGE_BOUNDS.maxAmount} euros (got ${amount})`);
  }
  return formatDecimal(value);
}

function shownText(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}
