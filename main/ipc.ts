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

/** Our window's main frame, showing our page (file:// URL of renderer/index.html). */
export function senderIsWindow(
  getContents: () => WebContents | undefined,
  pageUrl: string,
): SenderCheck {
  return (event) => {
    const contents = getContents();
    if (!contents || event.sender !== contents) return false;
    const frame = event.senderFrame;
    return frame !== null && frame === contents.mainFrame && frame.url === pageUrl;
  };
}
