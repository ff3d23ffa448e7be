import { AppError } from '../service/errors.ts';
import type { WorkerService } from '../service/worker-service.ts';
import type { CardActionResult, PersonalizeResult, SettleResult } from './ipc-contract.ts';
import type { createIpc } from './ipc.ts';

/** What the buttons use of the running service core. */
export type CardActions = Pick<WorkerService, 'personalizeCard' | 'settleCard'>;

export const SERVICE_NOT_RUNNING =
  'The service is not running (starting, or stopped: see the top of the window); the card on the reader cannot be used now.';

/** What the errors both actions share mean to the person at the till, and what to do. */
const CARD_MEANINGS: Record<string, string> = {
  NoCard: 'No card on the reader: put the card on the reader and try again.',
  NoReader: 'No card reader is connected.',
  CorruptCard: 'Neither wallet slot on the card is valid; it was not written. Refer to support.',
  CardNotResponding: 'The card did not answer in time: take it off, put it back and try again.',
  CardBusy: 'The reader is busy with other card operations: try again in a moment.',
  MovementUnsettled:
    'An earlier movement on this card is still undecided, so it was not written: keep it on the reader and try again; refer to support if it persists.',
};

/**
 * What each error of POST /cards/personalize means at the till (docs/integrators.md lists the
 * same codes for integrators).
 */
const PERSONALIZE_MEANINGS: Record<string, string> = {
  ...CARD_MEANINGS,
  CardMasterKeyNotSet:
    'No card master key is set: set one in the settings (the service restarts), then personalize.',
  AuthenticationFail:
    "The card does not open with this shop's keys (a foreign card, or one personalized with another master key): hand it back.",
  CardRemovedDuringPersonalization:
    'The card was taken off while it was being personalized; nothing moved. Put it back and personalize it again.',
  PersonalizationTorn:
    'The card was taken off while its keys were being written and no key opens it now: keep it aside and refer to support.',
};

/** What each error of POST /cards/settle means at the till. */
const SETTLE_MEANINGS: Record<string, string> = {
  ...CARD_MEANINGS,
  LedgerUnavailable:
    'The ledger did not answer, so nothing was decided: check the connection (see Cloud ledger) and try again.',
  'Unauthorized: invalid api key':
    'The ledger does not know the API key in the settings, so nothing was decided: check the key.',
  'Missing customerId from auth flow':
    "The ledger knows the API key but no shop for it, so nothing was decided: ask the shop's provider to assign it.",
};

/**
 * The status window's card buttons, each the use case of its endpoint run in-process by the
 * service core under the reader's queue: "Personalize the card on the reader" (POST
 * /cards/personalize) and "Settle the card on the reader" (POST /cards/settle, with the API key
 * in effect). The channels take no argument; anything sent is refused and nothing is done. The
 * answer is the endpoint's, or its error in words (a bug's details go to the log, not to the
 * window).
 */
export function setupCardActionsIpc(
  ipc: Pick<ReturnType<typeof createIpc>, 'handle'>,
  service: () => CardActions | undefined,
  log: (line: string) => void,
): void {
  /** Runs one action on the running core and puts its failure into words. */
  const act = async <T>(
    args: unknown[],
    [channel, name]: [string, string],
    run: (core: CardActions) => Promise<T>,
    meanings: Record<string, string>,
  ): Promise<CardActionResult<T>> => {
    if (args[0] !== undefined)
      return { ok: false, error: `${name} takes no argument; nothing was done.` };
    const running = service();
    if (!running) return { ok: false, error: SERVICE_NOT_RUNNING };
    try {
      return { ok: true, answer: await run(running) };
    } catch (error) {
      if (error instanceof AppError)
        return { ok: false, error: meanings[error.code] ?? `${error.message} (${error.code}).` };
      log(`${channel}: ${(error as Error).stack ?? String(error)}`);
      return { ok: false, error: 'Unexpected error; the details are in the log.' };
    }
  };
  ipc.handle('card:personalize', (...args: unknown[]): Promise<PersonalizeResult> =>
    act(
      args,
      ['card:personalize', 'Personalizing'],
      (core) => core.personalizeCard(),
      PERSONALIZE_MEANINGS,
    ),
  );
  ipc.handle('card:settle', (...args: unknown[]): Promise<SettleResult> =>
    act(args, ['card:settle', 'Settling'], (core) => core.settleCard(), SETTLE_MEANINGS),
  );
}
