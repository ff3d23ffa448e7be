import { errors } from '../errors.ts';
import { toCardError } from './card-errors.ts';
import type { Hold } from './operation-queue.ts';

/**
 * One APDU exchange bounded in time: past `timeoutMs` the caller gets CardNotResponding, while
 * the reader lock stays held (`hold`) until the exchange really ends, so no other operation
 * talks to a card that is still busy. Every failure leaves as an AppError.
 */
export async function boundedApdu<T>(
  hold: Hold,
  timeoutMs: number,
  apdu: () => Promise<T>,
): Promise<T> {
  const exchange = apdu();
  hold(exchange);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.cardNotResponding()), timeoutMs);
  });
  try {
    return await Promise.race([exchange, deadline]);
  } catch (error) {
    throw toCardError(error);
  } finally {
    clearTimeout(timer);
  }
}
