import type { CustomerDirectory } from '../cloud/customer-directory.ts';
import type { LedgerClient } from '../cloud/ledger-client.ts';
import { AppError, errors } from '../errors.ts';
import type { FloatStatus } from './float-status.ts';
import type { TillFloats } from './till-floats.ts';

/** The spec's customer credit record: both fields are strings. */
export interface CustomerInfo {
  credits: string;
  creditCost: string;
}

/** Refusals that keep their own meaning; anything else means the record could not be read. */
const AUTH_CODES = new Set([
  'Unauthorized: missing api key',
  'Unauthorized: invalid api key',
  'Missing customerId from auth flow',
]);

/**
 * GET /info: the shop's credits and the cost of one credit, read fresh from the ledger (never
 * from a cache: this is the number the shop decides on). `credits` is the pool plus what the
 * tills' floats hold at the ledger, less this till's float recharges not reported yet (other
 * tills' unreported ones are not known here). When the ledger cannot be reached it is
 * CustomerReadError, never an older figure: its detail says what this till's float can still
 * sell (docs/integrators.md, "When the internet drops").
 */
export async function customerInfo(
  ledger: LedgerClient,
  customers: CustomerDirectory,
  apiKey: string,
  floats?: TillFloats,
): Promise<CustomerInfo> {
  let customer;
  try {
    customer = await ledger.getCustomer(apiKey);
  } catch (error) {
    if (error instanceof AppError && AUTH_CODES.has(error.code)) throw error;
    const status = floats?.status();
    throw errors.customerReadError(
      error,
      status && status.state !== 'off' ? offlineDetail(status) : undefined,
    );
  }
  customers.remember(apiKey, customer);
  const unreported = floats?.account.unreportedCredits() ?? 0;
  const credits = customer.credits + (customer.floatCredits ?? 0) - unreported;
  return { credits: String(credits), creditCost: customer.creditCost };
}

function offlineDetail(status: FloatStatus): string {
  const sells =
    status.state === 'offline'
      ? `this till sells from its float: ${status.left} credits left${status.offlineSalesStopAt ? `, until ${status.offlineSalesStopAt}` : ''}`
      : `this till's float sells nothing now (${status.state})`;
  return `the ledger cannot be reached${status.offlineSince ? ` since ${status.offlineSince}` : ''}; ${sells}`;
}
