import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { createIpc, isPageUrl, senderIsWindow } from '../../../main/ipc.ts';
import { emptySnapshot } from '../../../main/status-model.ts';
import {
  chromiumFileUrl,
  FakeFrame,
  FakeIpcMain,
  FakeWebContents,
} from '../../support/electron-mock.ts';

const PAGE_FILE = '/app/renderer/index.html';
const PAGE = 'file:///app/renderer/index.html';

function setUp(pageFile = PAGE_FILE) {
  const ipcMain = new FakeIpcMain();
  const ours = new FakeWebContents(new FakeFrame(chromiumFileUrl(pageFile)));
  const logged: string[] = [];
  const ipc = createIpc(
    ipcMain,
    senderIsWindow(() => ours as unknown as WebContents, pageFile),
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

  for (const installDir of ['/opt/Card Wallet [1]', '/home/zoë/Apps/#till']) {
    test(`when the app is installed in ${installDir}, then our window's page (an encoded URL) is still ours`, async () => {
      const { ipcMain, ours, from } = setUp(`${installDir}/resources/app/renderer/index.html`);
      const answer = await ipcMain.invoke('status:get', from(ours, ours.mainFrame));
      assert.deepEqual(answer, emptySnapshot());
    });
  }

  test('when a URL is compared with our page, then it is by file path: other files, queries and other schemes are not ours', () => {
    assert.equal(isPageUrl('file:///app/renderer/index.html#top', PAGE_FILE, 'linux'), true);
    assert.equal(isPageUrl('file:///app/renderer/other.html', PAGE_FILE, 'linux'), false);
    assert.equal(isPageUrl('file:///app/renderer/index.html?x=1', PAGE_FILE, 'linux'), false);
    assert.equal(isPageUrl('https://app/renderer/index.html', PAGE_FILE, 'linux'), false);
    assert.equal(isPageUrl('not a url', PAGE_FILE, 'linux'), false);
    assert.equal(
      isPageUrl(
        'file:///C:/Program%20Files/Card%20Wallet%20%5B1%5D/resources/app/renderer/index.html',
        'c:\\Program Files\\Card Wallet [1]\\resources\\app\\renderer\\index.html',
        'win32',
      ),
      true,
    );
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
