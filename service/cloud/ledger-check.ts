import { AppError } from '../errors.ts';
import { LedgerClient } from './ledger-client.ts';

export interface LedgerCheck {
  /** The ledger answered, accepted the key and resolved it to a shop. */
  ok: boolean;
  /** One line for the start-up log: what was found, or what is wrong and what to do. */
  line: string;
}

/**
 * Checks a provider's ledger at start, once and quickly (one attempt, no retries): reachable,
 * this till's key accepted, the key resolved to a shop. The service starts either way (the
 * ledger may come back; cards can still be read), but the operator reads at once what is
 * wrong instead of finding out from the first money call.
 */
export async function checkLedger(
  url: string,
  apiKey: string,
  timeoutMs = 3_000,
): Promise<LedgerCheck> {
  const ledger = new LedgerClient({ baseUrl: url, timeoutMs, retries: 0 });
  try {
    const shop = await ledger.getCustomer(apiKey);
    return {
      ok: true,
      line: `ledger check: ${url} answers, accepts this till's key, shop ${shop.name} (${shop.customerId}) holds ${shop.credits} credits at ${shop.creditCost} each`,
    };
  } catch (error) {
    const code = error instanceof AppError ? error.code : undefined;
    const because = (reason: string) => ({ ok: false, line: `ledger check: ${reason}` });
    if (code === 'Unauthorized: invalid api key' || code === 'Unauthorized: missing api key') {
      return because(
        `${url} refuses this till's API key: use the key the provider issued for this till (--api-key), or ask the provider to register it (card-wallet-cloud key issue --key KEY)`,
      );
    }
    if (code === 'Missing customerId from auth flow') {
      return because(
        `${url} knows this till's API key but it is assigned to no shop: ask the provider to assign it (card-wallet-cloud key assign)`,
      );
    }
    const reason =
      error instanceof AppError && error.detail ? error.detail : `${url}: ${String(error)}`;
    return because(`${reason}; until it answers, money calls answer LedgerUnavailable`);
  }
}
