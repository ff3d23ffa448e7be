import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkLedger } from '../../cloud/check.ts';
import { DEFAULT_DESFIRE_AID } from '../../service/card/desfire/desfire-wallet-format.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { waitUntil, walletBalance } from '../support/card-rig.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { startPcscd, type PcscdRig } from '../support/pcscd.ts';
import {
  importCardBalance,
  pendingMovements,
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import {
  VirtualCard,
  VirtualDesfireCard,
  VirtualReader,
  type AnyVirtualCard,
} from '../support/virtual-card.ts';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

// The worker as a real process on the real card path, killed with SIGKILL at each step of a
// movement and started again on the same data folder, with a MIFARE Classic and a DESFire card.
// Crash points are caught from outside: at the ledger proxy (before or after the ledger acted)
// and at the virtual card (its commit point: a Classic block write, DESFire's CommitTransaction).
let pcscd: PcscdRig;
let ledger: TestLedger;
let proxy: FaultProxy;
let reader: VirtualReader;
let dataDir: string;
before(async () => {
  pcscd = await startPcscd();
  ledger = await startTestLedger();
  proxy = await startFaultProxy(ledger.url);
  reader = new VirtualReader((pcscd.readers[0] as { port: number }).port);
  dataDir = mkdtempSync(join(tmpdir(), 'cww-crash-'));
});
after(async () => {
  await reader.remove();
  await proxy.close();
  await ledger.close();
  await pcscd.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function startWorker(): Promise<WorkerProcess> {
  const readerName = (pcscd.readers[0] as { name: string }).name;
  return startWorkerProcess(
    [
      '--port',
      '0',
      '--api-key',
      TEST_API_KEY,
      '--cloud-url',
      proxy.url,
      '--data-dir',
      dataDir,
      '--reader',
      readerName,
    ],
    pcscd.env,
  );
}

/** Puts the card on the reader and waits until the worker has read its UID. */
async function present(card: AnyVirtualCard): Promise<void> {
  const seen = card.failAt('getUid', 'answer');
  await reader.insert(card);
  await seen.triggered;
  await new Promise((resolve) => setTimeout(resolve, 100));
}

const balanceOf = walletBalance;

const pool = () => shopCredits(ledger.url);
const pending = () => pendingMovements(ledger.url);

async function settledAtLedger(): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await pending()) > 0) {
    if (Date.now() > deadline) throw new Error('movements still pending at the ledger');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type CrashPoint = {
  name: string;
  /** Whether the card holds the movement afterwards (then it must be posted, else voided). */
  landed: boolean;
  /** Arms the crash; `kill` SIGKILLs the worker at once. */
  arm: (card: AnyVirtualCard, kill: () => void) => void;
};

const isPending = (method: string, path: string) => method === 'POST' && path === '/v1/movements';
const isResolve = (method: string, path: string) =>
  method === 'POST' && /\/(post|void)$/.test(path);

const crashPoints: CrashPoint[] = [
  {
    name: 'the journal is written, before the ledger is asked',
    landed: false,
    arm: (_card, kill) =>
      proxy.setMode({ kind: 'intercept', before: () => (kill(), false) }, isPending),
  },
  {
    name: 'the ledger created the pending movement, before the worker heard',
    landed: false,
    arm: (_card, kill) =>
      proxy.setMode({ kind: 'intercept', after: () => (kill(), false) }, isPending),
  },
  {
    name: 'the card was written, before the worker heard',
    landed: true,
    arm: (card, kill) => {
      const commit = card instanceof VirtualDesfireCard ? 'commit' : 'write';
      const off = card.onApdu((event) => {
        if (event.command !== commit) return 'answer';
        off();
        kill();
        return 'answer';
      });
    },
  },
  {
    name: 'the post was sent, before the ledger acted',
    landed: true,
    arm: (_card, kill) =>
      proxy.setMode({ kind: 'intercept', before: () => (kill(), false) }, isResolve),
  },
  {
    name: 'the ledger posted, before the worker heard',
    landed: true,
    arm: (_card, kill) =>
      proxy.setMode({ kind: 'intercept', after: () => (kill(), false) }, isResolve),
  },
];

/** A card holding 60 in its wallet (a DESFire card's on the trial keys: no master key here). */
function cardHolding60(cardType: 'mifare-classic' | 'desfire', id: number[]): AnyVirtualCard {
  if (cardType === 'desfire') {
    return desfireWalletCard(Buffer.from([0x04, 0xdf, 0x55, 0, 0, ...id]), DEFAULT_DESFIRE_AID, 60);
  }
  return new VirtualCard({
    uid: Buffer.from([0x04, 0x55, ...id]),
    blocks: { 4: encodeValueBlock(60, 1) },
  });
}

/** Recharges the card on the reader by 9 and waits until the ledger posted it; its id. */
async function rechargedBy9(workerUrl: string): Promise<string> {
  const res = await httpRequest(`${workerUrl}/writecard`, {
    method: 'POST',
    headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
    body: '{"credits":9}',
  });
  assert.equal(res.status, 200, shown(res));
  await settledAtLedger();
  return (res.json as { movementId: string }).movementId;
}

describe('SIGKILL at every step of a movement, then a restart', () => {
  for (const [cardType, kind] of [
    ['mifare-classic', 'recharge'],
    ['mifare-classic', 'discharge'],
    ['desfire', 'recharge'],
    ['desfire', 'discharge'],
    // A cashier's undo of a recharge of 9 (a refund movement, made by this till).
    ['mifare-classic', 'undo'],
    ['desfire', 'undo'],
  ] as const) {
    for (const point of crashPoints) {
      const on = cardType === 'desfire' ? ' on a DESFire card' : '';
      test(`when ${kind === 'undo' ? 'an' : 'a'} ${kind}${on} is killed after ${point.name}, then after the restart the money is exact`, async () => {
        const card = cardHolding60(cardType, [
          { recharge: 0x01, discharge: 0x02, undo: 0x03 }[kind],
          crashPoints.indexOf(point),
        ]);
        // Sold before the ledger: its account covers the 60 a discharge pays out.
        await importCardBalance(ledger, card.id, 60);
        let worker = await startWorker();
        await present(card);
        // An undo's recharge, made and posted before the crash is armed.
        const undone = kind === 'undo' ? await rechargedBy9(worker.url) : undefined;
        const start = balanceOf(card);
        const poolBefore = await pool();
        let killed = false;
        point.arm(card, () => {
          killed = true;
          worker.child.kill('SIGKILL');
        });
        const path = { recharge: '/writecard', discharge: '/dischargecard', undo: '/cards/undo' }[
          kind
        ];
        await httpRequest(`${worker.url}${path}`, {
          method: 'POST',
          headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
          body:
            kind === 'recharge'
              ? '{"credits":9}'
              : undone === undefined
                ? undefined
                : JSON.stringify({ movementId: undone }),
        }).catch(() => undefined);
        // The post follows the answer in the background: its crash point may come just after.
        await waitUntil(() => killed, 20_000, 'the crash point');
        await worker.stop();
        proxy.setMode({ kind: 'pass' });
        card.clearFaults();

        // Restart on the same data folder; the card is still on the reader.
        worker = await startWorker();
        try {
          await settledAtLedger();
          const moved = balanceOf(card) - start;
          const expected = point.landed ? { recharge: 9, discharge: -60, undo: -9 }[kind] : 0;
          assert.equal(moved, expected, 'the card holds exactly what the crash point implies');
          assert.equal(await pool(), poolBefore - moved, 'card and pool moved by the same credits');
          const report = await checkLedger(ledger.db);
          assert.ok(report.ok, report.problems.join('; '));
        } finally {
          await worker.stop();
          await reader.remove();
        }
      });
    }
  }
});

describe('a graceful stop during a card operation', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`when ${signal} arrives while the card is being read, then the read finishes and the process exits 0`, async () => {
      const card = new VirtualCard({
        uid: Buffer.from(signal === 'SIGTERM' ? '04660001' : '04660002', 'hex'),
        blocks: { 4: encodeValueBlock(33, 1) },
      });
      const worker = await startWorker();
      try {
        await present(card);
        const slow = card.failAt('read', { delayMs: 800 });
        const answer = httpRequest(`${worker.url}/readcard`, {
          headers: { 'X-Api-Key': TEST_API_KEY },
        });
        await slow.triggered;
        const exited = worker.stop(signal);
        const res = await answer;
        assert.equal(res.status, 200, shown(res));
        assert.deepEqual(
          res.json,
          { cardId: card.id, credits: 33, rechargeAmount: null },
          shown(res),
        );
        assert.equal(await exited, 0);
      } finally {
        await worker.stop();
        await reader.remove();
      }
    });
  }
});
