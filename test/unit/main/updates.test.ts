import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { updateChecker, type UpdateStatus, type UpdaterLike } from '../../../main/updates.ts';
import { silentLogger } from '../../../service/logger.ts';

// Updates with electron-updater's own updater (the AppImage one: the one that runs on this OS)
// against a feed this test serves, as electron-builder publishes it to a generic server:
// latest-linux.yml and the file it names, with its SHA-512.

const work = mkdtempSync(join(tmpdir(), 'cww-updates-'));
const release = Buffer.from(`card-wallet-worker 0.2.0 ${'x'.repeat(4096)}`);
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
    quit: () => undefined,
    onQuit: () => undefined,
  });
  Object.assign(updater, { httpExecutor: new NodeDownloadExecutor() });
  // A full download; the differential one needs the installed AppImage's block map.
  updater.disableDifferentialDownload = true;
  return updater as unknown as UpdaterLike;
}

function checker(url: string | null, createUpdater = appImageUpdater) {
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
    assert.deepEqual(ready, { state: 'ready', version: '0.2.0' }, JSON.stringify(seen));
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
    assert.equal(started.install(), false);
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
