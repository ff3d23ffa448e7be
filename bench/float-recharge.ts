// A recharge paid from the till float never waits for the ledger (docs/integrators.md, "When
// the internet drops"). The real card path (pcscd + vpcd + virtual MIFARE Classic card) in
// front of the service, the ledger behind a proxy that adds half a round trip each way: 0, 100
// and 1000 ms per round trip, then refusing every connection (the ledger down).
//
// Side by side, interleaved one for one so that the shared machine's load weighs on both: the
// card-only floor, what a float recharge cannot do without (one operation through the
// service's own card layer: the wallet read, one journal append with its fdatasync, the float
// write with its reference, read back), and POST /writecard as the POS sees it. Each recharge's
// answer must carry a float movement id (paid from the float, not reserved at the ledger), and
// between two operations the till's reports are let through (online), as a till's pace would.
// Target: /writecard p50 <= floor p50 + 10 ms at every round trip and with the ledger down.
//
//   node --import tsx bench/float-recharge.ts [--n 30]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFloatSettings } from '../cloud/float-admin.ts';
import { parseFloatMovementId } from '../common/float-ids.ts';
import { planWrite } from '../service/card/wallet-card.ts';
import { MovementJournal } from '../service/wallet/movement-journal.ts';
import { startCardRig, waitUntil } from '../test/support/card-rig.ts';
import { httpRequest } from '../test/support/http-client.ts';
import { TEST_API_KEY } from '../test/support/test-ledger.ts';
import { msSince, percentile, table, verdict } from './measure.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '30' } } });
const N = Number(values.n);
const ROUND_TRIPS_MS = [0, 100, 1000];
const TARGET_OVER_FLOOR_MS = 10;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rig = await startCardRig(
  { ledgerTimeoutMs: 5_000 },
  {
    ledgerReady: async (ledger) => {
      const customerId = await ledger.ledger.authenticate(TEST_API_KEY);
      // No cap per offline recharge; a float the whole run's 1-credit recharges fit in.
      await setFloatSettings(ledger.db, customerId, {
        size: 800,
        lowWater: 200,
        offlineCap: null,
      });
    },
  },
);
const journalDir = mkdtempSync(join(tmpdir(), 'cww-bench-float-'));
const journal = new MovementJournal(journalDir);
try {
  await journal.open();
  await waitUntil(() => rig.service.float.state === 'online', 60_000, 'the float is open');
  const card = await rig.cardHolding(0);
  await rig.present(card);

  let lastFloatId = '';
  const recharge = async () => {
    const started = process.hrtime.bigint();
    const res = await httpRequest(`${rig.service.url}/writecard`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ credits: 1 }),
      contract: false,
    });
    const latency = msSince(started);
    if (res.status !== 200) throw new Error(`/writecard: ${res.status} ${res.text}`);
    const id = String((res.json as { movementId?: unknown }).movementId);
    if (!parseFloatMovementId(id)) throw new Error(`/writecard was not paid from the float: ${id}`);
    lastFloatId = id;
    return latency;
  };
  // The floor writes the card one credit up with a float reference naming the till's own last
  // float recharge, so the service sees nothing on the card it must report. Its credits are
  // booked nowhere: this card is the benchmark's.
  let floorSeq = 0;
  const floor = async () => {
    floorSeq += 1;
    const started = process.hrtime.bigint();
    await rig.service.readers.withCard(async (face) => {
      const wallet = await face.readWallet();
      await journal.append({
        type: 'started',
        id: `00000000-0000-4000-8000-${String(floorSeq).padStart(12, '0')}`,
        kind: 'recharge',
        cardId: face.cardId,
        keyFingerprint: 'abcd1234',
        at: new Date().toISOString(),
      });
      await face.write(planWrite(wallet.before, wallet.balance + 1, lastFloatId, { float: true }));
    });
    return msSince(started);
  };
  const ledgerRoundTrip = async () => {
    const started = process.hrtime.bigint();
    await fetch(`${rig.ledgerProxy.url}/v1/customer`, { headers: { 'X-Api-Key': TEST_API_KEY } });
    return msSince(started);
  };

  await recharge(); // warm: the key loaded, the customer cached
  await floor();
  const rows: (string | number)[][] = [];
  const verdicts: string[] = [];
  const conditions = [...ROUND_TRIPS_MS, 'down' as const];
  for (const condition of conditions) {
    if (condition === 'down') {
      rig.ledgerProxy.setMode({ kind: 'refuse' });
      // The till learns the ledger is gone from a call that fails (a report, a top-up).
      await ledgerRoundTrip().catch(() => undefined);
      await waitUntil(() => !rig.service.float.online, 60_000, 'the till sees the ledger down');
    } else {
      rig.ledgerProxy.setMode({
        kind: 'intercept',
        before: () => delay(condition / 2).then(() => true),
        after: () => delay(condition / 2).then(() => true),
      });
    }
    const writes: number[] = [];
    const floors: number[] = [];
    const trips: number[] = [];
    for (let i = 0; i < N; i += 1) {
      floors.push(await floor());
      writes.push(await recharge());
      if (condition !== 'down') {
        trips.push(await ledgerRoundTrip());
        // As a till's pace: its report is through before the next sale.
        await waitUntil(() => rig.service.float.toReport === 0, 60_000, 'the recharge reported');
      }
    }
    const over = percentile(writes, 50) - percentile(floors, 50);
    const name = condition === 'down' ? 'ledger down' : `ledger round trip ${condition} ms`;
    rows.push([
      name,
      trips.length === 0 ? '-' : percentile(trips, 50).toFixed(1),
      percentile(floors, 50).toFixed(1),
      percentile(writes, 50).toFixed(1),
      percentile(writes, 99).toFixed(1),
      over.toFixed(1),
    ]);
    verdicts.push(
      verdict(
        `${name}: /writecard p50 minus floor p50 (ms)`,
        over,
        `<= ${TARGET_OVER_FLOOR_MS}`,
        over <= TARGET_OVER_FLOOR_MS,
      ),
    );
  }
  console.log(
    `recharges paid from the till float, ${N} per condition, each beside a card-only floor ` +
      'operation (wallet read, journal fdatasync, float write and read back)',
  );
  console.log(
    table(
      [
        'ledger',
        'round trip p50 ms',
        'floor p50 ms',
        '/writecard p50 ms',
        '/writecard p99 ms',
        'p50 over floor ms',
      ],
      rows,
    ),
  );
  for (const line of verdicts) console.log(line);
} finally {
  rig.ledgerProxy.setMode({ kind: 'pass' });
  await journal.close();
  rmSync(journalDir, { recursive: true, force: true });
  await rig.close();
}
