import { z } from 'zod';
import { SIMULATOR_FAULTS, type CardSimulator } from '../service/card/simulator/card-simulator.ts';
import { MAX_CARD_BALANCE } from '../service/card/wallet-format.ts';
import { simulatorRequests } from '../service/http/simulator-routes.ts';
import type { SimulatorResult } from './ipc-contract.ts';
import type { createIpc } from './ipc.ts';

/** What the panel uses of the running service core's simulator. */
export type SimulatorControl = Pick<
  CardSimulator,
  'status' | 'place' | 'takeAway' | 'putBack' | 'arm'
>;

export const SIMULATOR_OFF =
  'The card simulator is off. Turn it on in the settings; the service restarts with it.';

/** What each field of a control request must be, said so the person at the window can fix it. */
const MESSAGES: Record<string, string> = {
  uid: 'The UID must be 8 or 14 hex digits (4 or 7 bytes); leave it empty for a random one.',
  credits: `The credits must be a whole number from 0 to ${MAX_CARD_BALANCE}.`,
  cardId: 'The card to put back must be a card ID of 8 or 14 hex digits.',
  fault: `The fault must be one of: ${SIMULATOR_FAULTS.join(', ')}.`,
  delayMs: 'The delay must be a whole number of milliseconds from 1 to 60000.',
};

/**
 * The status window's simulator panel: one handler per action of the HTTP control API, calling
 * the running service core's simulator in-process. Each argument comes from the window and is
 * checked here with the control API's own schemas; a bad one, an action the simulator refuses
 * (no card in the field, a UID taken) or a service without the simulator answers
 * `{ ok: false, error }` and changes nothing. The window learns of every change through the
 * status feed (the simulator's 'changed' event).
 */
export function setupSimulatorIpc(
  ipc: Pick<ReturnType<typeof createIpc>, 'handle'>,
  simulator: () => SimulatorControl | undefined,
): void {
  const run = async <T>(
    schema: z.ZodType<T>,
    argument: unknown,
    action: (running: SimulatorControl, request: T) => Promise<unknown>,
  ): Promise<SimulatorResult> => {
    const running = simulator();
    if (!running) return { ok: false, error: SIMULATOR_OFF };
    const parsed = schema.safeParse(argument);
    if (!parsed.success) return { ok: false, error: problem(parsed.error) };
    try {
      await action(running, parsed.data);
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
    return { ok: true, status: running.status() };
  };
  ipc.handle('simulator:place', (request) =>
    run(simulatorRequests.place, request, (running, place) => running.place(place)),
  );
  // Takes no argument; an extra one is refused like any bad input.
  ipc.handle('simulator:take-away', (...args: unknown[]) =>
    run(z.undefined(), args[0], (running) => running.takeAway()),
  );
  ipc.handle('simulator:put-back', (request) =>
    run(simulatorRequests.putBack, request, (running, { cardId }) => running.putBack(cardId)),
  );
  ipc.handle('simulator:fault', (request) =>
    run(simulatorRequests.fault, request, (running, { fault, delayMs }) =>
      running.arm(fault, delayMs),
    ),
  );
}

function problem(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path[0];
  return (
    (typeof field === 'string' && MESSAGES[field]) ||
    `Not a simulator request (${issue?.message ?? 'invalid'}).`
  );
}
