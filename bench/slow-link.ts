// The caller's wait over a shop's internet link: the ledger behind a proxy that adds 50 ms each
// way (100 ms per round trip), the real card path (pcscd + vpcd + virtual card) in front.
// Measured side by side in one run: one ledger round trip through that link (GET /v1/customer),
// /writecard and /dischargecard as the caller sees them, and the card-on-reader window (from
// the operation's first APDU to the caller's answer: the card is released just before it).
// Target: /writecard p50 <= one ledger round trip + 15 ms (the reservation is the only ledger
// call before the answer; the post follows in the background).
import { encodeValueBlock } from '../service/card/wallet-format.ts';
import { startCardRig } from '../test/support/card-rig.ts';
import { httpRequest } from '../test/support/http-client.ts';
import { TEST_API_KEY } from '../test/support/test-ledger.ts';
import { VirtualCard } from '../test/support/virtual-card.ts';
import { msSince, percentile, table, verdict } from './measure.ts';

const N = 40;
const ONE_WAY_MS = 50;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rig = await startCardRig({ ledgerTimeoutMs: 5_000 });
try {
  // Every ledger call crosses the link: 50 ms there, 50 ms back.
  rig.ledgerProxy.setMode({
    kind: 'intercept',
    before: () => delay(ONE_WAY_MS).then(() => true),
    after: () => delay(ONE_WAY_MS).then(() => true),
  });
  const card = new VirtualCard({
    uid: Buffer.from([0x04, 0x50, 0x4c, 0x01]),
    blocks: { 4: encodeValueBlock(0, 1) },
  });
  await rig.present(card);

  const roundTrips: number[] = [];
  const call = async (path: string, body?: unknown) => {
    const res = await httpRequest(`${rig.service.url}${path}`, {
      method: 'POST',
      headers: {
        'X-Api-Key': TEST_API_KEY,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  };
  /** Times `path`; `prepare` (untimed) runs before each, e.g. credits for a discharge. */
  const measure = async (path: string, body?: unknown, prepare?: () => Promise<void>) => {
    const latencies: number[] = [];
    const windows: number[] = [];
    for (let i = 0; i <= N; i += 1) {
      if (prepare) {
        await prepare();
        await delay(2 * ONE_WAY_MS + 20);
      }
      // The card's first APDU of this operation (authentication; the UID comes with the tap).
      const first = card.failAt('authenticate', 'answer');
      let firstAt = 0n;
      void first.triggered.then(() => (firstAt = process.hrtime.bigint()));
      const started = process.hrtime.bigint();
      await call(path, body);
      const latency = msSince(started);
      if (i === 0) continue; // warm-up
      latencies.push(latency);
      windows.push(firstAt === 0n ? Number.NaN : msSince(firstAt));
      const rtStarted = process.hrtime.bigint();
      await fetch(`${rig.ledgerProxy.url}/v1/customer`, { headers: { 'X-Api-Key': TEST_API_KEY } });
      roundTrips.push(msSince(rtStarted));
      // Let the background post finish before the next operation, as a till's pace would.
      await delay(2 * ONE_WAY_MS + 20);
    }
    return { latencies, windows };
  };

  const write = await measure('/writecard', { credits: 1 });
  const discharge = await measure('/dischargecard', undefined, () =>
    call('/writecard', { credits: 5 }),
  );
  const rt = percentile(roundTrips, 50);
  const p50 = (values: number[]) => percentile(values, 50).toFixed(1);
  const p99 = (values: number[]) => percentile(values, 99).toFixed(1);
  console.log(`ledger behind a ${ONE_WAY_MS} ms-each-way link, ${N} operations each`);
  console.log(
    table(
      ['what', 'p50 ms', 'p99 ms', 'card window p50 ms', 'p50 / ledger round trip'],
      [
        ['ledger round trip (GET /v1/customer)', p50(roundTrips), p99(roundTrips), '-', '1.00'],
        [
          '/writecard',
          p50(write.latencies),
          p99(write.latencies),
          p50(write.windows),
          (percentile(write.latencies, 50) / rt).toFixed(2),
        ],
        [
          '/dischargecard',
          p50(discharge.latencies),
          p99(discharge.latencies),
          p50(discharge.windows),
          (percentile(discharge.latencies, 50) / rt).toFixed(2),
        ],
      ],
    ),
  );
  const over = percentile(write.latencies, 50) - rt;
  console.log(
    verdict('/writecard p50 minus one ledger round trip (ms)', over, '<= 15', over <= 15),
  );
} finally {
  await rig.close();
}
