// Money on MIFARE DESFire cards over the real PC/SC stack (nfc-pcsc -> pcscd -> vpcd -> the
// virtual DESFire card) and a real ledger, with per-card keys: read, recharge and discharge,
// and the faults of the MIFARE Classic money tests (test/pcsc/money.test.ts): the card pulled at
// every command of a movement, before or after the card took it; the ledger failing at each
// call; a retry under the same Idempotency-Key; a card that stalls. Whatever happens, the card
// and the shop's pool move by the same credits, and a 200 means the card holds it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  decodeMovementRecord,
  DEFAULT_DESFIRE_AID,
  RECORD_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse, withoutReceipt } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import type { FaultTrigger, VirtualDesfireCard } from '../support/virtual-card.ts';

// A test master key (never a real one: this file is public).
const MASTER = '8E2A1F0C5B7D9364A0C3E5F71B2D4F60';

let rig: CardRig;
before(
  async () =>
    (rig = await startCardRig({
      cardMasterKey: MASTER,
      cardTimeoutMs: 1_500,
      cardQueueLimit: 32,
    })),
);
after(() => rig.close());
beforeEach(() => rig.ledgerProxy.setMode({ kind: 'pass' }));

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const post = (path: string, body?: unknown, headers?: Record<string, string>) =>
  call('POST', path, body, headers);
const pool = () => shopCredits(rig.ledger.url);

/** The movement records the card holds, newest last. */
function records(card: VirtualDesfireCard) {
  const file = card.application(DEFAULT_DESFIRE_AID)?.files.get(RECORD_FILE);
  return file?.type === 'cyclic-record' ? file.records.map(decodeMovementRecord) : [];
}

async function withCard(card: VirtualDesfireCard, run: () => Promise<void>): Promise<void> {
  await rig.present(card);
  try {
    await run();
  } finally {
    await rig.takeAway();
  }
}

describe('DESFire: GET /readcard', () => {
  test('when a personalized card holding 40, a factory-fresh card and a card not personalized yet are read, then they show 40, 0 and their credits', async () => {
    const cards: [VirtualDesfireCard, number][] = [
      [await rig.desfireCardHolding(40), 40],
      [await rig.desfireCardHolding(null), 0],
    ];
    for (const [card, credits] of cards) {
      await withCard(card, async () => {
        const res = await call('GET', '/readcard');
        assert.deepEqual(
          withoutReceipt(res.json),
          { cardId: card.id, credits, rechargeAmount: null },
          shown(res),
        );
        assert.equal(rig.service.readers.status.problem, null);
      });
    }
  });
});

describe('DESFire: POST /writecard', () => {
  test('when a factory-fresh card is recharged, then it is personalized first and the card and the pool move by exactly the credits', async () => {
    const card = await rig.desfireCardHolding(null);
    await withCard(card, async () => {
      const before = await pool();
      const res = await post('/writecard', { credits: 50 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, credits: 50, rechargeAmount: 25 },
        shown(res),
      );
      assert.equal(walletBalance(card), 50);
      assert.equal(card.piccKey.type, 'aes', 'its own PICC key');
      assert.deepEqual(
        records(card).map((r) => [r.counter, r.valueAfter]),
        [[1, 50]],
      );
      assert.equal(await pool(), before - 50);
      await rig.settled();
    });
  });

  test('when a card is recharged by amount, then credits are rounded down and rechargeAmount is credits x cost', async () => {
    const card = await rig.desfireCardHolding(100);
    await withCard(card, async () => {
      const before = await pool();
      const res = await post('/writecard', { amount: 12.34 });
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, credits: 124, rechargeAmount: 12 },
        shown(res),
      );
      assert.equal(walletBalance(card), 124);
      assert.equal(await pool(), before - 24);
      await rig.settled();
    });
  });

  test("when the shop's pool cannot cover it, then 500 NoCredits and neither card nor pool change", async () => {
    const card = await rig.desfireCardHolding(10);
    await withCard(card, async () => {
      const before = await pool();
      const res = await post('/writecard', { credits: before + 1 });
      assert.deepEqual(res.json, { error: 'NoCredits' }, shown(res));
      assert.equal(walletBalance(card), 10);
      assert.equal(await pool(), before);
      await rig.settled();
    });
  });

  test('when the new balance would not fit on the card, then 500 CardBalanceOverflow and nothing moves', async () => {
    const card = await rig.desfireCardHolding(2_147_483_640);
    await withCard(card, async () => {
      const res = await post('/writecard', { credits: 10 });
      assert.deepEqual(res.json, { error: 'CardBalanceOverflow' }, shown(res));
      assert.equal(walletBalance(card), 2_147_483_640);
    });
  });

  test('when 10 recharges of one card come at once, then they run one by one, each with its record, and the balance is exact', async () => {
    const card = await rig.desfireCardHolding(0);
    await withCard(card, async () => {
      const before = await pool();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => post('/writecard', { credits: i + 1 })),
      );
      assert.deepEqual(
        answers.filter((res) => res.status !== 200).map(shown),
        [],
        'every recharge answered 200',
      );
      assert.equal(walletBalance(card), 55);
      assert.equal(await pool(), before - 55);
      assert.deepEqual(
        records(card).map((r) => r.counter),
        [2, 3, 4, 5, 6, 7, 8, 9, 10],
        'the 9 newest records',
      );
      await rig.settled();
    });
  });
});

describe('DESFire: POST /dischargecard', () => {
  test('when a card holding 40 is discharged, then it is cleared and the pool gets 40 back', async () => {
    const card = await rig.desfireCardHolding(40);
    await withCard(card, async () => {
      const before = await pool();
      const res = await post('/dischargecard');
      assert.deepEqual(
        withoutReceipt(res.json),
        { cardId: card.id, dischargedCredits: 40, dischargedAmount: 20 },
        shown(res),
      );
      assert.equal(walletBalance(card), 0);
      await rig.settled();
      assert.equal(await pool(), before + 40);
    });
  });

  test('when the card is at 0, then 200 with zeros and nothing written', async () => {
    const card = await rig.desfireCardHolding(0);
    await withCard(card, async () => {
      rig.reader.resetApduLog();
      const res = await post('/dischargecard');
      assert.deepEqual(withoutReceipt(res.json), {
        cardId: card.id,
        dischargedCredits: 0,
        dischargedAmount: 0,
      });
      const { credit, debit, writeRecord, commit } = rig.reader.counts;
      assert.deepEqual(
        { credit, debit, writeRecord, commit },
        { credit: 0, debit: 0, writeRecord: 0, commit: 0 },
      );
    });
  });

  test('when a card not personalized yet is discharged, then AuthenticationFail and nothing moves, as a MIFARE Classic card on the transport key', async () => {
    const card = await rig.desfireCardHolding(null);
    await withCard(card, async () => {
      const res = await post('/dischargecard');
      assert.deepEqual(res.json, { error: 'AuthenticationFail' }, shown(res));
    });
  });
});

/** Runs a movement with `trigger` armed, then presents the card again and checks the money. */
async function tornMovement(
  kind: 'recharge' | 'discharge',
  trigger: FaultTrigger,
  mode: 'pull-before' | 'pull-after',
): Promise<boolean> {
  const start = 100;
  const card = await rig.desfireCardHolding(start);
  await rig.present(card);
  const poolBefore = await pool();
  const fault = card.failAt(trigger, mode);
  const res: HttpResponse =
    kind === 'recharge' ? await post('/writecard', { credits: 10 }) : await post('/dischargecard');
  if (!fault.fired) {
    // The movement ended before that command: nothing more to pull.
    fault.cancel();
    await rig.settled();
    await rig.takeAway();
    return false;
  }
  await rig.reader.waitForRemoval();
  await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
  // The card comes back; whatever was left undecided is decided by its records.
  await rig.present(card);
  try {
    await rig.settled();
    const moved = walletBalance(card) - start;
    assert.equal(await pool(), poolBefore - moved, 'card and pool moved by the same credits');
    assert.ok(
      kind === 'recharge' ? moved === 0 || moved === 10 : moved === 0 || moved === -start,
      `moved ${moved}`,
    );
    if (res.status === 200) assert.notEqual(moved, 0, 'a 200 means it landed');
    else
      assert.match(
        String((res.json as { error: string }).error),
        /NoCard|CardRemovedDuringWrite|CardNotResponding/,
        shown(res),
      );
    if ((res.json as { error?: string }).error === 'NoCard')
      assert.equal(moved, 0, 'NoCard means nothing moved');
  } finally {
    await rig.takeAway();
  }
  return true;
}

describe('DESFire tearing: the card pulled at every command of a recharge', () => {
  // One sub-test per command, from the first after nfc-pcsc's GET UID (index 0) until a
  // recharge ends before the pull, so no command is skipped and none is guessed.
  for (const mode of ['pull-before', 'pull-after'] as const) {
    test(`when a recharge loses the card at each of its commands (${mode}), then after it is presented again the money is exact`, async (t) => {
      let pulled = true;
      let index = 1;
      for (; pulled; index += 1) {
        await t.test(`command ${index} (${mode})`, async () => {
          pulled = await tornMovement('recharge', { index }, mode);
        });
      }
      assert.ok(index > 15, `only ${index - 2} commands were pulled`);
    });
  }
});

describe('DESFire tearing: the card pulled at the commands that change a discharge', () => {
  for (const command of ['debit', 'writeRecord', 'commit'] as const) {
    for (const mode of ['pull-before', 'pull-after'] as const) {
      test(`when a discharge loses the card at its ${command} (${mode}), then after it is presented again the money is exact`, async () => {
        assert.ok(await tornMovement('discharge', command, mode), 'the fault hit');
      });
    }
  }
});

describe('DESFire: ledger faults at each ledger call', () => {
  for (const fault of ['refuse', 'error500', 'drop-response', 'slow'] as const) {
    for (const call of ['pending', 'post'] as const) {
      test(`when the ledger fails (${fault}) at the ${call} call, then the money ends exact once it is back`, async () => {
        const card = await rig.desfireCardHolding(20);
        await withCard(card, async () => {
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
          const moved = walletBalance(card) - 20;
          assert.equal(await pool(), poolBefore - moved);
          if (call === 'post') {
            assert.equal(res.status, 200, shown(res));
            assert.equal(moved, 5);
          } else {
            assert.equal(res.status, 500, shown(res));
            assert.equal(moved, 0);
          }
        });
      });
    }
  }
});

describe('DESFire: Idempotency-Key and an uncertain write', () => {
  test('when the card left right after it committed, then a retry with the same key resumes it and answers the truth, credited once', async () => {
    const card = await rig.desfireCardHolding(50);
    await rig.present(card);
    const poolBefore = await pool();
    card.failAt('commit', 'pull-after');
    const first = await post('/writecard', { credits: 8 }, { 'Idempotency-Key': 'df-torn' });
    assert.deepEqual(first.json, { error: 'CardRemovedDuringWrite' }, shown(first));
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await rig.present(card);
    try {
      const retry = await post('/writecard', { credits: 8 }, { 'Idempotency-Key': 'df-torn' });
      assert.deepEqual(
        withoutReceipt(retry.json),
        { cardId: card.id, credits: 58, rechargeAmount: 4 },
        shown(retry),
      );
      assert.equal(walletBalance(card), 58, 'credited once');
      await rig.settled();
      assert.equal(await pool(), poolBefore - 8);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the card stalls at its commit, then the write is uncertain (CardRemovedDuringWrite), and taken away and back the records decide it', async () => {
    const card = await rig.desfireCardHolding(30);
    await rig.present(card);
    const poolBefore = await pool();
    const stalled = card.failAt('commit', 'stall');
    const res = await post('/writecard', { credits: 6 });
    assert.deepEqual(res.json, { error: 'CardRemovedDuringWrite' }, shown(res));
    await stalled.triggered;
    await rig.takeAway();
    await rig.present(card);
    try {
      await rig.settled();
      assert.equal(walletBalance(card), 30, 'a stalled commit never took effect');
      assert.equal(await pool(), poolBefore);
    } finally {
      await rig.takeAway();
    }
  });
});
