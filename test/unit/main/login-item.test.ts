import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { AUTOSTART_FILE, setStartAtLogin, type LoginItemHost } from '../../../main/login-item.ts';
import { FakeApp } from '../../support/electron-mock.ts';

describe('start at login', () => {
  test('when turned on and off on Linux, then an XDG autostart entry is written and removed (Electron does nothing there)', async () => {
    const configHome = await mkdtemp(join(tmpdir(), 'cww-autostart-'));
    try {
      const app = new FakeApp('linux');
      const host: LoginItemHost = {
        platform: 'linux',
        setLoginItemSettings: (settings) => app.setLoginItemSettings(settings),
        executable: '/home/till/Apps/Card Wallet Worker.AppImage',
        configHome,
      };
      await setStartAtLogin(host, true);
      const entry = await readFile(join(configHome, 'autostart', AUTOSTART_FILE), 'utf8');
      assert.match(entry, /^Exec="\/home\/till\/Apps\/Card Wallet Worker\.AppImage" --hidden$/m);
      assert.equal(app.getLoginItemSettings().openAtLogin, false, 'Electron ignores it on Linux');
      await setStartAtLogin(host, false);
      await assert.rejects(readFile(join(configHome, 'autostart', AUTOSTART_FILE)), {
        code: 'ENOENT',
      });
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });

  for (const platform of ['win32', 'darwin'] as const) {
    test(`when turned on on ${platform}, then Electron's login item is set, started hidden`, async () => {
      const app = new FakeApp(platform);
      await setStartAtLogin(
        {
          platform,
          setLoginItemSettings: (settings) => app.setLoginItemSettings(settings),
          executable: 'x',
          configHome: '/nonexistent',
        },
        true,
      );
      assert.equal(app.getLoginItemSettings().openAtLogin, true);
    });
  }
});
