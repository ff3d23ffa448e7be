import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import type { App } from 'electron';
import { watchProcesses } from '../../../main/process-watch.ts';
import type { Notice } from '../../../main/status-model.ts';
import { FakeApp, FakeFrame, FakeWebContents } from '../../support/electron-mock.ts';

// What dies outside the service core is logged, shown, and (the window's page) reloaded.

function watched() {
  const app = new FakeApp();
  const processEvents = new EventEmitter();
  const contents = new FakeWebContents(new FakeFrame('file:///app/renderer/index.html'));
  const logged: string[] = [];
  const notices: Notice[] = [];
  watchProcesses(app as unknown as App, processEvents as unknown as NodeJS.Process, {
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (line) => logged.push(line),
    },
    notice: (notice) => notices.push(notice),
    windowContents: () => contents,
    hostServiceName: 'Card Wallet Worker PC/SC',
  });
  return { app, processEvents, contents, logged, notices };
}

describe('processes that die', () => {
  test("when the window's page dies, then it is logged, said in a banner, and the page is reloaded", () => {
    const { app, contents, logged, notices } = watched();
    app.emit('render-process-gone', {}, contents, { reason: 'crashed', exitCode: 11 });
    assert.equal(contents.reloads, 1);
    assert.match(
      logged[0] ?? '',
      /render process gone \(crashed, exit code 11\): the status window/,
    );
    assert.equal(notices[0]?.title, 'The window stopped and was reloaded');
    assert.equal(notices[0]?.action, 'open-log-folder');
  });

  test('when another page dies or the window closes cleanly, then nothing is reloaded', () => {
    const { app, contents, notices } = watched();
    const other = new FakeWebContents(new FakeFrame('about:blank'));
    app.emit('render-process-gone', {}, other, { reason: 'crashed', exitCode: 1 });
    app.emit('render-process-gone', {}, contents, { reason: 'clean-exit', exitCode: 0 });
    assert.equal(contents.reloads, 0);
    assert.deepEqual(notices, []);
  });

  test('when a child process dies (the PC/SC host, the GPU), then it is logged and shown; a clean exit, or the host its supervisor killed (it says why itself), is not shown', () => {
    const { app, logged, notices } = watched();
    const host = 'Card Wallet Worker PC/SC';
    app.emit(
      'child-process-gone',
      {},
      { type: 'Utility', reason: 'crashed', exitCode: 3, serviceName: host },
    );
    app.emit('child-process-gone', {}, { type: 'GPU', reason: 'oom', exitCode: 1 });
    app.emit(
      'child-process-gone',
      {},
      { type: 'Utility', reason: 'killed', exitCode: 15, serviceName: host },
    );
    app.emit(
      'child-process-gone',
      {},
      { type: 'Utility', reason: 'clean-exit', exitCode: 0, name: 'x' },
    );
    assert.equal(logged.length, 3, logged.join('\n'));
    assert.deepEqual(
      notices.map((notice) => notice.title),
      ['The reader connection stopped and was restarted', 'A part of the app stopped (GPU)'],
    );
  });

  test('when an exception or a rejection is not caught in main, then it is logged with its stack and shown, and main goes on', () => {
    const { processEvents, logged, notices } = watched();
    processEvents.emit('uncaughtException', new Error('boom'));
    processEvents.emit('unhandledRejection', new Error('later'));
    assert.match(logged[0] ?? '', /uncaught exception: Error: boom\n\s+at /);
    assert.match(logged[1] ?? '', /unhandled rejection: Error: later/);
    assert.equal(notices.at(-1)?.title, 'An unexpected error happened');
    assert.match(
      notices.at(-1)?.text ?? '',
      /^later\. The app keeps running; the details are in the log/,
    );
  });
});
