import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { createIpc, senderIsWindow } from '../../../main/ipc.ts';
import {
  setupSimulatorIpc,
  SIMULATOR_OFF,
  type SimulatorControl,
} from '../../../main/simulator-ipc.ts';
import type { SimulatorStatus } from '../../../service/card/simulator/card-simulator.ts';
import { MAX_CARD_BALANCE } from '../../../service/card/wallet-format.ts';
import { errors } from '../../../service/errors.ts';
import {
  chromiumFileUrl,
  FakeFrame,
  FakeIpcMain,
  FakeWebContents,
} from '../../support/electron-mock.ts';

const PAGE_FILE = '/app/renderer/index.html';
const STATUS: SimulatorStatus = {
  card: { cardId: '0A0B0C0D', credits: 50 },
  cards: [{ cardId: '0A0B0C0D', credits: 50 }],
};

/** A simulator that records what it is asked; `refuse` makes its next action throw. */
class RecordingSimulator implements SimulatorControl {
  readonly calls: [string, ...unknown[]][] = [];
  refuse: Error | undefined;
  status(): SimulatorStatus {
    return STATUS;
  }
  async place(request: { uid?: string; credits?: number }) {
    this.#record('place', request);
    return STATUS.cards[0] as SimulatorStatus['cards'][number];
  }
  async takeAway() {
    this.#record('takeAway');
  }
  async putBack(cardId: string) {
    this.#record('putBack', cardId);
    return STATUS.cards[0] as SimulatorStatus['cards'][number];
  }
  async arm(fault: string, delayMs?: number) {
    this.#record('arm', fault, delayMs);
    return STATUS.cards[0] as SimulatorStatus['cards'][number];
  }
  #record(action: string, ...args: unknown[]): void {
    if (this.refuse) throw this.refuse;
    this.calls.push([action, ...args]);
  }
}

/** Our window's IPC with the simulator handlers; `simulator` undefined: a service without it. */
function setUp(simulator: SimulatorControl | undefined) {
  const ipcMain = new FakeIpcMain();
  const ours = new FakeWebContents(new FakeFrame(chromiumFileUrl(PAGE_FILE)));
  const ipc = createIpc(
    ipcMain,
    senderIsWindow(() => ours as unknown as WebContents, PAGE_FILE),
    () => undefined,
  );
  setupSimulatorIpc(ipc, () => simulator);
  const fromOurs = { sender: ours, senderFrame: ours.mainFrame } as unknown as IpcMainInvokeEvent;
  const invoke = (channel: string, ...args: unknown[]) =>
    ipcMain.invoke(channel, fromOurs, ...args);
  return { ipcMain, ours, invoke };
}

describe('simulator IPC', () => {
  test('when the window asks for each action with valid input, then the simulator does exactly it and the answer is its status', async () => {
    const simulator = new RecordingSimulator();
    const { invoke } = setUp(simulator);
    const ok = { ok: true, status: STATUS };
    assert.deepEqual(await invoke('simulator:place', { uid: '0a0b0c0d', credits: 50 }), ok);
    assert.deepEqual(await invoke('simulator:place', {}), ok);
    assert.deepEqual(await invoke('simulator:take-away'), ok);
    assert.deepEqual(await invoke('simulator:put-back', { cardId: '04A1B2C3D4E5F6' }), ok);
    assert.deepEqual(await invoke('simulator:fault', { fault: 'slow', delayMs: 500 }), ok);
    assert.deepEqual(await invoke('simulator:fault', { fault: 'tear-before-commit' }), ok);
    assert.deepEqual(simulator.calls, [
      ['place', { uid: '0a0b0c0d', credits: 50 }],
      ['place', {}],
      ['takeAway'],
      ['putBack', '04A1B2C3D4E5F6'],
      ['arm', 'slow', 500],
      ['arm', 'tear-before-commit', undefined],
    ]);
  });

  const credits = `The credits must be a whole number from 0 to ${MAX_CARD_BALANCE}.`;
  const uid = 'The UID must be 8 or 14 hex digits (4 or 7 bytes); leave it empty for a random one.';
  const cardId = 'The card to put back must be a card ID of 8 or 14 hex digits.';
  for (const [channel, argument, error] of [
    ['simulator:place', { credits: -1 }, credits],
    ['simulator:place', { credits: 1.5 }, credits],
    ['simulator:place', { credits: '5' }, credits],
    ['simulator:place', { credits: Number.NaN }, credits],
    ['simulator:place', { credits: MAX_CARD_BALANCE + 1 }, credits],
    ['simulator:place', { uid: 'xyz' }, uid],
    ['simulator:place', { uid: '0A0B0C0D0E' }, uid],
    ['simulator:place', { credits: 5, owner: 'me' }, /^Not a simulator request \(.*owner/],
    ['simulator:place', 'place a card', /^Not a simulator request \(/],
    ['simulator:place', undefined, /^Not a simulator request \(/],
    ['simulator:take-away', { cardId: '0A0B0C0D' }, /^Not a simulator request \(/],
    ['simulator:put-back', { cardId: '0A0B0C0' }, cardId],
    ['simulator:put-back', '0A0B0C0D', /^Not a simulator request \(/],
    ['simulator:fault', { fault: 'melt' }, /^The fault must be one of: tear-before-commit, /],
    ['simulator:fault', { fault: 'slow', delayMs: 0 }, /^The delay must be a whole number/],
    ['simulator:fault', { fault: 'slow', delayMs: 60_001 }, /^The delay must be a whole number/],
  ] as const) {
    test(`when the window sends ${channel} ${JSON.stringify(argument) ?? 'nothing'}, then it is told why and the simulator is not asked`, async () => {
      const simulator = new RecordingSimulator();
      const { invoke } = setUp(simulator);
      const answer = (await invoke(channel, argument)) as { ok: boolean; error: string };
      assert.equal(answer.ok, false, JSON.stringify(answer));
      if (typeof error === 'string') assert.equal(answer.error, error);
      else assert.match(answer.error, error);
      assert.deepEqual(simulator.calls, []);
    });
  }

  test('when the simulator refuses (no card in the field), then its reason comes back', async () => {
    const simulator = new RecordingSimulator();
    simulator.refuse = errors.noSimulatedCard();
    const { invoke } = setUp(simulator);
    assert.deepEqual(await invoke('simulator:fault', { fault: 'corrupt' }), {
      ok: false,
      error: 'No simulated card is in the field',
    });
  });

  test('when the service runs without the simulator, then every action says it is off', async () => {
    const { invoke } = setUp(undefined);
    for (const [channel, argument] of [
      ['simulator:place', { credits: 5 }],
      ['simulator:take-away', undefined],
      ['simulator:put-back', { cardId: '0A0B0C0D' }],
      ['simulator:fault', { fault: 'corrupt' }],
    ] as const) {
      assert.deepEqual(await invoke(channel, argument), { ok: false, error: SIMULATOR_OFF });
    }
  });

  test('when another window sends a simulator action, then it is dropped and the simulator is not asked', async () => {
    const simulator = new RecordingSimulator();
    const { ipcMain } = setUp(simulator);
    const other = new FakeWebContents(new FakeFrame(chromiumFileUrl(PAGE_FILE)));
    const fromOther = {
      sender: other,
      senderFrame: other.mainFrame,
    } as unknown as IpcMainInvokeEvent;
    await assert.rejects(
      ipcMain.invoke('simulator:place', fromOther, { credits: 5 }),
      /untrusted sender/,
    );
    assert.deepEqual(simulator.calls, []);
  });
});
