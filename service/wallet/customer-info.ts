import type { CustomerDirectory } from '../cloud/customer-directory.ts';
import type { LedgerClient } from '../cloud/ledger-client.ts';
import { AppError, errors } from '../errors.ts';

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
 * from a cache: this is the number the shop decides on).
 */
export async function customerInfo(
  ledger: LedgerClient,
  customers: CustomerDirectory,
  apiKey: string,
): Promise<CustomerInfo> {
  let customer;
  try {
    customer = await ledger.getCustomer(apiKey);
  } catch (error) {
    if (error instanceof AppError && AUTH_CODES.has(error.code)) throw error;
    throw errors.customerReadError(error);
  }
  customers.remember(apiKey, customer);
  return { credits: String(customer.credits), creditCost: customer.creditCost };
}
