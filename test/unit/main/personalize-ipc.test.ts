import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { createIpc, senderIsWindow } from '../../../main/ipc.ts';
import {
  SERVICE_NOT_RUNNING,
  setupPersonalizeIpc,
  type CardPersonalization,
} from '../../../main/personalize-ipc.ts';
import { errors } from '../../../service/errors.ts';
import type { PersonalizeAnswer } from '../../../service/wallet/personalize-card.ts';
import {
  chromiumFileUrl,
  FakeFrame,
  FakeIpcMain,
  FakeWebContents,
} from '../../support/electron-mock.ts';

const PAGE_FILE = '/app/renderer/index.html';
const ANSWER: PersonalizeAnswer = { cardId: '04A1B2C3', credits: 12, alreadyPersonalized: false };

/** A service core that counts the personalizations it is asked for; `fail` makes them throw. */
class RecordingService implements CardPersonalization {
  calls = 0;
  fail: unknown;
  async personalizeCard(): Promise<PersonalizeAnswer> {
    this.calls += 1;
    if (this.fail !== undefined) throw this.fail;
    return ANSWER;
  }
}

/** Our window's IPC with the button's handler; `service` undefined: the core is not running. */
function setUp(service: CardPersonalization | undefined) {
  const ipcMain = new FakeIpcMain();
  const ours = new FakeWebContents(new FakeFrame(chromiumFileUrl(PAGE_FILE)));
  const logged: string[] = [];
  const ipc = createIpc(
    ipcMain,
    senderIsWindow(() => ours as unknown as WebContents, PAGE_FILE),
    (line) => logged.push(line),
  );
  setupPersonalizeIpc(
    ipc,
    () => service,
    (line) => logged.push(line),
  );
  const fromOurs = { sender: ours, senderFrame: ours.mainFrame } as unknown as IpcMainInvokeEvent;
  const invoke = (...args: unknown[]) => ipcMain.invoke('card:personalize', fromOurs, ...args);
  return { ipcMain, invoke, logged };
}

describe('personalize IPC', () => {
  test('when our window asks, then the service core personalizes the card once and the answer comes back', async () => {
    const service = new RecordingService();
    const { invoke } = setUp(service);
    assert.deepEqual(await invoke(), { ok: true, card: ANSWER });
    assert.equal(service.calls, 1);
  });

  for (const argument of [{ cardId: '04A1B2C3' }, 'personalize', 0, null]) {
    test(`when the window sends ${JSON.stringify(argument)}, then it is refused and nothing is done`, async () => {
      const service = new RecordingService();
      const { invoke } = setUp(service);
      assert.deepEqual(await invoke(argument), {
        ok: false,
        error: 'Personalizing takes no argument; nothing was done.',
      });
      assert.equal(service.calls, 0);
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
    assert.equal(service.calls, 0);
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
    assert.match(logged.join('\n'), /personalize: Error: secret detail/);
  });
});
