import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { decodeSlot, encodeValueBlock } from '../../service/card/wallet-format.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import {
  apiCaller,
  httpRequest,
  shown,
  type HttpResponse,
  withoutReceipt,
} from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import type { FaultTrigger } from '../support/virtual-card.ts';

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardTimeoutMs: 1_500, cardQueueLimit: 32 })));
after(() => rig.close());
beforeEach(() => rig.ledgerProxy.setMode({ kind: 'pass' }));

const balanceOf = walletBalance;

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const post = (path: string, body?: unknown, headers?: Record<string, string>) =>
  call('POST', path, body, headers);

const get = (path: string) =>
  httpRequest(`${rig.service.url}${path}`, { headers: { 'X-Api-Key': TEST_API_KEY } });

const pool = () => shopCredits(rig.ledger.url);

describe('POST /writecard', () => {
  test('when recharging a blank card by credits, then the card and the pool move by exactly that', async () => {
    const card = await rig.cardHolding(null);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/writecard', { credits: 50 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, credits: 50, rechargeAmount: 25 },
        shown(res),
      );
      assert.equal(balanceOf(card), 50);
      assert.equal(await pool(), before - 50);
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });

  test('when recharging by amount, then credits are rounded down and rechargeAmount is credits x cost', async () => {
    const card = await rig.cardHolding(100);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/writecard', { amount: 12.34 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, credits: 124, rechargeAmount: 12 },
        shown(res),
      );
      assert.equal(balanceOf(card), 124);
      assert.equal(await pool(), before - 24);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the key is loaded, then a recharge from the pool takes 7 APDUs and 2 ledger calls', async () => {
    const card = await rig.cardHolding(7);
    await rig.present(card);
    try {
      const warm = await post('/writecard', { credits: 1 });
      assert.equal(warm.status, 200, shown(warm));
      await rig.settled();
      rig.reader.resetApduLog();
      const ledgerCalls = rig.ledgerProxy.requests.length;
      const measured = await post('/writecard', { credits: 1 });
      assert.equal(measured.status, 200, shown(measured));
      // The post follows the answer, in the background.
      await rig.settled();
      const { getUid, loadKey, authenticate, read, write, other } = rig.reader.counts;
      assert.deepEqual(
        { getUid, loadKey, authenticate, read, write, other },
        // The read: 2 slots and the float reference; then the written slot read back.
        { getUid: 1, loadKey: 0, authenticate: 1, read: 4, write: 1, other: 0 },
      );
      // The recharge's own calls: the till's timers (heartbeat, card list) may fire meanwhile.
      const onTimer = (path: string) => path.startsWith('/v1/tills/') || path === '/v1/card-list';
      assert.deepEqual(
        rig.ledgerProxy.requests
          .slice(ledgerCalls)
          .filter((request) => !onTimer(request.path))
          .map((request) => request.method + ' ' + request.path.replace(/[0-9a-f-]{36}/, 'ID')),
        ['POST /v1/movements', 'POST /v1/movements/ID/post'],
      );
    } finally {
      await rig.takeAway();
    }
  });

  const invalidBodies: [string, unknown][] = [
    ['an empty object', {}],
    ['nulls', { credits: null, amount: null }],
    ['both fields', { credits: 5, amount: 2.5 }],
    ['zero credits', { credits: 0 }],
    ['negative credits', { credits: -5 }],
    ['fractional credits', { credits: 1.5 }],
    ['credits as a string', { credits: '5' }],
    ['credits beyond the bound', { credits: 100_001 }],
    ['an amount with three decimals', { amount: 1.005 }],
    ['a negative amount', { amount: -1 }],
    ['an amount as a string', { amount: '2.50' }],
    ['an amount beyond the bound', { amount: 10_000.01 }],
    ['an amount worth less than one credit', { amount: 0.49 }],
    ['an array', [1, 2]],
    ['a bare number', 5],
  ];
  for (const [what, body] of invalidBodies) {
    test(`when the body has ${what}, then 400 Invalid credits or amount value and nothing happens`, async () => {
      const card = await rig.cardHolding(10);
      await rig.present(card);
      try {
        rig.reader.resetApduLog();
        const ledgerCalls = rig.ledgerProxy.requests.filter((r) =>
          r.path.startsWith('/v1/movements'),
        ).length;
        const res = await post('/writecard', body);
        assert.equal(res.status, 400, shown(res));
        assert.equal(
          (res.json as { error: string }).error,
          'Invalid credits or amount value',
          shown(res),
        );
        assert.equal(rig.reader.apdus.length, 0, 'no APDU');
        assert.equal(
          rig.ledgerProxy.requests.filter((r) => r.path.startsWith('/v1/movements')).length,
          ledgerCalls,
          'no movement at the ledger',
        );
      } finally {
        await rig.takeAway();
      }
    });
  }

  test('when the body is not JSON or not application/json, then 400 / 415 and nothing happens', async () => {
    rig.reader.resetApduLog();
    const broken = await post('/writecard', '{"credits": 5');
    assert.equal(broken.status, 400, shown(broken));
    assert.equal((broken.json as { error: string }).error, 'InvalidJson', shown(broken));
    const text = await post('/writecard', undefined, { 'Content-Type': 'text/plain' });
    assert.equal(text.status, 400, `no body at all is an empty request: ${shown(text)}`);
    const form = await httpRequest(`${rig.service.url}/writecard`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'credits=5',
    });
    assert.equal(form.status, 415, shown(form));
    assert.equal((form.json as { error: string }).error, 'UnsupportedMediaType', shown(form));
    const duplicate = await post('/writecard', '{"credits": 1, "credits": 500}');
    assert.equal((duplicate.json as { error: string }).error, 'InvalidJson', shown(duplicate));
    const poisoned = await post('/writecard', '{"credits": 1, "__proto__": {"admin": true}}');
    assert.equal((poisoned.json as { error: string }).error, 'InvalidJson', shown(poisoned));
    assert.equal(rig.reader.apdus.length, 0);
  });

  test("when the shop's pool cannot cover it, then 500 NoCredits and neither card nor pool change", async () => {
    const card = await rig.cardHolding(10);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/writecard', { credits: before + 1 });
      if (before + 1 > 100_000) return; // the bound would refuse first
      assert.equal(res.status, 500, shown(res));
      assert.deepEqual(res.json, { error: 'NoCredits' }, shown(res));
      assert.equal(balanceOf(card), 10);
      assert.equal(await pool(), before);
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });

  test('when the card holds a negative balance, then 500 NegativeCredits and nothing moves', async () => {
    const card = await rig.cardHolding(-5);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/writecard', { credits: 5 });
      assert.deepEqual(res.json, { error: 'NegativeCredits' }, shown(res));
      assert.equal(balanceOf(card), -5);
      assert.equal(await pool(), before);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the new balance would not fit on the card, then 500 CardBalanceOverflow and nothing moves', async () => {
    const card = await rig.cardHolding(2_147_483_640);
    await rig.present(card);
    try {
      const res = await post('/writecard', { credits: 10 });
      assert.deepEqual(res.json, { error: 'CardBalanceOverflow' }, shown(res));
      assert.equal(balanceOf(card), 2_147_483_640);
    } finally {
      await rig.takeAway();
    }
  });

  test('when there is no card, then 400 NoCard and no ledger movement', async () => {
    const before = await pool();
    const res = await post('/writecard', { credits: 5 });
    assert.deepEqual(res.json, { error: 'NoCard' }, shown(res));
    assert.equal(await pool(), before);
  });

  test('when 20 recharges of one card come at once, then they run one by one and the balance is exact', async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      const before = await pool();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post('/writecard', { credits: i + 1 })),
      );
      const refused = answers.filter((res) => res.status !== 200).map(shown);
      assert.deepEqual(refused, [], 'every recharge of the burst answered 200');
      const total = (20 * 21) / 2;
      assert.equal(balanceOf(card), total);
      assert.equal(await pool(), before - total);
      const balances = answers
        .map((res) => (res.json as { credits: number }).credits)
        .sort((a, b) => a - b);
      assert.equal(balances.at(-1), total, 'the last answer shows the final balance');
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });
});

describe('POST /dischargecard', () => {
  test('when a card holding 40 is discharged, then it is cleared and the pool gets 40 back', async () => {
    const card = await rig.cardHolding(40);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/dischargecard');
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, dischargedCredits: 40, dischargedAmount: 20 },
        shown(res),
      );
      assert.equal(balanceOf(card), 0);
      // The post that returns the credits follows the answer, in the background.
      await rig.settled();
      assert.equal(await pool(), before + 40);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the card is at 0, then 200 with zeros, nothing written and no ledger call', async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      rig.reader.resetApduLog();
      const calls = rig.ledgerProxy.requests.filter((r) =>
        r.path.startsWith('/v1/movements'),
      ).length;
      const res = await post('/dischargecard');
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, dischargedCredits: 0, dischargedAmount: 0 },
        shown(res),
      );
      assert.equal(rig.reader.counts.write, 0);
      assert.equal(
        rig.ledgerProxy.requests.filter((r) => r.path.startsWith('/v1/movements')).length,
        calls,
      );
    } finally {
      await rig.takeAway();
    }
  });

  test('when the ledger cannot record the discharge, then 500 ErrorTrackingDischargeMovement and the card is untouched', async () => {
    const card = await rig.cardHolding(30);
    await rig.present(card);
    try {
      const before = await pool();
      rig.ledgerProxy.setMode({ kind: 'refuse' });
      const res = await post('/dischargecard');
      assert.equal(res.status, 500, shown(res));
      assert.deepEqual(res.json, { error: 'ErrorTrackingDischargeMovement' }, shown(res));
      assert.equal(rig.reader.card === card && balanceOf(card), 30);
      rig.ledgerProxy.setMode({ kind: 'pass' });
      await rig.settled();
      assert.equal(await pool(), before);
    } finally {
      await rig.takeAway();
    }
  });
});

describe('tearing: the card pulled at every APDU of a movement', () => {
  const steps: [string, FaultTrigger][] = [
    ['authenticate', { command: 'authenticate' }],
    ['read slot 0', { command: 'read', nth: 1 }],
    ['read slot 1', { command: 'read', nth: 2 }],
    ['UID check', { command: 'getUid' }],
    ['write', { command: 'write' }],
    ['read back', { command: 'read', nth: 3 }],
  ];
  for (const kind of ['recharge', 'discharge'] as const) {
    for (const [step, trigger] of steps) {
      for (const mode of ['pull-before', 'pull-after'] as const) {
        test(`when a ${kind} loses the card at the ${step} (${mode}), then after it is presented again the money is exact`, async () => {
          const start = 100;
          const card = await rig.cardHolding(start);
          await rig.present(card);
          const poolBefore = await pool();
          const fault = card.failAt(trigger, mode);
          const res: HttpResponse =
            kind === 'recharge'
              ? await post('/writecard', { credits: 10 })
              : await post('/dischargecard');
          assert.ok(fault.fired, 'the fault hit');
          await rig.reader.waitForRemoval();
          await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
          // The card comes back; whatever was left undecided is decided by what it holds.
          await rig.present(card);
          try {
            await rig.settled();
            const moved = balanceOf(card) - start;
            assert.equal(
              await pool(),
              poolBefore - moved,
              'card and pool moved by the same credits',
            );
            assert.ok(
              kind === 'recharge' ? moved === 0 || moved === 10 : moved === 0 || moved === -start,
              `moved ${moved}`,
            );
            if (res.status === 200) assert.notEqual(moved, 0, 'a 200 means it landed');
            else
              assert.match(
                String((res.json as { error: string }).error),
                /NoCard|CardRemovedDuringWrite|CardNotResponding/,
              );
            if ((res.json as { error?: string }).error === 'NoCard')
              assert.equal(moved, 0, 'NoCard means nothing moved');
          } finally {
            await rig.takeAway();
          }
        });
      }
    }
  }
});

describe('ledger faults at each ledger call', () => {
  for (const fault of ['refuse', 'error500', 'drop-response', 'slow'] as const) {
    for (const call of ['pending', 'post'] as const) {
      test(`when the ledger fails (${fault}) at the ${call} call, then the money ends exact once it is back`, async () => {
        const card = await rig.cardHolding(20);
        await rig.present(card);
        try {
          const poolBefore = await pool();
          rig.ledgerProxy.setMode(
            fault === 'slow' ? { kind: 'slow', delayMs: 8_000 } : { kind: fault },
            (method, path) =>
              method === 'POST' &&
              (call === 'pending' ? path === '/v1/movements' : path.endsWith('/post')),
          );
          const res = await post('/writecard', { credits: 5 });
          rig.ledgerProxy.setMode({ kind: 'pass' });
          await rig.settled();
          const moved = balanceOf(card) - 20;
          assert.equal(await pool(), poolBefore - moved);
          if (call === 'post') {
            // The card holds the truth: the caller gets 200, the outbox posts later.
            assert.equal(res.status, 200, shown(res));
            assert.equal(moved, 5);
          } else {
            assert.equal(res.status, 500, shown(res));
            assert.equal(moved, 0);
          }
        } finally {
          await rig.takeAway();
        }
      });
    }
  }
});

describe('Idempotency-Key', () => {
  test('when the same key and body come again, then the first answer is replayed without touching the card', async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      const first = await post('/writecard', { credits: 3 }, { 'Idempotency-Key': 'k-replay-1' });
      assert.equal(first.status, 200, shown(first));
      rig.reader.resetApduLog();
      const again = await post('/writecard', { credits: 3 }, { 'Idempotency-Key': 'k-replay-1' });
      assert.deepEqual(again.json, first.json);
      assert.equal(rig.reader.apdus.length, 0);
      assert.equal(balanceOf(card), 3);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the same key comes with another body, then 422', async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      const first = await post('/writecard', { credits: 3 }, { 'Idempotency-Key': 'k-other' });
      assert.equal(first.status, 200, shown(first));
      const res = await post('/writecard', { credits: 4 }, { 'Idempotency-Key': 'k-other' });
      assert.equal(res.status, 422, shown(res));
      assert.deepEqual(res.json, { error: 'IdempotencyKeyReused' }, shown(res));
      assert.equal(balanceOf(card), 3);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the same key comes while the first is still running, then 409', async () => {
    const card = await rig.cardHolding(0);
    await rig.present(card);
    try {
      card.failAt('write', { delayMs: 300 });
      const [first, second] = await Promise.all([
        post('/writecard', { credits: 2 }, { 'Idempotency-Key': 'k-busy' }),
        new Promise((resolve) => setTimeout(resolve, 100)).then(() =>
          post('/writecard', { credits: 2 }, { 'Idempotency-Key': 'k-busy' }),
        ),
      ]);
      assert.equal(first.status, 200, shown(first));
      assert.equal(second.status, 409, shown(second));
      assert.deepEqual(second.json, { error: 'IdempotencyKeyInUse' }, shown(second));
      assert.equal(balanceOf(card), 2);
    } finally {
      await rig.takeAway();
    }
  });

  test('when a write was left uncertain, then a retry with the same key resumes it and answers the truth', async () => {
    const card = await rig.cardHolding(50);
    await rig.present(card);
    const poolBefore = await pool();
    card.failAt('write', 'pull-after');
    const first = await post('/writecard', { credits: 8 }, { 'Idempotency-Key': 'k-torn' });
    assert.deepEqual(first.json, { error: 'CardRemovedDuringWrite' }, shown(first));
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await rig.present(card);
    try {
      const retry = await post('/writecard', { credits: 8 }, { 'Idempotency-Key': 'k-torn' });
      assert.equal(retry.status, 200, shown(retry));
      assert.deepEqual(
        withoutReceipt(retry.json),
        { cardId: card.id, credits: 58, rechargeAmount: 4 },
        shown(retry),
      );
      assert.equal(balanceOf(card), 58, 'credited once');
      await rig.settled();
      assert.equal(await pool(), poolBefore - 8);
    } finally {
      await rig.takeAway();
    }
  });
});

describe('the torn first write', () => {
  test('when the first write to a blank card tears (slot 0 torn, slot 1 blank), then this worker counts the card as blank and it works again', async () => {
    const card = await rig.cardHolding(null);
    await rig.present(card);
    const poolBefore = await pool();
    const fault = card.failAt('write', 'tear');
    const torn = await post('/writecard', { credits: 10 });
    assert.ok(fault.fired, 'the fault hit');
    assert.deepEqual(torn.json, { error: 'CardRemovedDuringWrite' }, shown(torn));
    assert.equal(decodeSlot(card.block(4)).kind, 'invalid', 'slot 0 torn');
    assert.equal(decodeSlot(card.block(5)).kind, 'blank', 'slot 1 blank');
    await rig.reader.waitForRemoval();
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await rig.present(card);
    try {
      await rig.settled();
      assert.equal(await pool(), poolBefore, 'the torn write moved nothing');
      const read = await get('/readcard');
      assert.equal(read.status, 200, shown(read));
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 0,
        rechargeAmount: null,
      });
      const res = await post('/writecard', { credits: 10 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, credits: 10, rechargeAmount: 5 },
        shown(res),
      );
      assert.equal(balanceOf(card), 10);
      await rig.settled();
      assert.equal(await pool(), poolBefore - 10);
    } finally {
      await rig.takeAway();
    }
  });

  test('when a card shows slot 0 torn next to a blank slot 1 and the journal did not see it tear, then it stays CorruptCard and is not written', async () => {
    const card = await rig.cardHolding(null);
    // Torn by someone else (another till, a vending machine's transfer): it may have held 50.
    const torn = Buffer.concat([encodeValueBlock(50, 1).subarray(0, 8), Buffer.alloc(8)]);
    card.setBlock(4, torn);
    const dump = card.dump();
    await rig.present(card);
    try {
      for (const res of [await get('/readcard'), await post('/writecard', { credits: 5 })]) {
        assert.equal(res.status, 500, shown(res));
        assert.deepEqual(res.json, { error: 'CorruptCard' }, shown(res));
      }
      assert.ok(card.dump().equals(dump), 'the card is unchanged');
    } finally {
      await rig.takeAway();
    }
  });
});
