import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { openPgliteDatabase } from '../../cloud/db/pglite-database.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { waitUntil, walletBalance } from '../support/card-rig.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { startPcscd, type PcscdRig } from '../support/pcscd.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard, VirtualReader } from '../support/virtual-card.ts';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

// Standalone mode: the worker with its embedded ledger (PGlite in the data folder) in its own
// process, SIGKILLed in the middle of a movement and in the middle of the ledger's or the
// journal's writes, then started again on the same folder with the card still on the reader.
//
// The failure modelled: the process ends at once while the operating system keeps every byte
// it wrote (its cache outlives the process). That is a crash, the task manager, Windows ending
// the session (Electron ends the process right after `session-end`), and the Windows
// installer's Stop-Process during an update. A power cut, which loses what was not synced, is
// test/cloud/pglite-power-cut.test.ts.
//
// Write points are caught from outside, as they happen: a change to PGlite's WAL (the ledger
// committing) or to the journal (movements.jsonl), and the card's own commit (a block write).
let pcscd: PcscdRig;
let reader: VirtualReader;
const folders: string[] = [];
before(async () => {
  pcscd = await startPcscd();
  reader = new VirtualReader((pcscd.readers[0] as { port: number }).port);
});
after(async () => {
  await reader.remove();
  await pcscd.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface Standalone {
  worker: WorkerProcess;
  /** The embedded ledger's URL (in the worker's process). */
  ledgerUrl: string;
}

async function startStandalone(dataDir: string): Promise<Standalone> {
  const worker = await startWorkerProcess(
    [
      '--port',
      '0',
      '--api-key',
      TEST_API_KEY,
      '--data-dir',
      dataDir,
      '--reader',
      (pcscd.readers[0] as { name: string }).name,
    ],
    pcscd.env,
  );
  let ledgerUrl = '';
  await waitUntil(
    () => {
      ledgerUrl = /embedded ledger on (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.stderr())?.[1] ?? '';
      return ledgerUrl !== '';
    },
    30_000,
    'the embedded ledger',
  );
  return { worker, ledgerUrl };
}

/** Puts the card on the reader and waits until the worker has read its UID. */
async function present(card: VirtualCard): Promise<void> {
  const seen = card.failAt('getUid', 'answer');
  await reader.insert(card);
  await seen.triggered;
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Calls `kill` at the first change in `folder` (to `file`, if given). */
function killOnWrite(folder: string, kill: () => void, file?: string): FSWatcher {
  const watcher = watch(folder, (_event, name) => {
    if (file !== undefined && name !== file) return;
    watcher.close();
    kill();
  });
  return watcher;
}

type KillPoint = {
  name: string;
  /** Whether the card holds the movement afterwards (then it is posted, else voided). */
  landed: boolean;
  arm: (context: { card: VirtualCard; dataDir: string; kill: () => void }) => void;
};

const wal = (dataDir: string) => join(dataDir, 'ledger', 'pg_wal');

const killPoints: KillPoint[] = [
  {
    name: 'the journal is being written, before the ledger is asked',
    landed: false,
    arm: ({ dataDir, kill }) => void killOnWrite(dataDir, kill, 'movements.jsonl'),
  },
  {
    name: 'PGlite is writing the pending movement, before the card is written',
    landed: false,
    arm: ({ dataDir, kill }) => void killOnWrite(wal(dataDir), kill),
  },
  {
    name: 'the card was written, before the worker heard',
    landed: true,
    arm: ({ card, kill }) => {
      const off = card.onApdu((event) => {
        if (event.command !== 'write') return 'answer';
        off();
        kill();
        return 'answer';
      });
    },
  },
  {
    name: 'PGlite is writing the post, after the card was written',
    landed: true,
    arm: ({ card, dataDir, kill }) => {
      const off = card.onApdu((event) => {
        if (event.command !== 'write') return 'answer';
        off();
        killOnWrite(wal(dataDir), kill);
        return 'answer';
      });
    },
  },
];

const cases = [
  ...killPoints.map((point) => ({ kind: 'recharge' as const, point })),
  // A payout of a card recharged before, at the two points where the ledger and the card part.
  ...[killPoints[1], killPoints[2]].map((point) => ({ kind: 'discharge' as const, point })),
];

const post = (worker: WorkerProcess, path: string, body?: string) =>
  httpRequest(`${worker.url}${path}`, {
    method: 'POST',
    headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
    body,
  });

describe('standalone: the worker and its in-process PGlite ledger SIGKILLed, then restarted', () => {
  cases.forEach(({ kind, point }, index) => {
    const killed = point as KillPoint;
    test(`when a ${kind} is killed while ${killed.name}, then after the restart nothing is lost: the card and the ledger agree`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'cww-standalone-crash-'));
      folders.push(dataDir);
      const card = new VirtualCard({
        uid: Buffer.from([0x04, 0x5a, kind === 'recharge' ? 1 : 2, index]),
        blocks: { 4: encodeValueBlock(0, 1) },
      });
      const running = await startStandalone(dataDir);
      let restarted: Standalone | undefined;
      try {
        await present(card);
        if (kind === 'discharge') {
          const sold = await post(running.worker, '/writecard', '{"credits":30}');
          assert.equal(sold.status, 200, shown(sold));
        }
        const before = walletBalance(card);
        const poolBefore = await shopCredits(running.ledgerUrl);
        let dead = false;
        const worker = running.worker;
        killed.arm({
          card,
          dataDir,
          kill: () => {
            if (dead) return;
            dead = true;
            worker.child.kill('SIGKILL');
          },
        });
        await post(
          worker,
          kind === 'recharge' ? '/writecard' : '/dischargecard',
          kind === 'recharge' ? '{"credits":9}' : undefined,
        ).catch(() => undefined);
        // The post follows the answer in the background: its kill point may come just after.
        await waitUntil(() => dead, 20_000, `the kill point (${killed.name})`);
        await worker.stop();
        card.clearFaults();

        restarted = await startStandalone(dataDir);
        const { ledgerUrl } = restarted;
        await waitUntil(async () => (await pendingMovements(ledgerUrl)) === 0, 30_000, 'settled');
        const moved = walletBalance(card) - before;
        const expected = killed.landed ? (kind === 'recharge' ? 9 : -30) : 0;
        assert.equal(moved, expected, 'the card holds exactly what the kill point implies');
        assert.equal(
          await shopCredits(ledgerUrl),
          poolBefore - moved,
          'the pool moved by what the card did',
        );
      } finally {
        await restarted?.worker.stop();
        await running.worker.stop();
        await reader.remove();
      }
      // The ledger's books balance, read from the folder as the worker left it.
      const db = await openPgliteDatabase(join(dataDir, 'ledger'));
      try {
        const report = await checkLedger(db);
        assert.ok(report.ok, report.problems.join('; '));
      } finally {
        await db.close();
      }
    });
  });
});
