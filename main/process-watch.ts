import type { App, Details, RenderProcessGoneDetails, WebContents } from 'electron';
import type { Logger } from '../service/logger.ts';
import type { Notice } from './status-model.ts';

/** The process events Electron's app emits that are watched here. */
export type WatchedApp = Pick<App, 'on'>;

export interface ProcessWatchOptions {
  log: Logger;
  /** Shows a banner in the window (and keeps it in the snapshot). */
  notice(notice: Notice): void;
  /** The status window's page, if open. */
  windowContents(): Pick<WebContents, 'reload' | 'isDestroyed'> | undefined;
  /** The PC/SC host's serviceName (its own supervisor restarts it; here it is only said). */
  hostServiceName: string;
}

const now = () => new Date().toISOString();

/**
 * What goes wrong outside the service core: the window's page dying (render-process-gone), a
 * child process of Electron dying (child-process-gone: the GPU, a utility process such as the
 * PC/SC host), an exception or a rejection nothing caught in main. Each is logged with its
 * details and shown in the window; a dead page is reloaded. An uncaught error leaves main
 * running, as Electron does after its own error dialog; the service core's state is its own.
 */
export function watchProcesses(
  app: WatchedApp,
  processEvents: Pick<NodeJS.Process, 'on'>,
  options: ProcessWatchOptions,
): void {
  const { log, notice } = options;
  app.on(
    'render-process-gone',
    (_event: unknown, contents: WebContents, details: RenderProcessGoneDetails) => {
      const ours = options.windowContents();
      const isWindow = ours !== undefined && (contents as unknown) === ours;
      log.error(
        `render process gone (${details.reason}, exit code ${details.exitCode})${isWindow ? ': the status window, reloading it' : ''}`,
      );
      if (!isWindow || details.reason === 'clean-exit') return;
      notice({
        id: 'window-gone',
        level: 'warning',
        title: 'The window stopped and was reloaded',
        text: `Its page ended (${details.reason}). The service was not affected. If this repeats, send the log to support.`,
        action: 'open-log-folder',
        at: now(),
      });
      if (!ours.isDestroyed()) ours.reload();
    },
  );
  app.on('child-process-gone', (_event: unknown, details: Details) => {
    if (details.reason === 'clean-exit') return;
    const name = details.serviceName || details.name || details.type;
    log.error(
      `child process gone: ${name} (${details.type}, ${details.reason}, exit code ${details.exitCode})`,
    );
    const host = details.serviceName === options.hostServiceName;
    // Killed by its supervisor for not answering: main/pcsc-host-client.ts said why already.
    if (host && details.reason === 'killed') return;
    notice({
      id: `process-gone:${name}`,
      level: 'warning',
      title: host
        ? 'The reader connection stopped and was restarted'
        : `A part of the app stopped (${name})`,
      text: `It ended (${details.reason}, exit code ${details.exitCode})${host ? '; the reader is looked for again' : ''}. If this repeats, send the log to support.`,
      action: 'open-log-folder',
      at: now(),
    });
  });
  const unexpected = (what: string) => (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    log.error(`${what}: ${text}`);
    notice({
      id: 'unexpected-error',
      level: 'error',
      title: 'An unexpected error happened',
      text: `${error instanceof Error ? error.message : String(error)}. The app keeps running; the details are in the log. Send it to support.`,
      action: 'open-log-folder',
      at: now(),
    });
  };
  processEvents.on('uncaughtException', unexpected('uncaught exception'));
  processEvents.on('unhandledRejection', unexpected('unhandled rejection'));
}
