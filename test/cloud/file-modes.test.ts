/**
 * The ledger's PGlite folder holds every balance and card account: it and everything in it are
 * private to their owner (folders 0700, files 0600), whether the ledger made the folder or was
 * given one written before (PGlite writes a new database's files 0666 and folders 0755). So is
 * the worker's data folder in standalone mode (its key, journal, simulator cards, and the
 * embedded ledger's folder).
 */
import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { LOCK_FILE } from '../../cloud/db/pglite-database.ts';
import { applySeed } from '../../cloud/seed.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { startWorkerProcess } from '../support/worker-process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'cww-file-modes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every entry under `root` whose mode is not 0700 (folders) or 0600 (files), with its mode. */
function notPrivate(root: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      const mode = statSync(child).mode & 0o777;
      const wanted = entry.isDirectory() ? 0o700 : 0o600;
      if (mode !== wanted) found.push(`${child.slice(root.length)} ${mode.toString(8)}`);
      if (entry.isDirectory()) walk(child);
    }
  };
  walk(root);
  return found;
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Writes through the ledger: a shop, a recharge and its post (new relation and WAL pages). */
async function useLedger(folder: string): Promise<void> {
  const db = await openDatabase(folder);
  try {
    assert.equal(modeOf(folder), '700', 'the open folder is private');
    assert.equal(modeOf(join(folder, LOCK_FILE)), '600', 'the lock file is private');
    const seeded = await applySeed(db, {
      customers: [{ name: 'Modes', credits: 100, creditCost: '0.50', keys: [] }],
    });
    const customerId = seeded.customers[0]?.customerId ?? '';
    const ledger = new Ledger(db);
    const id = crypto.randomUUID();
    await ledger.createMovement(customerId, {
      id,
      kind: 'recharge',
      cardId: '04A1B2C3',
      credits: 5,
    });
    await ledger.postMovement(customerId, id);
    await db.exec('CHECKPOINT');
  } finally {
    await db.close();
  }
}

test('when the ledger creates a new PGlite folder, then it and everything in it are 0700/0600, while open and after close', async () => {
  const folder = join(scratch, 'new', 'ledger');
  await useLedger(folder);
  assert.equal(modeOf(folder), '700');
  assert.deepEqual(notPrivate(folder), []);
});

test('when the ledger is given a folder whose files are world-writable, then it makes them private on open', async () => {
  const folder = await freshPgliteFolder();
  try {
    const loosen = (path: string) => {
      for (const entry of readdirSync(path, { withFileTypes: true })) {
        const child = join(path, entry.name);
        chmodSync(child, entry.isDirectory() ? 0o755 : 0o666);
        if (entry.isDirectory()) loosen(child);
      }
    };
    chmodSync(folder, 0o755);
    loosen(folder);
    assert.notDeepEqual(notPrivate(folder), [], 'the folder starts world-writable');
    await useLedger(folder);
    assert.equal(modeOf(folder), '700');
    assert.deepEqual(notPrivate(folder), []);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('when the worker runs in standalone mode and moves credits, then its data folder and everything in it are 0700/0600', async () => {
  const dataDir = join(scratch, 'worker');
  // The embedded ledger's folder from the test template: no initdb in this test's time.
  const template = await freshPgliteFolder();
  cpSync(template, join(dataDir, 'ledger'), { recursive: true });
  rmSync(template, { recursive: true, force: true });
  const apiKey = 'file-modes-test-key-0123456789';
  const worker = await startWorkerProcess(
    ['--port', '0', '--data-dir', dataDir, '--simulator', '--api-key', apiKey],
    { PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' },
  );
  try {
    const post = async (path: string, body: unknown) => {
      const answer = await fetch(`${worker.url}${path}`, {
        method: 'POST',
        headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await answer.text();
      assert.equal(answer.status, 200, `${path}: ${answer.status} ${text}`);
    };
    await post('/simulator/place', { credits: 50 });
    await post('/writecard', { credits: 10 });
  } finally {
    assert.equal(await worker.stop(), 0, worker.stderr());
  }
  assert.deepEqual(notPrivate(dataDir), []);
  assert.equal(modeOf(dataDir), '700');
});
