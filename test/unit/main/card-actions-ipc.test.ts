import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { createIpc, senderIsWindow } from '../../../main/ipc.ts';
import {
  SERVICE_NOT_RUNNING,
  setupCardActionsIpc,
  type CardActions,
} from '../../../main/card-actions-ipc.ts';
import { errors } from '../../../service/errors.ts';
import type { PersonalizeAnswer } from '../../../service/wallet/personalize-card.ts';
import type { SettleAnswer } from '../../../service/wallet/settle-card.ts';
import {
  chromiumFileUrl,
  FakeFrame,
  FakeIpcMain,
  FakeWebContents,
} from '../../support/electron-mock.ts';

const PAGE_FILE = '/app/renderer/index.html';
const ANSWER: PersonalizeAnswer = { cardId: '04A1B2C3', credits: 12, alreadyPersonalized: false };
const SETTLED: SettleAnswer = {
  cardId: '04A1B2C3',
  settled: [
    {
      id: '2f1c7e52-0c55-4c1b-9d43-5d0f4c1e8a10',
      tillId: '00000000-0000-4000-8000-00000000beef',
      kind: 'discharge',
      credits: 30,
      state: 'posted',
    },
  ],
  undecided: [],
};

/** A service core that counts the card actions it is asked for; `fail` makes them throw. */
class RecordingService implements CardActions {
  calls: string[] = [];
  fail: unknown;
  async personalizeCard(): Promise<PersonalizeAnswer> {
    this.calls.push('personalize');
    if (this.fail !== undefined) throw this.fail;
    return ANSWER;
  }
  async settleCard(): Promise<SettleAnswer> {
    this.calls.push('settle');
    if (this.fail !== undefined) throw this.fail;
    return SETTLED;
  }
}

/** Our window's IPC with the buttons' handlers; `service` undefined: the core is not running. */
function setUp(service: CardActions | undefined, channel = 'card:personalize') {
  const ipcMain = new FakeIpcMain();
  const ours = new FakeWebContents(new FakeFrame(chromiumFileUrl(PAGE_FILE)));
  const logged: string[] = [];
  const ipc = createIpc(
    ipcMain,
    senderIsWindow(() => ours as unknown as WebContents, PAGE_FILE),
    (line) => logged.push(line),
  );
  setupCardActionsIpc(
    ipc,
    () => service,
    (line) => logged.push(line),
  );
  const fromOurs = { sender: ours, senderFrame: ours.mainFrame } as unknown as IpcMainInvokeEvent;
  const invoke = (...args: unknown[]) => ipcMain.invoke(channel, fromOurs, ...args);
  return { ipcMain, invoke, logged };
}

describe('personalize IPC', () => {
  test('when our window asks, then the service core personalizes the card once and the answer comes back', async () => {
    const service = new RecordingService();
    const { invoke } = setUp(service);
    assert.deepEqual(await invoke(), { ok: true, answer: ANSWER });
    assert.deepEqual(service.calls, ['personalize']);
  });

  for (const argument of [{ cardId: '04A1B2C3' }, 'personalize', 0, null]) {
    test(`when the window sends ${JSON.stringify(argument)}, then it is refused and nothing is done`, async () => {
      const service = new RecordingService();
      const { invoke } = setUp(service);
      assert.deepEqual(await invoke(argument), {
        ok: false,
        error: 'Personalizing takes no argument; nothing was done.',
      });
      assert.deepEqual(service.calls, []);
    });
  }

  test('when another window or a subframe sends it, then it is dropped and the card is not touched', async () => {
    const service = new RecordingService();
    const { ipcMain, logged } = setUp(service);
    const other = new FakeWebContents(new FakeFrame(chromiumFileUrl(PAGE_FILE)));
    for (const event of [
      { sender: other, senderFrame: other.mainFrame },
      { sender: other, senderFrame: new FakeFrame(chromiumFileUrl(PAGE_FILE)) },
    ]) {
      await assert.rejects(
        ipcMain.invoke('card:personalize', event as unknown as IpcMainInvokeEvent),
        /untrusted sender/,
      );
    }
    assert.deepEqual(service.calls, []);
    assert.match(logged.join('\n'), /dropped card:personalize/);
  });

  test('when the service core is not running, then the window is told so', async () => {
    const { invoke } = setUp(undefined);
    assert.deepEqual(await invoke(), { ok: false, error: SERVICE_NOT_RUNNING });
  });

  for (const [error, meaning] of [
    [errors.cardMasterKeyNotSet(), /^No card master key is set: set one in the settings/],
    [errors.noCard(), /^No card on the reader/],
    [errors.authenticationFail(), /does not open with this shop's keys \(a foreign card/],
    [errors.cardRemovedDuringPersonalization(), /taken off while it was being personalized/],
    [errors.personalizationTorn(), /no key opens it now: keep it aside/],
    [errors.cardWriteUnverified(), /differs from what was written \(CardWriteUnverified\)\.$/],
  ] as const) {
    test(`when personalizing fails with ${error.code}, then the window gets its plain meaning`, async () => {
      const service = new RecordingService();
      service.fail = error;
      const { invoke } = setUp(service);
      const answer = (await invoke()) as { ok: boolean; error: string };
      assert.equal(answer.ok, false, JSON.stringify(answer));
      assert.match(answer.error, meaning);
    });
  }

  test('when personalizing fails with a bug, then the window gets no detail and the log gets it', async () => {
    const service = new RecordingService();
    service.fail = new Error('secret detail');
    const { invoke, logged } = setUp(service);
    assert.deepEqual(await invoke(), {
      ok: false,
      error: 'Unexpected error; the details are in the log.',
    });
    assert.match(logged.join('\n'), /card:personalize: Error: secret detail/);
  });
});

describe('settle IPC', () => {
  test('when our window asks, then the service core settles the card on the reader once and its answer comes back', async () => {
    const service = new RecordingService();
    const { invoke } = setUp(service, 'card:settle');
    assert.deepEqual(await invoke(), { ok: true, answer: SETTLED });
    assert.deepEqual(service.calls, ['settle']);
  });

  test('when the window sends an argument, then it is refused and nothing is done', async () => {
    const service = new RecordingService();
    const { invoke } = setUp(service, 'card:settle');
    assert.deepEqual(await invoke({ cardId: '04A1B2C3' }), {
      ok: false,
      error: 'Settling takes no argument; nothing was done.',
    });
    assert.deepEqual(service.calls, []);
  });

  test('when the service core is not running, then the window is told so', async () => {
    const { invoke } = setUp(undefined, 'card:settle');
    assert.deepEqual(await invoke(), { ok: false, error: SERVICE_NOT_RUNNING });
  });

  for (const [error, meaning] of [
    [errors.noCard(), /^No card on the reader/],
    [errors.ledgerUnavailable(), /^The ledger did not answer, so nothing was decided/],
    [errors.movementUnsettled(), /^An earlier movement on this card is still undecided/],
    [errors.invalidApiKey(), /^The ledger does not know the API key in the settings/],
  ] as const) {
    test(`when settling fails with ${error.code}, then the window gets its plain meaning`, async () => {
      const service = new RecordingService();
      service.fail = error;
      const { invoke } = setUp(service, 'card:settle');
      const answer = (await invoke()) as { ok: boolean; error: string };
      assert.equal(answer.ok, false, JSON.stringify(answer));
      assert.match(answer.error, meaning);
    });
  }

  test('when settling fails with a bug, then the window gets no detail and the log gets it', async () => {
    const service = new RecordingService();
    service.fail = new Error('secret detail');
    const { invoke, logged } = setUp(service, 'card:settle');
    assert.deepEqual(await invoke(), {
      ok: false,
      error: 'Unexpected error; the details are in the log.',
    });
    assert.match(logged.join('\n'), /card:settle: Error: secret detail/);
  });
});
