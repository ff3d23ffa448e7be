import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { APP_USER_MODEL_ID, trayIconFile } from '../../../main/app-identity.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const assets = join(root, 'main', 'assets');

describe("the app's identity on Windows", () => {
  test("when the app sets its AppUserModelID, then it is the installer's (electron-builder's appId), so the taskbar groups it with its shortcut", () => {
    const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8'));
    assert.equal(APP_USER_MODEL_ID, config.appId);
  });

  test('when on Windows, then every tray state has an ICO holding 16 to 48 px (100% to 300% scaling); elsewhere a PNG with its @2x', () => {
    for (const state of ['no-reader', 'ready', 'card-present', 'error'] as const) {
      const ico = readFileSync(trayIconFile(assets, state, 'win32'));
      assert.deepEqual([...ico.subarray(0, 4)], [0, 0, 1, 0], `${state}: an ICO header`);
      const sizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => ico[6 + i * 16] || 256);
      assert.deepEqual(sizes, [16, 20, 24, 32, 40, 48], state);
      const png = trayIconFile(assets, state, 'linux');
      assert.ok(existsSync(png) && existsSync(png.replace('.png', '@2x.png')), state);
    }
  });
});
