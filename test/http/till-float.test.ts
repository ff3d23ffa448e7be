// The till float over real HTTP, on the card simulator (docs/integrators.md, "When the internet
// drops"): recharges paid from the float answer without the ledger, online and offline; the
// ledger down, a recharge within the float's bounds still sells, one beyond them is NoCredits
// with a detail, a payout is ErrorTrackingDischargeMovement; the ledger back, every recharge is
// reported once and the shop's book holds. The ledger sits behind a fault proxy.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { checkLedger } from '../../cloud/check.ts';
import { waitUntil } from '../support/card-rig.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { apiCaller } from '../support/http-client.ts';
import { startProxiedShop, type ProxiedShop } from '../support/proxied-shop.ts';
import { TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';

let shop: ProxiedShop;
let ledger: TestLedger;
let proxy: FaultProxy;
let service: TestService;

before(async () => {
  shop = await startProxiedShop({
    float: { size: 200, lowWater: 50, offlineCap: 40 },
  });
  ({ ledger, proxy, service } = shop);
});
after(() => shop?.close());

const call = apiCaller(() => service.url, TEST_API_KEY);

async function floatAtLedger() {
  const answer = await fetch(`${ledger.url}/v1/tills/${service.tillId}/float`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
  });
  return (await answer.json()) as { credits: number; reported: { count: number; credits: number } };
}

describe('the till float', () => {
  test('when the ledger answers, then the till opens its float and a recharge it covers is paid from it', async () => {
    await waitUntil(() => service.float.state === 'online', 30_000, 'the float is open');
    assert.equal(service.float.left, 200, JSON.stringify(service.float));
    const placed = await call('POST', '/simulator/place', { credits: 0 });
    assert.equal(placed.status, 200, JSON.stringify(placed.json));
    const recharged = await call('POST', '/writecard', { credits: 30 });
    assert.equal(recharged.status, 200, JSON.stringify(recharged.json));
    const { movementId, occurredAt, ...spec } = recharged.json as Record<string, unknown>;
    assert.deepEqual(spec, {
      cardId: (placed.json as { cardId: string }).cardId,
      credits: 30,
      rechargeAmount: 15,
      reference: null,
    });
    // The receipt names the float movement: its id is the float's (version 8).
    assert.match(String(movementId), /^[0-9a-f]{8}-[0-9a-f]{4}-8000-8000-000000[0-9a-f]{6}$/);
    assert.equal(typeof occurredAt, 'string');
    await waitUntil(async () => (await floatAtLedger()).reported.count === 1, 30_000, 'reported');
    assert.equal((await floatAtLedger()).credits, 170);
    // And the till has journaled the ledger's answer (the next test counts what it must report).
    await waitUntil(() => service.float.toReport === 0, 30_000, 'the report journaled');
  });

  test('when the ledger is down, then recharges within the float sell, beyond the cap they are NoCredits, and a payout is refused; back, each is reported once', async () => {
    proxy.setMode({ kind: 'refuse' });
    // Any ledger call that fails tells the till it is offline.
    assert.equal((await call('GET', '/info')).status, 400);
    await waitUntil(() => !service.float.online, 30_000, 'the till sees the ledger down');
    const offline = await call('POST', '/writecard', { credits: 20 });
    assert.equal(offline.status, 200, JSON.stringify(offline.json));
    assert.equal((offline.json as { credits: number }).credits, 50);
    const capped = await call('POST', '/writecard', { credits: 41 });
    assert.deepEqual([capped.status, (capped.json as { error: string }).error], [500, 'NoCredits']);
    assert.match((capped.json as { detail: string }).detail, /at most 40 credits per recharge/);
    const payout = await call('POST', '/dischargecard');
    assert.equal(payout.status, 500, JSON.stringify(payout.json));
    assert.equal((payout.json as { error: string }).error, 'ErrorTrackingDischargeMovement');
    assert.match((payout.json as { detail: string }).detail, /a payout needs it/);
    const info = await call('GET', '/info');
    assert.equal(info.status, 400, JSON.stringify(info.json));
    assert.match(
      (info.json as { detail: string }).detail,
      /sells from its float: 150 credits left/,
    );
    assert.equal(service.float.state, 'offline');
    assert.match(
      service.float.line,
      /^offline since \d\d:\d\d: 1 recharge to report, float 150 of 200 credits left, offline sales stop at \d\d:\d\d tomorrow$/,
    );

    proxy.setMode({ kind: 'pass' });
    await waitUntil(async () => (await floatAtLedger()).reported.count === 2, 30_000, 'reported');
    const check = await checkLedger(ledger.db);
    assert.deepEqual(check.problems, []);
    const info2 = await call('GET', '/info');
    assert.equal(info2.status, 200, JSON.stringify(info2.json));
    const paid = await call('POST', '/dischargecard');
    assert.equal(paid.status, 200, JSON.stringify(paid.json));
    assert.equal((paid.json as { dischargedCredits: number }).dischargedCredits, 50);
  });

  test("when the till's float changes, then its heartbeat tells the back office what the float holds and what is not reported yet", async () => {
    const reportedAtLedger = async () => {
      const { rows } = await ledger.db.query<{ reported_float: unknown }>(
        'SELECT reported_float FROM tills WHERE id = $1',
        [service.tillId],
      );
      return rows[0]?.reported_float ?? null;
    };
    const placed = await call('POST', '/simulator/place', { credits: 0 });
    assert.equal(placed.status, 200, JSON.stringify(placed.json));
    const recharged = await call('POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, JSON.stringify(recharged.json));
    const expected = () => ({
      credits: service.float.left,
      unreportedMovements: 0,
      unreportedCredits: 0,
      offlineSince: null,
    });
    await waitUntil(
      async () => isDeepStrictEqual(await reportedAtLedger(), expected()),
      30_000,
      'the heartbeat carries the float',
    ).catch(async (error: unknown) => {
      const seen = JSON.stringify(await reportedAtLedger());
      throw new Error(
        `${(error as Error).message}: ledger has ${seen}, till ${JSON.stringify(expected())}`,
      );
    });
  });
});
