import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { applySeed } from '../../cloud/seed.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import type { ProxiedRequest } from '../support/fault-proxy.ts';
import { apiCaller, shown } from '../support/http-client.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';

// Two faults that overlap in time, over the real card path and a real ledger behind a proxy
// that holds chosen requests or their answers until another step has happened. Each sequence
// is one that minted or lost credits before the engine tracked the movements its running
// requests own, and before the ledger kept a tombstone for a void of an unknown id.

/** A key of a second shop, to change the till's key to another shop's. */
const OTHER_SHOP_KEY = 'other-shop-key-0123456789';

let rig: CardRig;
before(async () => {
  // Each ledger attempt waits 3 s: long enough for the holds below, short enough for the test
  // that lets every attempt of a create time out.
  // The ledger runs as its own process on PostgreSQL, as a till's ledger does.
  rig = await startCardRig(
    { cardTimeoutMs: 10_000, ledgerTimeoutMs: 3_000 },
    { ledgerProcess: true },
  );
  rig.service.on('outboxPassed', () => (outboxPasses += 1));
  rig.service.on('outboxPassed', () => (outboxPasses += 1));
  await applySeed(rig.ledger.db, {
    customers: [{ name: 'Other shop', credits: 100, creditCost: '0.50', keys: [OTHER_SHOP_KEY] }],
  });
});
after(() => rig.close());
beforeEach(() => rig.ledgerProxy.setMode({ kind: 'pass' }));

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const post = (path: string, body?: unknown, headers?: Record<string, string>) =>
  call('POST', path, body, headers);

const pool = () => shopCredits(rig.ledger.url);

const isCreate = (request: ProxiedRequest) =>
  request.method === 'POST' && request.path === '/v1/movements';
const isPost = (request: ProxiedRequest) => request.path.endsWith('/post');
const isVoid = (request: ProxiedRequest) => request.path.endsWith('/void');

/** Resolves once `condition` holds over the proxy's requests (polled). */
async function seenAtProxy(condition: (requests: ProxiedRequest[]) => boolean): Promise<void> {
  await waitUntil(() => condition(rig.ledgerProxy.requests), 30_000, 'a request at the proxy');
}

/** Outbox passes the service has finished so far (its `outboxPassed` events). */
let outboxPasses = 0;

describe('the outbox never resolves a movement a running request owns', () => {
  // Sequence: a recharge whose post answer is lost puts the outbox on its timer; a second
  // movement on the card (no Idempotency-Key) is at the ledger's create while the outbox runs.
  // The outbox used to void the second movement: before its create committed (it then stayed
  // pending for good, or, with tombstones, the caller got a 500), or after (the card was
  // written, the ledger said voided: credits minted, or on a discharge never returned).
  for (const kind of ['recharge', 'discharge'] as const) {
    for (const when of ['before', 'after'] as const) {
      test(`when the outbox runs while a ${kind}'s create is at the ledger (answer held until ${when} it commits), then the running request alone resolves it and the money is exact`, async () => {
        const card = await rig.cardHolding(50);
        await rig.present(card);
        try {
          const poolBefore = await pool();
          // Outbox passes finished when the second movement's create first reached the proxy.
          let passesAtHold: number | undefined;
          // An outbox pass has run while the second movement's create is at the ledger: it went
          // through the first movement (its post, answer lost) and on to the second, which the
          // old engine voided there and then (answered before the pass ends). Conditions, not
          // times: a busy machine only waits longer.
          const outboxPassed = () =>
            waitUntil(
              () => passesAtHold !== undefined && outboxPasses > passesAtHold,
              30_000,
              'an outbox pass while the second create is at the ledger',
            );
          let creates = 0;
          rig.ledgerProxy.setMode({
            kind: 'intercept',
            before: async (request) => {
              if (isCreate(request) && (creates += 1) > 1) {
                passesAtHold ??= outboxPasses;
                if (when === 'before') await outboxPassed();
              }
              return true;
            },
            // Every post's answer is lost until that pass has run: the first movement cannot be
            // posted by its request's own attempts, so it is the outbox's, on its timer, while
            // the second create is at the ledger. (A held create whose attempt times out is
            // sent again, with the same id, and held until the same condition.)
            after: async (request) => {
              if (isPost(request)) {
                return passesAtHold !== undefined && outboxPasses > passesAtHold;
              }
              if (isCreate(request) && creates > 1 && when === 'after') await outboxPassed();
              return true;
            },
          });

          const first = await post('/writecard', { credits: 10 });
          assert.equal(first.status, 200, shown(first));
          assert.equal(walletBalance(card), 60);
          const second =
            kind === 'recharge'
              ? await post('/writecard', { credits: 100 })
              : await post('/dischargecard');
          assert.equal(second.status, 200, shown(second));
          rig.ledgerProxy.setMode({ kind: 'pass' });
          await rig.settled();
          const expected = kind === 'recharge' ? 160 : 0;
          assert.equal(walletBalance(card), expected, `card; second answer ${shown(second)}`);
          assert.equal(
            await pool(),
            poolBefore - 10 - (kind === 'recharge' ? 100 : -60),
            'the pool moved by exactly what the card did',
          );
        } finally {
          await rig.takeAway();
        }
      });
    }
  }
});

describe('a void answered 404 leaves nothing to be reserved later', () => {
  test('when every try of a create times out at the worker but reaches the ledger after the void, then nothing stays reserved and the card is untouched', async () => {
    const card = await rig.cardHolding(20);
    await rig.present(card);
    try {
      const poolBefore = await pool();
      const start = rig.ledgerProxy.requests.length;
      let releasedCreates = 0;
      // Each create is held until the worker's void of it was answered, then forwarded: it
      // reaches the ledger late, after the worker gave up on it.
      const voidAnswered = () =>
        seenAtProxy((requests) =>
          requests.slice(start).some((request) => isVoid(request) && request.answered),
        );
      rig.ledgerProxy.setMode({
        kind: 'intercept',
        before: async (request) => {
          if (isCreate(request)) await voidAnswered();
          return true;
        },
        after: (request) => {
          if (isCreate(request)) releasedCreates += 1;
          return true;
        },
      });
      const res = await post('/writecard', { credits: 5 });
      assert.equal(res.status, 500, shown(res));
      assert.equal((res.json as { error: string }).error, 'LedgerUnavailable', shown(res));
      await waitUntil(() => releasedCreates === 3, 30_000, 'the three late creates answered');
      rig.ledgerProxy.setMode({ kind: 'pass' });
      await rig.settled();
      assert.equal(walletBalance(card), 20);
      assert.equal(await pool(), poolBefore, 'no credits stay reserved');
    } finally {
      await rig.takeAway();
    }
  });

  test("when the operator changes the key to another shop's while a post waits in the outbox, then it is posted with the key of the shop that made it", async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      const poolBefore = await pool();
      const otherBefore = await shopCredits(rig.ledger.url, OTHER_SHOP_KEY);
      rig.ledgerProxy.setMode(
        { kind: 'drop-response' },
        (method, path) => method === 'POST' && path.endsWith('/post'),
      );
      const res = await post('/writecard', { credits: 7 });
      assert.equal(res.status, 200, shown(res));
      await rig.service.applySettings({ apiKey: OTHER_SHOP_KEY });
      rig.ledgerProxy.setMode({ kind: 'pass' });
      await waitUntil(
        () => rig.service.unconfirmedMovements === 0,
        30_000,
        'the post acknowledged',
      );
      assert.equal(await pendingMovements(rig.ledger.url), 0, 'nothing pending for the first shop');
      assert.equal(walletBalance(card), 7);
      assert.equal(await pool(), poolBefore - 7);
      assert.equal(
        await shopCredits(rig.ledger.url, OTHER_SHOP_KEY),
        otherBefore,
        'the other shop untouched',
      );
    } finally {
      await rig.service.applySettings({ apiKey: TEST_API_KEY });
      await rig.takeAway();
    }
  });
});

describe('an Idempotency-Key replay needs the same card', () => {
  for (const kind of ['recharge', 'discharge'] as const) {
    test(`when a ${kind} is repeated with the same Idempotency-Key while another card is on the reader, then 409 IdempotencyKeyOtherCard and that card is untouched; with the first card back, the first answer`, async () => {
      const send = () =>
        kind === 'recharge'
          ? post('/writecard', { credits: 4 }, { 'Idempotency-Key': `k-other-card-${kind}` })
          : post('/dischargecard', undefined, { 'Idempotency-Key': `k-other-card-${kind}` });
      const first = await rig.cardHolding(30);
      const other = await rig.cardHolding(30);
      await rig.present(first);
      const answer = await send();
      assert.equal(answer.status, 200, shown(answer));
      await rig.takeAway();
      await rig.present(other);
      try {
        rig.reader.resetApduLog();
        const refused = await send();
        assert.equal(refused.status, 409, shown(refused));
        assert.deepEqual(refused.json, { error: 'IdempotencyKeyOtherCard' }, shown(refused));
        assert.equal(rig.reader.counts.write, 0, 'the other card is not written');
        assert.equal(walletBalance(other), 30);
      } finally {
        await rig.takeAway();
      }
      await rig.present(first);
      try {
        const replayed = await send();
        assert.equal(replayed.status, 200, shown(replayed));
        assert.deepEqual(replayed.json, answer.json);
        assert.equal(walletBalance(first), kind === 'recharge' ? 34 : 0);
      } finally {
        await rig.takeAway();
      }
    });
  }
});
