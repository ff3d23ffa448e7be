import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { NodeHttpExecutor } from 'builder-util/out/nodeHttpExecutor.js';
import {
  configureRequestOptions,
  configureRequestUrl,
  type DownloadOptions,
} from 'builder-util-runtime';
import { AppImageUpdater } from 'electron-updater';
import type { InstallPolicy } from '../../../main/install-window.ts';
import {
  updateChecker,
  type UpdateCheckerOptions,
  type UpdateStatus,
  type UpdaterLike,
} from '../../../main/updates.ts';
import { silentLogger } from '../../../service/logger.ts';
import { FakeApp, installFakeElectron } from '../../support/electron-mock.ts';

// Updates with electron-updater's own updater (the AppImage one: the one that runs on this OS)
// against a feed this test serves, as electron-builder publishes it to a generic server:
// latest-linux.yml and the file it names, with its SHA-512.

const work = mkdtempSync(join(tmpdir(), 'cww-updates-'));
// BaseUpdater.quitAndInstall emits Electron's own autoUpdater 'before-quit-for-update'.
installFakeElectron(new FakeApp('linux'));
/** The new AppImage: a program that says it ran (electron-updater starts it after the move). */
const started = join(work, 'new-appimage-started');
const release = Buffer.from(
  `#!/bin/sh\necho "$0" > '${started}'\n# card-wallet-worker 0.2.0 ${'x'.repeat(4096)}\n`,
);
const sha512 = (bytes: Buffer) => createHash('sha512').update(bytes).digest('base64');
/** What the feed serves: path -> body. */
let feed: Record<string, Buffer | string> = {};
let server: Server;
let feedUrl: string;

function latest(version: string, bytes: Buffer, file = `card-wallet-worker-${version}.AppImage`) {
  return [
    `version: ${version}`,
    'files:',
    `  - url: ${file}`,
    `    sha512: ${sha512(bytes)}`,
    `    size: ${bytes.length}`,
    `path: ${file}`,
    `sha512: ${sha512(bytes)}`,
    "releaseDate: '2025-03-01T10:00:00.000Z'",
    '',
  ].join('\n');
}

before(async () => {
  server = createServer((request, response) => {
    const body = feed[(request.url ?? '/').split('?')[0]!.slice(1)];
    if (body === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  // The installed AppImage (the updater needs its path) and app-update.yml as electron-builder
  // writes it into the app's resources.
  process.env.APPIMAGE = join(work, 'card-wallet-worker-0.1.0.AppImage');
  writeFileSync(process.env.APPIMAGE, 'the installed app');
  writeFileSync(
    join(work, 'app-update.yml'),
    `provider: generic\nurl: ${feedUrl}\nupdaterCacheDirName: card-wallet-worker-updater\n`,
  );
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});
const checkers: ReturnType<typeof updateChecker>[] = [];
afterEach(() => {
  for (const checker of checkers.splice(0)) checker.stop();
  feed = {};
});

/**
 * electron-updater's HTTP in the app is Electron's net (ElectronHttpExecutor); here Node's,
 * with the same download() it adds (electron-updater's electronHttpExecutor.js, over the base
 * class's doDownload, which checks the SHA-512).
 */
class NodeDownloadExecutor extends NodeHttpExecutor {
  download(url: URL, destination: string, options: DownloadOptions): Promise<string> {
    return options.cancellationToken.createPromise((resolve, reject, onCancel) => {
      const requestOptions = { headers: options.headers ?? undefined };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(
        requestOptions,
        {
          destination,
          options,
          onCancel,
          callback: (error: Error | null) => (error ? reject(error) : resolve(destination)),
          responseHandler: null,
        },
        0,
      );
    });
  }
}

let updaters = 0;

/** What the app did, in order: the service stopped, the new AppImage moved in, the app quit. */
let events: string[] = [];

/** electron-updater's AppImage updater for app 0.1.0, with a download cache of its own. */
function appImageUpdater(): UpdaterLike {
  updaters += 1;
  const updater = new AppImageUpdater(null, {
    version: '0.1.0',
    name: 'card-wallet-worker',
    isPackaged: true,
    appUpdateConfigPath: join(work, 'app-update.yml'),
    userDataPath: join(work, 'user-data'),
    baseCachePath: join(work, `cache-${updaters}`),
    whenReady: () => Promise.resolve(),
    relaunch: () => undefined,
    quit: () => void events.push('app quits'),
    onQuit: () => undefined,
  });
  Object.assign(updater, { httpExecutor: new NodeDownloadExecutor() });
  // A full download; the differential one needs the installed AppImage's block map.
  updater.disableDifferentialDownload = true;
  return updater as unknown as UpdaterLike;
}

function checker(
  url: string | null,
  createUpdater = appImageUpdater,
  more: Partial<UpdateCheckerOptions> = {},
) {
  const seen: UpdateStatus[] = [];
  let notify = () => {};
  const started = updateChecker({
    createUpdater,
    feedUrl: url,
    log: silentLogger,
    onStatus: (status) => {
      seen.push(status);
      notify();
    },
    stopService: async () => void events.push('service stopped'),
    resumeService: async () => void events.push('service started again'),
    onAppImageMoved: (path) => events.push(`new AppImage at ${path}`),
    ...more,
  });
  checkers.push(started);
  /** Resolves with the first status that matches (no sleeping). */
  const reaches = (wanted: UpdateStatus['state'][]) =>
    new Promise<UpdateStatus>((resolve) => {
      const check = () => {
        const found = seen.find((status) => wanted.includes(status.state));
        if (found) resolve(found);
      };
      notify = check;
      check();
    });
  return { started, seen, reaches };
}

describe('updates from a feed', () => {
  test('when no feed is set, then updates are off and no updater is even made', () => {
    let made = 0;
    const { started } = checker(null, () => {
      made += 1;
      return appImageUpdater();
    });
    started.start();
    assert.deepEqual(started.status, { state: 'off' });
    assert.equal(made, 0);
  });

  test("when the feed has a newer version, then it is downloaded, verified and ready to install on the operator's word", async () => {
    feed = {
      'latest-linux.yml': latest('0.2.0', release),
      'card-wallet-worker-0.2.0.AppImage': release,
    };
    const { started, reaches, seen } = checker(feedUrl);
    started.start();
    const ready = await reaches(['ready', 'failed']);
    assert.deepEqual(
      ready,
      { state: 'ready', version: '0.2.0', installs: null },
      JSON.stringify(seen),
    );
    assert.ok(seen.some((status) => status.state === 'downloading'));
    const downloaded = readFileSync(
      join(
        work,
        `cache-${updaters}`,
        'card-wallet-worker-updater',
        'pending',
        'card-wallet-worker-0.2.0.AppImage',
      ),
    );
    assert.ok(downloaded.equals(release));
  });

  test("when the file does not match the feed's SHA-512, then the update fails and nothing is ready to install", async () => {
    feed = {
      'latest-linux.yml': latest('0.3.0', release),
      'card-wallet-worker-0.3.0.AppImage': Buffer.concat([release, Buffer.from('tampered')]),
    };
    const { started, reaches } = checker(feedUrl);
    started.start();
    const failed = await reaches(['ready', 'failed']);
    assert.equal(failed.state, 'failed');
    assert.match((failed as { message: string }).message, /sha512|checksum|size/i);
    assert.equal(await started.install(), false);
  });

  test('when the feed has this version, then it is up to date; when it cannot be reached, the check fails and says why', async () => {
    feed = { 'latest-linux.yml': latest('0.1.0', release) };
    const upToDate = checker(feedUrl);
    upToDate.started.start();
    assert.equal((await upToDate.reaches(['up-to-date', 'failed'])).state, 'up-to-date');

    const unreachable = checker('http://127.0.0.1:9/');
    unreachable.started.start();
    const failed = await unreachable.reaches(['up-to-date', 'failed']);
    assert.equal(failed.state, 'failed');
    assert.match((failed as { message: string }).message, /ECONNREFUSED|connect/);
  });
});

describe('installing an update', () => {
  const readyRelease = async (more: Partial<UpdateCheckerOptions> = {}) => {
    events = [];
    rmSync(started, { force: true });
    process.env.APPIMAGE = join(work, 'card-wallet-worker-0.1.0.AppImage');
    writeFileSync(process.env.APPIMAGE, 'the installed app');
    feed = {
      'latest-linux.yml': latest('0.2.0', release),
      'card-wallet-worker-0.2.0.AppImage': release,
    };
    const made = checker(feedUrl, appImageUpdater, more);
    made.started.start();
    assert.equal((await made.reaches(['ready', 'failed'])).state, 'ready');
    return made;
  };

  test('when the operator installs, then the service has stopped before the new AppImage moves in and starts, and the app quits after', async () => {
    let finishStop!: () => void;
    const { started: updates } = await readyRelease({
      // The service takes its time (a card operation finishing, the ledger closing).
      stopService: () =>
        new Promise<void>((resolve) => {
          events.push('service stopping');
          finishStop = () => {
            events.push('service stopped');
            resolve();
          };
        }),
    });
    const installing = updates.install();
    assert.deepEqual(events, ['service stopping'], 'nothing installs while the service stops');
    assert.equal(updates.status.state, 'installing');
    finishStop();
    assert.equal(await installing, true);
    await new Promise((resolve) => setImmediate(resolve));
    const moved = join(work, 'card-wallet-worker-0.2.0.AppImage');
    assert.deepEqual(events, [
      'service stopping',
      'service stopped',
      `new AppImage at ${moved}`,
      'app quits',
    ]);
    assert.ok(!existsSync(join(work, 'card-wallet-worker-0.1.0.AppImage')), 'the old one is gone');
    await waitForFile(started);
    assert.equal(readFileSync(started, 'utf8').trim(), moved);
  });

  test('when the installer cannot start (the installed AppImage is gone), then the service starts again and the update stays ready', async () => {
    const { started: updates } = await readyRelease();
    rmSync(process.env.APPIMAGE as string);
    assert.equal(await updates.install(), false);
    assert.deepEqual(events, ['service stopped', 'service started again']);
    assert.deepEqual(updates.status, { state: 'ready', version: '0.2.0', installs: null });
  });

  test('when this copy cannot replace its own files (installed for all users), then no update is even looked for, and the window says why', async () => {
    let made = 0;
    const { started: updates } = checker(
      feedUrl,
      () => {
        made += 1;
        return appImageUpdater();
      },
      { cannotInstall: () => 'installed for all users: ask for an administrator' },
    );
    await updates.checkNow();
    assert.deepEqual(updates.status, {
      state: 'unsupported',
      message: 'installed for all users: ask for an administrator',
    });
    assert.equal(made, 0);
  });
});

/** An updater that has a download ready at once (for the shop's install times). */
class ReadyUpdater extends EventEmitter {
  autoDownload = false;
  autoInstallOnAppQuit = true;
  autoRunAppAfterInstall = false;
  logger = null;
  installs = 0;
  setFeedURL(): void {}
  async checkForUpdates() {
    this.emit('update-downloaded', { version: '0.2.0' });
    return { downloadPromise: Promise.resolve() };
  }
  quitAndInstall(): void {
    this.installs += 1;
  }
}

describe('the time the shop chose for installing', () => {
  const minutes = (n: number) => n * 60_000;
  async function readyAt(
    policy: InstallPolicy,
    activity: { busy: boolean; lastAt: number },
    at: Date,
  ) {
    const updater = new ReadyUpdater();
    const { started: updates } = checker(feedUrl, () => updater as unknown as UpdaterLike, {
      policy,
      now: () => at,
      activity: { busy: () => activity.busy, lastActivityAt: () => activity.lastAt },
    });
    await updates.checkNow();
    return { updates, updater };
  }

  test('when idle-time install is chosen, then a ready update installs once the till has been idle that long, never while a card operation runs', async () => {
    const now = new Date('2025-03-01T14:00:00');
    const activity = { busy: false, lastAt: now.getTime() - minutes(29) };
    const { updates, updater } = await readyAt({ when: 'idle', idleMinutes: 30 }, activity, now);
    assert.deepEqual(updates.status, {
      state: 'ready',
      version: '0.2.0',
      installs: 'when the till has been idle for 30 minutes',
    });
    updates.installIfDue();
    assert.equal(updater.installs, 0, 'idle for 29 minutes only');
    activity.lastAt = now.getTime() - minutes(31);
    activity.busy = true;
    updates.installIfDue();
    assert.equal(updater.installs, 0, 'a card operation runs');
    activity.busy = false;
    updates.installIfDue();
    await waitFor(() => updater.installs === 1);
  });

  test('when a set hour is chosen, then it installs in that hour once no request came for two minutes, and not in another hour', async () => {
    const activity = { busy: false, lastAt: new Date('2025-03-01T02:00:00').getTime() };
    const at = (time: string) => new Date(`2025-03-01T${time}`);
    const early = await readyAt({ when: 'hour', hour: 3 }, activity, at('02:59:00'));
    early.updates.installIfDue();
    assert.equal(early.updater.installs, 0, 'before the hour');
    const mid = await readyAt(
      { when: 'hour', hour: 3 },
      { ...activity, lastAt: at('03:09:00').getTime() },
      at('03:10:00'),
    );
    mid.updates.installIfDue();
    assert.equal(mid.updater.installs, 0, 'a sale a minute ago');
    const quiet = await readyAt({ when: 'hour', hour: 3 }, activity, at('03:10:00'));
    assert.equal(
      (quiet.updates.status as { installs: string }).installs,
      'at 03:00 when the till is idle',
    );
    quiet.updates.installIfDue();
    await waitFor(() => quiet.updater.installs === 1);
  });

  test("when the operator's word is the policy (the default), then a ready update never installs by itself", async () => {
    const { updates, updater } = await readyAt(
      { when: 'operator' },
      { busy: false, lastAt: 0 },
      new Date('2025-03-01T03:30:00'),
    );
    updates.installIfDue();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(updater.installs, 0);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

async function waitForFile(file: string): Promise<void> {
  while (!existsSync(file) || readFileSync(file, 'utf8') === '')
    await new Promise((resolve) => setTimeout(resolve, 10));
}
