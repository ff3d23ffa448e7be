import { AppError } from '../service/errors.ts';
import type { WorkerService } from '../service/worker-service.ts';
import type { PersonalizeResult } from './ipc-contract.ts';
import type { createIpc } from './ipc.ts';

/** What the button uses of the running service core. */
export type CardPersonalization = Pick<WorkerService, 'personalizeCard'>;

export const SERVICE_NOT_RUNNING =
  'The service is not running (starting, or stopped: see the top of the window); no card can be personalized now.';

/**
 * What each error of POST /cards/personalize means to the person at the till, and what to do
 * (docs/integrators.md lists the same codes for integrators).
 */
const MEANINGS: Record<string, string> = {
  CardMasterKeyNotSet:
    'No card master key is set: set one in the settings (the service restarts), then personalize.',
  NoCard: 'No card on the reader: put the card on the reader and try again.',
  NoReader: 'No card reader is connected.',
  AuthenticationFail:
    "The card does not open with this shop's keys (a foreign card, or one personalized with another master key): hand it back.",
  CardRemovedDuringPersonalization:
    'The card was taken off while it was being personalized; nothing moved. Put it back and personalize it again.',
  PersonalizationTorn:
    'The card was taken off while its keys were being written and no key opens it now: keep it aside and refer to support.',
  CorruptCard: 'Neither wallet slot on the card is valid; it was not written. Refer to support.',
  CardNotResponding: 'The card did not answer in time: take it off, put it back and try again.',
  CardBusy: 'The reader is busy with other card operations: try again in a moment.',
  MovementUnsettled:
    'An earlier movement on this card is still undecided, so it was not written: keep it on the reader and try again; refer to support if it persists.',
};

/**
 * The status window's "Personalize the card on the reader" button: the use case of POST
 * /cards/personalize, run in-process by the service core under the reader's queue. The
 * channel takes no argument; anything sent is refused and nothing is done. The answer is the
 * endpoint's, or its error in words (a bug's details go to the log, not to the window).
 */
export function setupPersonalizeIpc(
  ipc: Pick<ReturnType<typeof createIpc>, 'handle'>,
  service: () => CardPersonalization | undefined,
  log: (line: string) => void,
): void {
  ipc.handle('card:personalize', async (...args: unknown[]): Promise<PersonalizeResult> => {
    if (args[0] !== undefined)
      return { ok: false, error: 'Personalizing takes no argument; nothing was done.' };
    const running = service();
    if (!running) return { ok: false, error: SERVICE_NOT_RUNNING };
    try {
      return { ok: true, card: await running.personalizeCard() };
    } catch (error) {
      if (error instanceof AppError)
        return { ok: false, error: MEANINGS[error.code] ?? `${error.message} (${error.code}).` };
      log(`personalize: ${(error as Error).stack ?? String(error)}`);
      return { ok: false, error: 'Unexpected error; the details are in the log.' };
    }
  });
}
