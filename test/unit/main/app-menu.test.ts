import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { installedAppMenu } from '../../../main/app-menu.ts';

describe('the installed app menu', () => {
  test('when installed on Windows or Linux, then there is no menu (no DevTools, no menu bar)', () => {
    assert.equal(installedAppMenu('win32'), null);
    assert.equal(installedAppMenu('linux'), null);
  });

  test('when installed on macOS, then only the app menu and Edit (copy and paste in the settings), no View or DevTools', () => {
    assert.deepEqual(
      installedAppMenu('darwin')?.map((item) => item.role),
      ['appMenu', 'editMenu'],
    );
  });
});
