import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LOG_FILE, openAppLog } from '../../../main/app-log.ts';

// The tray app's log file, written by electron-log's file transport as the app writes it.

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
const newFolder = () => {
  const folder = mkdtempSync(join(tmpdir(), 'cww-logs-'));
  folders.push(folder);
  return folder;
};

describe('the tray log file', () => {
  test('when the app logs, then the file has the headless format, without the keys, and the echo gets the same lines', () => {
    const folder = newFolder();
    const echoed: string[] = [];
    const key = 'cww_abcdefghijklmnopqrstuvwxyz012345';
    const { log, file } = openAppLog(folder, {
      echo: (line) => echoed.push(line),
      secrets: () => [key],
    });
    log.info('service listening on http://127.0.0.1:4178');
    log.error(`a call with ${key} failed`);
    assert.equal(file, join(folder, LOG_FILE));
    const text = readFileSync(file, 'utf8');
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 2, text);
    assert.match(
      lines[0] ?? '',
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info service listening on http:\/\/127\.0\.0\.1:4178$/,
    );
    assert.match(lines[1] ?? '', / error a call with \[redacted\] failed$/);
    assert.ok(!text.includes(key));
    assert.deepEqual(echoed.join(''), text.replace(/\r\n/g, '\n'));
  });

  test('when the file grows past its size, then it is rotated, and only the newest files are kept', () => {
    const folder = newFolder();
    const { log } = openAppLog(folder, { maxBytes: 2_000, keep: 3 });
    for (let i = 0; i < 200; i += 1) log.info(`line ${i} ${'x'.repeat(60)}`);
    const files = readdirSync(folder).sort();
    assert.deepEqual(files, [
      'card-wallet-worker.1.log',
      'card-wallet-worker.2.log',
      'card-wallet-worker.3.log',
      'card-wallet-worker.log',
    ]);
    const newest = readFileSync(join(folder, LOG_FILE), 'utf8');
    assert.match(newest, /line 199 /);
    const previous = readFileSync(join(folder, 'card-wallet-worker.1.log'), 'utf8');
    const last = Number(/line (\d+) x+\n$/.exec(previous)?.[1]);
    const first = Number(/^\S+ info line (\d+) /.exec(newest)?.[1]);
    assert.equal(first, last + 1, 'nothing lost between the rotated file and the current one');
  });
});
