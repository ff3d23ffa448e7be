// Card operations through the real stack: HTTP -> service -> nfc-pcsc -> pcscd (TCP_NODELAY
// build) -> vpcd -> virtual card, and a loopback ledger. For each endpoint: latency p50/p99,
// APDUs and ledger round trips per operation. Side by side, the floor: the same three APDUs a
// read needs sent straight through nfc-pcsc in the same process (between two service phases:
// nfc-pcsc holds the card exclusively). Last row: one journal append with fdatasync alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nfcPcsc, { type Reader } from 'nfc-pcsc';
import { encodeValueBlock } from '../service/card/wallet-format.ts';
import { MovementJournal } from '../service/wallet/movement-journal.ts';
import { startCardRig, waitUntil, type CardRig } from '../test/support/card-rig.ts';
import { httpRequest } from '../test/support/http-client.ts';
import { importCardBalance, TEST_API_KEY } from '../test/support/test-ledger.ts';
import { VirtualCard } from '../test/support/virtual-card.ts';
import { percentile, table, verdict } from './measure.ts';

const N = 200;

interface Row {
  what: string;
  latencies: number[];
  apdus: number;
  ledgerCalls: number;
}

async function timed(action: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await action();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Times `call` N times; `prepare` (untimed, uncounted) runs before each, e.g. a top-up. */
async function throughService(
  rig: CardRig,
  what: string,
  call: () => Promise<void>,
  prepare?: () => Promise<void>,
): Promise<Row> {
  const movementCalls = () =>
    rig.ledgerProxy.requests.filter((r) => r.path.startsWith('/v1/movements')).length;
  await prepare?.();
  await call(); // warm: the key is loaded, the customer cached
  const latencies: number[] = [];
  let apdus = 0;
  let ledgerCalls = 0;
  for (let i = 0; i < N; i += 1) {
    await prepare?.();
    const apdusBefore = rig.reader.apdus.length;
    const ledgerBefore = movementCalls();
    latencies.push(await timed(call));
    apdus += rig.reader.apdus.length - apdusBefore;
    ledgerCalls += movementCalls() - ledgerBefore;
  }
  return { what, latencies, apdus: apdus / N, ledgerCalls: ledgerCalls / N };
}

async function rawFloor(rig: CardRig): Promise<Row> {
  await rig.service.readers.stop(0);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const nfc = new nfcPcsc.NFC();
  nfc.on('error', () => undefined);
  const reader = await new Promise<Reader>((resolve) => {
    nfc.on('reader', (found) => {
      found.on('error', () => undefined);
      if (found.name === rig.service.readers.status.reader || found.name === 'Virtual PCD 00 00') {
        found.once('card', () => resolve(found));
      }
    });
  });
  const key = Buffer.from('FFFFFFFFFFFF', 'hex');
  const read = async () => {
    await reader.authenticate(4, 0x60, key);
    await reader.read(4, 32, 16);
  };
  await read();
  rig.reader.resetApduLog();
  const latencies: number[] = [];
  for (let i = 0; i < N; i += 1) latencies.push(await timed(read));
  const apdus = rig.reader.apdus.length / N;
  setImmediate(() => {
    reader.close();
    nfc.close();
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  rig.service.readers.start();
  return { what: 'raw nfc-pcsc read (floor)', latencies, apdus, ledgerCalls: 0 };
}

async function journalFsync(): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'cww-bench-journal-'));
  const journal = new MovementJournal(dir);
  await journal.open();
  const latencies: number[] = [];
  for (let i = 0; i < N; i += 1) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    latencies.push(
      await timed(() =>
        journal.append({
          type: 'started',
          id,
          kind: 'recharge',
          cardId: '04A1B2C3',
          keyFingerprint: 'abcd1234',
          at: new Date().toISOString(),
        }),
      ),
    );
  }
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
  return { what: 'journal append (fdatasync)', latencies, apdus: 0, ledgerCalls: 0 };
}

const rig = await startCardRig({ cardTimeoutMs: 3_000 });
try {
  const card = new VirtualCard({
    uid: Buffer.from('04B0B1B2', 'hex'),
    blocks: { 4: encodeValueBlock(1_000, 1) },
  });
  // Sold before the ledger: imported, so the ledger lets the discharges pay it out.
  await importCardBalance(rig.ledger, card.id, 1_000);
  await rig.present(card);
  const get = (path: string) => async () => {
    const res = await httpRequest(`${rig.service.url}${path}`, {
      headers: { 'X-Api-Key': TEST_API_KEY },
      contract: false,
    });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  };
  const post = (path: string, body?: unknown) => async () => {
    const res = await httpRequest(`${rig.service.url}${path}`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      contract: false,
    });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  };
  const read1 = await throughService(rig, 'GET /readcard', get('/readcard'));
  const floor = await rawFloor(rig);
  await waitUntil(
    () => rig.service.readers.status.card !== null,
    10_000,
    'the service sees the card again',
  );
  const read2 = await throughService(rig, 'GET /readcard (again)', get('/readcard'));
  const write = await throughService(
    rig,
    'POST /writecard {credits:1}',
    post('/writecard', { credits: 1 }),
  );
  // A discharge of a card at 0 does nothing: put one credit back before each.
  const discharge = await throughService(
    rig,
    'POST /dischargecard',
    post('/dischargecard'),
    post('/writecard', { credits: 1 }),
  );
  const fsync = await journalFsync();

  const rows = [read1, floor, read2, write, discharge, fsync];
  console.log(`card operations through pcscd + vpcd (TCP_NODELAY), ${N} each, loopback ledger`);
  console.log(
    table(
      ['operation', 'p50 ms', 'p99 ms', 'APDUs/op', 'ledger calls/op'],
      rows.map((row) => [
        row.what,
        percentile(row.latencies, 50).toFixed(2),
        percentile(row.latencies, 99).toFixed(2),
        row.apdus.toFixed(1),
        row.ledgerCalls.toFixed(1),
      ]),
    ),
  );
  const readP50 = (percentile(read1.latencies, 50) + percentile(read2.latencies, 50)) / 2;
  console.log(
    `readcard p50 / raw nfc-pcsc p50: ${(readP50 / percentile(floor.latencies, 50)).toFixed(2)}`,
  );
  console.log(verdict('APDUs per /readcard (key cached)', read2.apdus, '3', read2.apdus === 3));
  console.log(
    verdict(
      'APDUs per /writecard',
      write.apdus,
      '6 (auth, 2 reads, UID check, write, read back)',
      write.apdus === 6,
    ),
  );
  console.log(
    verdict('ledger calls per /writecard', write.ledgerCalls, '2', write.ledgerCalls === 2),
  );
  console.log(verdict('APDUs per /dischargecard', discharge.apdus, '6', discharge.apdus === 6));
  console.log(
    verdict(
      'ledger calls per /dischargecard',
      discharge.ledgerCalls,
      '2',
      discharge.ledgerCalls === 2,
    ),
  );
} finally {
  await rig.close();
}
