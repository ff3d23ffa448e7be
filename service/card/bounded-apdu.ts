import { errors } from '../errors.ts';
import { toCardError } from './card-errors.ts';
import type { Hold } from './operation-queue.ts';
import { silenceDeadline, type AfterAnswersRead } from './silence-deadline.ts';

/**
 * One APDU exchange bounded in time: once the card has said nothing for `timeoutMs` (since the
 * exchange began, or since its last answer: `lastAnswerAt`, see reader-answers.ts), judged
 * after what reached the process was read (silence-deadline.ts), the caller gets
 * CardNotResponding, while the reader lock stays held (`hold`) until the exchange really ends,
 * so no other operation talks to a card that is still busy. Every failure leaves as an AppError.
 */
export async function boundedApdu<T>(
  hold: Hold,
  timeoutMs: number,
  apdu: () => Promise<T>,
  lastAnswerAt: () => number,
  afterAnswersRead?: AfterAnswersRead,
): Promise<T> {
  const exchange = apdu();
  hold(exchange);
  let cancel!: () => void;
  const deadline = new Promise<never>((_, reject) => {
    cancel = silenceDeadline(
      timeoutMs,
      lastAnswerAt,
      () => reject(errors.cardNotResponding()),
      afterAnswersRead,
    );
  });
  try {
    return await Promise.race([exchange, deadline]);
  } catch (error) {
    throw toCardError(error);
  } finally {
    cancel();
  }
}
