import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import {
  flagValues,
  readAsar,
  readFuses,
  standInElectron,
  standInFpm,
} from '../support/packaging-rig.ts';

// electron-builder run here as `npm run dist` runs it for Linux (the deb target, which builds
// the unpacked app first), on a copy of this project, against a stand-in Electron (the real
// binary cannot be downloaded here) and a stand-in fpm that records what electron-builder asks
// of it. Not built here: the deb file itself (fpm is downloaded from GitHub, Debian has none)
// unless an `fpm` is on PATH, the AppImage (its runtime is downloaded from GitHub), the
// Windows and macOS installers (they build on those systems); their configuration is checked
// against electron-builder's schema, which every build applies to the whole file.

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const electronBuilder = require.resolve('electron-builder/cli.js');
/** electron-builder's engine (app-builder-lib), for what it does itself. */
const builderLib = createRequire(electronBuilder);
/** Its own Electron dependencies for a deb (FpmTarget.getDefaultDepends). */
const defaultDebDepends = (
  builderLib('app-builder-lib/out/targets/FpmTarget.js') as {
    default: { prototype: { getDefaultDepends(target: string): string[] } };
  }
).default.prototype.getDefaultDepends('deb');
/** Its check of the configured icons (iconConverter.convertIcon). */
const { convertIcon } = builderLib('app-builder-lib/out/util/iconConverter.js') as {
  convertIcon(options: {
    sources: string[];
    fallbackSources: string[];
    roots: string[];
    format: 'ico';
    outDir: string;
  }): Promise<{ icons: { file: string; size: number }[] }>;
};

const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8'));
let work: string;
let unpacked: string;
let fpm: { args: string[]; desktopEntry: string | null; real: boolean };
let asar: ReturnType<typeof readAsar>;

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`,
  );
  return result;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), 'cww-packaging-'));
  const project = join(work, 'project');
  // The project as a clone has it (tests, sources, docs included: the build must leave them
  // out), without the build output, installed packages or a lockfile (see below).
  cpSync(root, project, {
    recursive: true,
    filter: (source) =>
      !/^(node_modules|dist|release|test-results|\.git|package-lock\.json)(\/|$)/.test(
        relative(root, source),
      ),
  });
  // node_modules here may itself be a link to a shared install; `npm ls`, which
  // electron-builder asks for the production dependencies when it finds a package-lock.json,
  // reports every package behind a link as missing. Without a lockfile and with this user
  // agent it walks node_modules on disk instead (its "traversal" collector): the same packages.
  symlinkSync(realpathSync(join(root, 'node_modules')), join(project, 'node_modules'));
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: project,
  });
  // `npm run build`'s second step, the embedded ledger's database template, is taken from this
  // tree's build (making one runs PostgreSQL's initdb and every migration: tens of seconds).
  for (const file of ['pglite-template.tar.gz', 'pglite-template.json']) {
    const built = join(root, 'dist', 'cloud', 'db', file);
    assert.ok(existsSync(built), `${built} is missing: run npm run build first`);
    cpSync(built, join(project, 'dist', 'cloud', 'db', file));
  }
  const realFpm = spawnSync('sh', ['-c', 'command -v fpm'], { encoding: 'utf8' }).stdout.trim();
  run(
    process.execPath,
    [
      electronBuilder,
      '--linux',
      'deb',
      '--x64',
      '--publish',
      'never',
      `-c.electronDist=${standInElectron(join(work, 'electron-dist'))}`,
      // The binding stays as npm built it: a rebuild for Electron fetches Electron's headers.
      '-c.npmRebuild=false',
    ],
    {
      cwd: project,
      env: {
        ...process.env,
        npm_config_user_agent: 'traversal',
        npm_execpath: '',
        CUSTOM_FPM_PATH: standInFpm(join(work, 'fpm')),
        FPM_RECORD: join(work, 'fpm.json'),
        REAL_FPM: realFpm,
      },
    },
  );
  unpacked = join(project, 'release', 'linux-unpacked');
  fpm = JSON.parse(readFileSync(join(work, 'fpm.json'), 'utf8'));
  asar = readAsar(join(unpacked, 'resources', 'app.asar'));
});
after(() => work && rmSync(work, { recursive: true, force: true }));

describe('the Linux build (deb target) with a stand-in Electron', () => {
  test('when built, then the app is the asar with our build output, pages, icons, the API document and the database template of the embedded ledger', () => {
    for (const file of [
      'package.json',
      'dist/main/main.js',
      'dist/main/preload.cjs',
      'dist/main/pcsc-host.js',
      'dist/service/worker-service.js',
      // A till's first standalone start copies it instead of running initdb (read from the asar).
      'dist/cloud/db/pglite-template.tar.gz',
      'dist/cloud/db/pglite-template.json',
      'renderer/index.html',
      'main/assets/tray-ready.png',
      'main/assets/tray-ready@2x.png',
      'main/assets/tray-ready.ico',
      'docs/openapi.yaml',
    ])
      assert.ok(asar.files.includes(file), `${file} is missing from app.asar`);
    const packed = JSON.parse(asar.read('package.json'));
    assert.deepEqual(
      {
        name: packed.name,
        version: packed.version,
        main: packed.main,
        author: packed.author,
        homepage: packed.homepage,
        license: packed.license,
        desktopName: packed.desktopName,
      },
      {
        name: 'card-wallet-worker',
        version: packageJson.version,
        main: 'dist/main/main.js',
        author: packageJson.author,
        homepage: packageJson.homepage,
        license: packageJson.license,
        desktopName: 'card-wallet-worker.desktop',
      },
    );
    assert.match(packageJson.author.email, /^[^@\s]+@[^@\s]+$/);
  });

  test('when built, then no test, source map, TypeScript source, installer icon or dev file is in it', () => {
    const ours = asar.files.filter((file) => !file.startsWith('node_modules/'));
    assert.deepEqual(
      ours.filter(
        (file) =>
          !/^(package\.json|docs\/openapi\.yaml|dist\/.*\.(js|cjs)|dist\/cloud\/db\/pglite-template\.(tar\.gz|json)|renderer\/[^/]+|main\/assets\/tray-[a-z-]+((@2x)?\.png|\.ico))$/.test(
            file,
          ),
      ),
      [],
    );
    const devFiles = asar.files.filter(
      (file) =>
        file.startsWith('node_modules/') &&
        (/\/(test|tests|__tests__|spec|examples?|docs)\//.test(file) ||
          /\.(md|markdown|ts|cts|mts|map)$/i.test(file)),
    );
    assert.deepEqual(devFiles, []);
  });

  test('when built, then every production dependency is in it and no development dependency', () => {
    const packages = new Set(
      asar.files.flatMap((file) => {
        const match = /^node_modules\/((@[^/]+\/)?[^/]+)\/package\.json$/.exec(file);
        return match ? [match[1]] : [];
      }),
    );
    const missing = Object.keys(packageJson.dependencies).filter((name) => !packages.has(name));
    assert.deepEqual(missing, [], 'production dependencies missing from app.asar');
    // A development dependency may be packed only because a packed package needs it (ajv).
    const needed = new Set(
      [...packages].flatMap((name) => {
        const manifest = JSON.parse(asar.read(`node_modules/${name}/package.json`));
        return Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies });
      }),
    );
    const dev = Object.keys(packageJson.devDependencies).filter(
      (name) => packages.has(name) && !needed.has(name),
    );
    assert.deepEqual(dev, [], 'development dependencies in app.asar');
  });

  test('when built, then the PC/SC binding is unpacked next to the asar (a .node cannot load from inside it), without its C++ sources', () => {
    const binding = 'node_modules/@pokusew/pcsclite/build/Release/pcsclite.node';
    assert.equal(asar.entry(binding)?.unpacked, true, `${binding} is not marked unpacked`);
    const file = join(unpacked, 'resources', 'app.asar.unpacked', binding);
    assert.deepEqual([...readFileSync(file).subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], 'an ELF');
    const pcsclite = join(
      unpacked,
      'resources',
      'app.asar.unpacked/node_modules/@pokusew/pcsclite',
    );
    assert.deepEqual(
      readdirSync(pcsclite, { recursive: true, encoding: 'utf8' }).filter((name) =>
        /\.(cpp|h|gyp)$|obj\.target/.test(name),
      ),
      [],
    );
  });

  test('when built, then the app carries app-update.yml for electron-updater (its cache folder), and the PC/SC patches are not in it', () => {
    const updateConfig = parse(readFileSync(join(unpacked, 'resources', 'app-update.yml'), 'utf8'));
    assert.equal(updateConfig.provider, 'generic');
    assert.equal(updateConfig.updaterCacheDirName, 'card-wallet-worker-updater');
    assert.ok(
      asar.files.includes('node_modules/electron-updater/package.json') &&
        asar.files.includes('node_modules/electron-log/package.json'),
    );
    assert.deepEqual(
      asar.files.filter((file) => file.startsWith('patches/') || file.startsWith('build/')),
      [],
    );
  });

  test('when built, then the executable has the fuses of electron-builder.yml flipped', () => {
    assert.deepEqual(readFuses(join(unpacked, 'card-wallet-worker')), {
      RunAsNode: '0',
      EnableCookieEncryption: '1',
      EnableNodeOptionsEnvironmentVariable: '0',
      EnableNodeCliInspectArguments: '0',
      EnableEmbeddedAsarIntegrityValidation: '1',
      OnlyLoadAppFromAsar: '1',
      LoadBrowserProcessSpecificV8Snapshot: '0',
      GrantFileProtocolExtraPrivileges: '1',
    });
  });

  test("when the deb is made, then it depends on electron-builder's defaults plus pcscd and libpcsclite1, with maintainer and homepage", () => {
    const depends = flagValues(fpm.args, '-d');
    assert.deepEqual(
      defaultDebDepends.filter((name) => !depends.includes(name)),
      [],
      `electron-builder's default dependencies missing from: ${depends.join(', ')}`,
    );
    assert.deepEqual(
      depends.filter((name) => !defaultDebDepends.includes(name)),
      ['pcscd', 'libpcsclite1'],
    );
    assert.deepEqual(
      {
        name: flagValues(fpm.args, '--name'),
        maintainer: flagValues(fpm.args, '--maintainer'),
        url: flagValues(fpm.args, '--url'),
        license: flagValues(fpm.args, '--license'),
      },
      {
        name: ['card-wallet-worker'],
        maintainer: [config.linux.maintainer],
        url: [packageJson.homepage],
        license: [packageJson.license],
      },
    );
    assert.ok(
      fpm.args.includes(`${unpacked}/=/opt/Card Wallet Worker`),
      'the unpacked app goes to /opt',
    );
  });

  test('when the deb is made, then it installs our icons and a desktop entry that matches the window (StartupWMClass)', () => {
    const icons = fpm.args.filter((arg) => arg.includes('/usr/share/icons/hicolor/'));
    assert.deepEqual(
      icons.map((arg) => arg.slice(arg.indexOf('=') + 1)),
      [16, 32, 48, 64, 128, 256, 512].map(
        (size) => `/usr/share/icons/hicolor/${size}x${size}/apps/card-wallet-worker.png`,
      ),
    );
    assert.ok(
      icons.every((arg) => arg.includes('main/assets/app-icon/')),
      icons.join('\n'),
    );
    assert.match(
      fpm.desktopEntry ?? '',
      /^Exec="\/opt\/Card Wallet Worker\/card-wallet-worker" %U$/m,
    );
    assert.match(fpm.desktopEntry ?? '', /^Icon=card-wallet-worker$/m);
    assert.match(fpm.desktopEntry ?? '', /^StartupWMClass=card-wallet-worker$/m);
  });

  test('when a real fpm is on PATH, then the deb file is built; here it says why not', (context) => {
    const deb = join(unpacked, '..', `card-wallet-worker_${packageJson.version}_amd64.deb`);
    if (!fpm.real || !existsSync(deb)) {
      context.diagnostic(
        'no deb file: fpm is not installed here (electron-builder downloads it from GitHub; Debian has no package). Its arguments were checked above.',
      );
      return;
    }
    const fields = spawnSync('dpkg-deb', ['--field', deb, 'Depends', 'Maintainer'], {
      encoding: 'utf8',
    }).stdout;
    assert.match(fields, /pcscd/);
    assert.match(fields, /libgtk-3-0/);
  });
});

describe('the installers for Windows, macOS and the AppImage (configuration)', () => {
  test('when configured, then NSIS installs per user only (updates need no administrator), with our icon of 256 px and more', async () => {
    assert.deepEqual(config.nsis, {
      oneClick: true,
      perMachine: false,
      runAfterFinish: true,
      include: 'build/installer.nsh',
    });
    // electron-builder's one-click template, per user: it never asks for elevation.
    const nsisTemplates = join(
      builderLib.resolve('app-builder-lib/package.json'),
      '..',
      'templates',
      'nsis',
    );
    assert.match(
      readFileSync(join(nsisTemplates, 'oneClick.nsh'), 'utf8'),
      /!ifdef INSTALL_MODE_PER_ALL_USERS\s+!insertmacro setInstallModePerAllUsers\s+!else\s+!insertmacro setInstallModePerUser/,
    );
    assert.ok(existsSync(join(root, config.nsis.include)), 'the include script exists');
    // electron-builder's own check of a Windows icon (it refuses .ico files under 256 px).
    const result = await convertIcon({
      sources: [config.win.icon],
      fallbackSources: [],
      roots: [root],
      format: 'ico',
      outDir: join(work, 'icon-check'),
    });
    assert.deepEqual(
      result.icons.map((icon) => ({ file: relative(root, icon.file), size: icon.size })),
      [{ file: 'main/assets/app-icon/icon.ico', size: 256 }],
    );
  });

  test('when configured, then macOS gets a dmg to install and the zip MacUpdater downloads', () => {
    assert.deepEqual(config.mac.target, ['dmg', 'zip']);
  });

  test('when configured, then the macOS app has no Dock icon (LSUIElement) and an .icns up to 1024 px', () => {
    assert.equal(config.mac.extendInfo.LSUIElement, true);
    const icns = readFileSync(join(root, config.mac.icon));
    assert.equal(icns.subarray(0, 4).toString('ascii'), 'icns');
    const types: string[] = [];
    for (let at = 8; at < icns.length; at += icns.readUInt32BE(at + 4))
      types.push(icns.subarray(at, at + 4).toString('ascii'));
    assert.deepEqual(types, ['icp4', 'icp5', 'icp6', 'ic07', 'ic08', 'ic09', 'ic10']);
  });

  test('when configured, then the AppImage uses the static runtime (no libfuse2 needed on the till)', () => {
    assert.equal(config.toolsets.appimage, '1.0.3');
    assert.ok(config.linux.target.includes('AppImage'));
  });

  test("when the AppImage starts where unprivileged user namespaces are refused (Ubuntu 24.04's AppArmor), then its AppRun adds --no-sandbox; an update's copy starts nothing", () => {
    // The AppRun this electron-builder writes into the AppImage (the static runtime's).
    const { generateAppRunScript } = builderLib(
      'app-builder-lib/out/targets/appimage/appImageUtil.js',
    ) as { generateAppRunScript(config: Record<string, string>): string };
    const appRun = generateAppRunScript({
      ExecutableName: 'card-wallet-worker',
      DesktopFileName: 'card-wallet-worker.desktop',
      ProductFilename: 'Card Wallet Worker',
      ProductName: 'Card Wallet Worker',
      ResourceName: 'appimagekit-card-wallet-worker',
    });
    assert.match(appRun, /! unshare -Ur true 2>\/dev\/null ; then\s+NO_SANDBOX=\(--no-sandbox\)/);
    // electron-updater runs the new AppImage with APPIMAGE_EXIT_AFTER_INSTALL when it must not
    // start the app; without the trap, AppRun exits.
    assert.match(appRun, /if \[ -z "\$APPIMAGE_EXIT_AFTER_INSTALL" \] ; then\s+trap atexit EXIT/);
  });

  test('when the deb is made, then it carries the AppArmor profile that lets the sandbox run on Ubuntu 24.04 and later', () => {
    const profile = readFileSync(join(unpacked, 'resources', 'apparmor-profile'), 'utf8');
    assert.match(
      profile,
      /profile "card-wallet-worker" "\/opt\/Card Wallet Worker\/card-wallet-worker" flags=\(unconfined\)/,
    );
    assert.match(profile, /^\s*userns,$/m);
    assert.equal(readFileSync(join(unpacked, 'resources', 'package-type'), 'utf8'), 'deb');
  });
});
