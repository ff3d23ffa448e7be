import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { issueKey } from '../../cloud/admin.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { Floats } from '../../cloud/floats.ts';
import { parseFloatMovementId } from '../../common/float-ids.ts';
import type { Float, FloatClosing, Till } from '../../common/ledger-contract.ts';
import { TILL_ID_FILE } from '../../service/till-id.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { httpRequest, shown, type HttpResponse } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualReader, type AnyVirtualCard } from '../support/virtual-card.ts';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.ts';

// A till that dies for good with float recharges it never reported (docs/operators.md, "When
// the internet drops"): till B is the headless worker as a process of its own, killed with
// SIGKILL while its link to the ledger is down, its journal gone with it. Till A (the rig's
// service) reads B's card and reports what it finds on it; the operator then closes B's float
// with the admin CLI (`card-wallet-cloud float show|close`, a child process, as an operator
// runs it), writing off what no card or report accounts for; `card-wallet-cloud check` ends it.
// The ledger is a process of its own on PostgreSQL.
const root = fileURLToPath(new URL('../..', import.meta.url));
let rig: CardRig;
let proxyB: FaultProxy;
let readerB: VirtualReader;
let workerB: WorkerProcess | undefined;
let dataDirB: string;
let customerId: string;
let poolAtStart: number;
const tillB = randomUUID();
let keyB: string;

before(async () => {
  rig = await startCardRig(
    {},
    {
      ledgerProcess: true,
      ledgerReady: async (ledger) => {
        customerId = await ledger.ledger.authenticate(TEST_API_KEY);
        await setFloatSettings(ledger.db, customerId, { size: 200, lowWater: 50, offlineCap: 40 });
        poolAtStart = await shopCredits(ledger.url);
      },
    },
  );
  keyB = (await issueKey(rig.ledger.db, { customerId })).apiKey;
  proxyB = await startFaultProxy(rig.ledger.url);
  const second = rig.pcscd.readers[1] as { name: string; port: number };
  readerB = new VirtualReader(second.port);
  dataDirB = mkdtempSync(join(tmpdir(), 'cww-dead-till-'));
  writeFileSync(join(dataDirB, TILL_ID_FILE), `${tillB}\n`, { mode: 0o600 });
  workerB = await startWorkerProcess(
    [
      ...['--port', '0', '--api-key', keyB, '--cloud-url', proxyB.url],
      ...['--data-dir', dataDirB, '--reader', second.name],
    ],
    rig.pcscd.env,
  );
});
after(async () => {
  await workerB?.stop('SIGKILL');
  await readerB?.remove();
  await rig?.close();
  await proxyB?.close();
  if (dataDirB) rmSync(dataDirB, { recursive: true, force: true });
});

/** The admin CLI as an operator runs it: a process of its own on the ledger's database. */
function cloudCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cloud/cli.ts', ...args, '--database', rig.ledger.databaseUrl ?? ''],
      { cwd: root, env: { ...process.env, USER: 'operator' } },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

function call(url: string, apiKey: string, method: string, path: string, body?: unknown) {
  return httpRequest(`${url}${path}`, {
    method,
    headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json' },
    ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
  });
}
const atA = (method: string, path: string) => call(rig.service.url, TEST_API_KEY, method, path);
const recordOf = (answer: HttpResponse) => answer.json as Record<string, unknown>;

async function floatOfB(): Promise<Float> {
  const float = (await new Floats(rig.ledger.db).till(customerId, tillB)).float;
  assert.ok(float, `till B (${tillB}) holds no float at the ledger`);
  return float;
}

async function cardAccount(cardId: string): Promise<number> {
  const answer = await fetch(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  return ((await answer.json()) as { credits: number }).credits;
}

/** Puts `card` on B's reader and waits until B reads it. */
async function presentAtB(card: AnyVirtualCard): Promise<void> {
  await readerB.insert(card);
  const readAtB = () => call(workerB?.url ?? '', keyB, 'GET', '/readcard');
  await waitUntil(async () => (await readAtB()).status === 200, 30_000, 'B reads the card');
}

describe('a till killed with unreported float recharges', () => {
  test('when its card is read at another till and the operator closes its float with the CLI, then the found recharge counts once, the rest is written off with its reason, and check passes', async () => {
    // B knows its float once its heartbeat tells the ledger what the float holds.
    await waitUntil(
      async () => {
        const rows = await rig.ledger.db.query<{ reported_float: unknown }>(
          'SELECT reported_float FROM tills WHERE id = $1',
          [tillB],
        );
        const reported = rows.rows[0]?.reported_float;
        const parsed = typeof reported === 'string' ? JSON.parse(reported) : reported;
        return (parsed as { credits?: number } | null)?.credits === 200;
      },
      60_000,
      "till B's float is open and B knows it",
    );
    await waitUntil(() => rig.service.float.state === 'online', 60_000, "till A's float is open");
    const floatB = await floatOfB();

    // B's link goes down; it keeps selling from its float: 25 then 15 credits on one card.
    proxyB.setMode({ kind: 'refuse' });
    const card = await rig.cardHolding(0);
    await presentAtB(card);
    const sold: number[] = [];
    for (const credits of [25, 15]) {
      const sale = await call(workerB!.url, keyB, 'POST', '/writecard', { credits });
      assert.equal(sale.status, 200, shown(sale));
      const id = parseFloatMovementId(String(recordOf(sale).movementId));
      assert.equal(id?.prefix, floatB.idPrefix, `paid from B's float: ${shown(sale)}`);
      sold.push(credits);
    }
    assert.equal(walletBalance(card), 40);

    // B dies: no close, no report; what it sold is on the card and in a journal nobody reads.
    assert.equal(await workerB!.stop('SIGKILL'), null);
    workerB = undefined;
    await readerB.remove();
    assert.deepEqual((await floatOfB()).reported, { count: 0, credits: 0 });

    // At till A the card shows B's newest float recharge (15): A reports it found on the card.
    await rig.present(card);
    const read = await atA('GET', '/readcard');
    assert.equal(read.status, 200, shown(read));
    assert.equal(recordOf(read).credits, 40, shown(read));
    await waitUntil(async () => (await floatOfB()).found.count === 1, 30_000, 'found on the card');
    assert.equal(await cardAccount(card.id), 15);

    // The operator looks at B at the ledger: nothing reported, 15 found, ids nothing names.
    const shownTill = await cloudCli(['float', 'show', '--customer', customerId, '--till', tillB]);
    assert.equal(shownTill.code, 0, shownTill.stderr);
    const view = JSON.parse(shownTill.stdout) as Till;
    assert.equal(view.float?.state, 'open', shownTill.stdout);
    assert.deepEqual(view.float?.reported, { count: 0, credits: 0 }, shownTill.stdout);
    assert.deepEqual(view.float?.found, { count: 1, credits: 15 }, shownTill.stdout);
    assert.ok((view.float?.unaccountedIds ?? 0) >= 1, shownTill.stdout);
    assert.equal(view.float?.credits, 200 - 15, shownTill.stdout);

    // What the POS took at B, less what was reported and found: sold with no trace at the
    // ledger. A write-off needs a reason; the rest of the float goes back to the pool.
    const unaccounted = sold.reduce((a, b) => a + b, 0) - view.float.reported.credits - 15;
    assert.equal(unaccounted, 25);
    const refused = await cloudCli([
      'float',
      'close',
      ...['--customer', customerId, '--float', floatB.id],
      ...['--write-off', String(unaccounted)],
    ]);
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(refused.stderr, /--reason/);
    assert.equal((await floatOfB()).state, 'open', 'a refused close changes nothing');
    const reason = "till B's disk died; its POS sold 40 credits offline, 15 were found on cards";
    const closed = await cloudCli([
      'float',
      'close',
      ...['--customer', customerId, '--float', floatB.id],
      ...['--write-off', String(unaccounted), '--reason', reason],
    ]);
    assert.equal(closed.code, 0, closed.stderr);
    const closing = JSON.parse(closed.stdout) as FloatClosing;
    assert.equal(closing.closed, true, closed.stdout);
    assert.equal(closing.float.state, 'closed', closed.stdout);
    assert.equal(closing.float.closedBy, 'operator', closed.stdout);
    assert.equal(closing.float.writtenOff, 25, closed.stdout);
    assert.equal(closing.float.writeOffReason, reason, closed.stdout);
    assert.equal(closing.float.returned, 200 - 15 - 25, closed.stdout);
    assert.deepEqual(closing.float.found, { count: 1, credits: 15 }, closed.stdout);

    // Read again at A: known already, nothing counts twice.
    await rig.takeAway();
    await rig.present(card);
    const again = await atA('GET', '/readcard');
    assert.equal(again.status, 200, shown(again));
    await waitUntil(() => rig.service.float.toReport === 0, 30_000, "A's reports sent");
    const after = await new Floats(rig.ledger.db).get(customerId, floatB.id);
    assert.deepEqual(after.found, { count: 1, credits: 15 }, JSON.stringify(after));
    assert.equal(after.writtenOff, 25, JSON.stringify(after));
    assert.equal(await cardAccount(card.id), 15);
    // The pool, A's float, the card's account and the write-off add up to the pool at start.
    const pool = await shopCredits(rig.ledger.url);
    const floatA = (await new Floats(rig.ledger.db).till(customerId, rig.service.tillId)).float;
    assert.equal(
      pool + (floatA?.credits ?? 0) + 15 + 25,
      poolAtStart,
      JSON.stringify({ pool, floatA }),
    );

    const check = await cloudCli(['check']);
    assert.equal(check.code, 0, `${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /^ok: /);
    await rig.takeAway();
  });
});
