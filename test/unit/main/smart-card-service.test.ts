import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ELEVATED_SCRIPT,
  elevatedFixCommand,
  fixSmartCardService,
} from '../../../main/smart-card-service.ts';
import { fakeWindowsPowerShell } from '../../support/electron-mock.ts';

// The Smart Card service set to start automatically, asking for an administrator only when the
// operator clicks the fix.

describe('the smart-card service fix', () => {
  test('when clicked on Windows, then one elevated PowerShell sets SCardSvr to automatic and starts it', async () => {
    const ran: { file: string; args: string[] }[] = [];
    const result = await fixSmartCardService('win32', async (file, args) => {
      ran.push({ file, args });
      return '';
    });
    assert.equal(result.ok, true);
    assert.equal(ran.length, 1);
    assert.deepEqual(ran[0], elevatedFixCommand());
    const outer = ran[0]?.args.at(-1) ?? '';
    assert.match(outer, /Start-Process -FilePath powershell\.exe -Verb RunAs/);
    const encoded = /'-EncodedCommand','([A-Za-z0-9+/=]+)'/.exec(outer)?.[1] ?? '';
    assert.equal(Buffer.from(encoded, 'base64').toString('utf16le'), ELEVATED_SCRIPT);
    assert.match(ELEVATED_SCRIPT, /Set-Service -Name SCardSvr -StartupType Automatic/);
    assert.match(ELEVATED_SCRIPT, /Start-Service -Name SCardSvr/);
  });

  test('when the administrator prompt is declined (UAC "No"), then it says nothing was changed, not done', async () => {
    const result = await fixSmartCardService('win32', fakeWindowsPowerShell({ declined: true }));
    assert.equal(result.ok, false, result.message);
    assert.match(result.message, /^Nothing was changed: the administrator prompt was declined/);
  });

  test('when the prompt is accepted, then it is done; when the elevated change fails, then it says so', async () => {
    const done = await fixSmartCardService('win32', fakeWindowsPowerShell({ elevatedExitCode: 0 }));
    assert.equal(done.ok, true);
    const failed = await fixSmartCardService(
      'win32',
      fakeWindowsPowerShell({ elevatedExitCode: 1 }),
    );
    assert.equal(failed.ok, false);
  });

  test('when not on Windows, then nothing is run', async () => {
    let ran = 0;
    const result = await fixSmartCardService('linux', async () => {
      ran += 1;
      return '';
    });
    assert.equal(ran, 0);
    assert.equal(result.ok, false);
  });
});
