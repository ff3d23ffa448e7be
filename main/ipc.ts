import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import type { InvokeChannel, InvokeContract, PushChannel, PushContract } from './ipc-contract.ts';

type Handler<C extends InvokeChannel> = (
  ...args: Parameters<InvokeContract[C]>
) => ReturnType<InvokeContract[C]> | Promise<ReturnType<InvokeContract[C]>>;

/** Decides whether an IPC message comes from our window, showing our page, in its main frame. */
export type SenderCheck = (event: IpcMainInvokeEvent) => boolean;

/**
 * The only module that touches ipcMain. Every handler first checks the sender; a message from
 * any other webContents or frame (an injected iframe, a navigated page) is dropped: the invoke
 * is rejected and the handler never runs.
 */
export function createIpc(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  isOurs: SenderCheck,
  log: (line: string) => void,
) {
  const channels = new Set<InvokeChannel>();
  return {
    handle<C extends InvokeChannel>(channel: C, handler: Handler<C>): void {
      channels.add(channel);
      ipcMain.handle(channel, (event, ...args) => {
        if (!isOurs(event)) {
          log(
            `ipc: dropped ${channel} from an untrusted sender (${event.senderFrame?.url ?? 'no frame'})`,
          );
          throw new Error('untrusted sender');
        }
        return handler(...(args as Parameters<InvokeContract[C]>));
      });
    },
    push<C extends PushChannel>(
      target: Pick<WebContents, 'send' | 'isDestroyed'>,
      channel: C,
      ...args: Parameters<PushContract[C]>
    ): void {
      if (!target.isDestroyed()) target.send(channel, ...args);
    },
    dispose(): void {
      for (const channel of channels) ipcMain.removeHandler(channel);
      channels.clear();
    },
  };
}

/**
 * Whether `url` (as Chromium reports it: percent-encoded, e.g. `%5B` for `[` or `%20` for a
 * space) shows `pageFile`. Compared as file paths, not URL text: Node's pathToFileURL and
 * Chromium encode different characters, so an install path with `[`, `]`, `#` or non-ASCII
 * letters would otherwise never match and the window would get no answers.
 */
export function isPageUrl(url: string, pageFile: string, platform = process.platform): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'file:' || parsed.search !== '' || parsed.host !== '') return false;
  parsed.hash = '';
  let path: string;
  try {
    path = fileURLToPath(parsed, { windows: platform === 'win32' });
  } catch {
    return false;
  }
  // Windows paths are case-insensitive (C:\ vs c:\ from different sources).
  const same = (a: string, b: string) =>
    platform === 'win32' ? a.toLowerCase() === b.toLowerCase() : a === b;
  return same(path, platform === 'win32' ? pageFile : resolve(pageFile));
}

/** Our window's main frame, showing our page (renderer/index.html). */
export function senderIsWindow(
  getContents: () => WebContents | undefined,
  pageFile: string,
): SenderCheck {
  return (event) => {
    const contents = getContents();
    if (!contents || event.sender !== contents) return false;
    const frame = event.senderFrame;
    return frame !== null && frame === contents.mainFrame && isPageUrl(frame.url, pageFile);
  };
}
