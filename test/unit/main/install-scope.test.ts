import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { canWriteFolder, updateBlocker } from '../../../main/install-scope.ts';

const folder = mkdtempSync(join(tmpdir(), 'cww-scope-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('whether this copy can update itself without an administrator', () => {
  const host = (platform: NodeJS.Platform, writable: boolean, appImage?: string) => ({
    platform,
    execPath: 'C:\\Program Files\\Card Wallet Worker\\Card Wallet Worker.exe',
    appImage,
    canWrite: () => writable,
  });

  test('when a Windows copy lies in a folder this user cannot write (an install for all users), then updates are refused with the reason', () => {
    assert.match(
      updateBlocker(host('win32', false)) ?? '',
      /installed for all users .*reinstall it for this user only/,
    );
    assert.equal(updateBlocker(host('win32', true)), null, 'an install for this user');
  });

  test('when on Linux, then an AppImage in a folder of its own updates, one in a read-only folder or the deb does not', () => {
    assert.equal(updateBlocker(host('linux', true, '/home/till/Apps/cww-2.0.0.AppImage')), null);
    assert.match(
      updateBlocker(host('linux', false, '/opt/cww-2.0.0.AppImage')) ?? '',
      /not writable/,
    );
    assert.match(updateBlocker(host('linux', true)) ?? '', /apt/);
  });

  test('when the folder is probed, then the probe file is gone afterwards; a missing folder is not writable', () => {
    assert.equal(canWriteFolder(folder), true);
    assert.deepEqual(readdirSync(folder), []);
    assert.equal(canWriteFolder(join(folder, 'missing')), false);
  });
});
