import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { createIpc, senderIsWindow } from '../../../main/ipc.ts';
import { emptySnapshot } from '../../../main/status-model.ts';
import { FakeFrame, FakeIpcMain, FakeWebContents } from '../../support/electron-mock.ts';

const PAGE = 'file:///app/renderer/index.html';

function setUp() {
  const ipcMain = new FakeIpcMain();
  const ours = new FakeWebContents(new FakeFrame(PAGE));
  const logged: string[] = [];
  const ipc = createIpc(
    ipcMain,
    senderIsWindow(() => ours as unknown as WebContents, PAGE),
    (line) => logged.push(line),
  );
  let calls = 0;
  ipc.handle('status:get', () => {
    calls += 1;
    return emptySnapshot();
  });
  const from = (sender: FakeWebContents, frame: FakeFrame | null): Partial<IpcMainInvokeEvent> =>
    ({ sender, senderFrame: frame }) as unknown as Partial<IpcMainInvokeEvent>;
  return { ipcMain, ours, logged, ipc, from, calls: () => calls };
}

describe('IPC', () => {
  test('when our window asks from its main frame on our page, then the handler answers', async () => {
    const { ipcMain, ours, from } = setUp();
    const answer = await ipcMain.invoke('status:get', from(ours, ours.mainFrame));
    assert.deepEqual(answer, emptySnapshot());
  });

  for (const [what, make] of [
    [
      'another window',
      (ours: FakeWebContents) => ({
        sender: new FakeWebContents(new FakeFrame(PAGE)),
        frame: ours.mainFrame,
      }),
    ],
    [
      'a subframe of our window',
      (ours: FakeWebContents) => ({ sender: ours, frame: new FakeFrame(PAGE) }),
    ],
    [
      'our window after navigating away',
      (ours: FakeWebContents) => {
        ours.mainFrame.url = 'https://evil.example/';
        return { sender: ours, frame: ours.mainFrame };
      },
    ],
    ['a sender without a frame', (ours: FakeWebContents) => ({ sender: ours, frame: null })],
  ] as const) {
    test(`when ${what} sends, then the message is dropped and the handler never runs`, async () => {
      const { ipcMain, ours, from, logged, calls } = setUp();
      const { sender, frame } = make(ours);
      await assert.rejects(ipcMain.invoke('status:get', from(sender, frame)), /untrusted sender/);
      assert.equal(calls(), 0);
      assert.match(logged.join('\n'), /dropped status:get/);
    });
  }

  test('when main pushes to a destroyed window, then nothing is sent', () => {
    const { ipc, ours } = setUp();
    ipc.push(ours as unknown as WebContents, 'status:changed', emptySnapshot());
    ours.destroyed = true;
    ipc.push(ours as unknown as WebContents, 'status:changed', emptySnapshot());
    assert.equal(ours.sent.length, 1);
  });

  test('when disposed, then every handler is removed', () => {
    const { ipc, ipcMain } = setUp();
    ipc.dispose();
    assert.equal(ipcMain.handlers.size, 0);
  });
});
