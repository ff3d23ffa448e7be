/**
 * Someone between the till and a DESFire card (docs/card-security.md, "DESFire"), over real
 * HTTP, pcscd and a real ledger. EV1 secure messaging sends no CMAC with a plain command, so
 * whoever can alter the card's answer to a write can also send it a CommitTransaction of their
 * own (`90 C7 00 00 00`), and swallow the till's AbortTransaction or reselect. The virtual card
 * plays that part (VirtualDesfireCard.intercept): its transactions are as libfreefare's tests
 * show a real card's (a pending change survives a new authentication, and is dropped by
 * AbortTransaction, SelectApplication, an error, or the power).
 *
 * What the till does: after an answer it cannot verify, it aborts the card's transaction and
 * answers CardAnswerUnverified; the card read again decides the movement. When the abort does not
 * reach the card, what lands is flagged on the next read, at the till and at the ledger, and the
 * card is not paid out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CardAnswer } from '../../service/http/activity.ts';
import {
  decodeMovementRecord,
  DEFAULT_DESFIRE_AID,
  RECORD_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { startCardRig, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, httpRequest, shown, withoutReceipt } from '../support/http-client.ts';
import { shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import type { Interception, VirtualDesfireCard } from '../support/virtual-card.ts';

// A test master key (never a real one: this file is public).
const MASTER = '8E2A1F0C5B7D9364A0C3E5F71B2D4F60';
/** The attacker's CommitTransaction: a plain command, so it carries no CMAC in EV1. */
const COMMIT = Buffer.from('90C7000000', 'hex');

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardMasterKey: MASTER, cardTimeoutMs: 1_500 })));
after(() => rig.close());

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const pool = () => shopCredits(rig.ledger.url);

interface LedgerCard {
  credits: number;
  suspect: boolean;
  flags: { kind: string; movementId: string; record: unknown }[];
  movements: { id: string; state: string; credits: number }[];
}

async function atLedger(cardId: string): Promise<LedgerCard> {
  const res = await httpRequest(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
    contract: false, // the ledger's answer, not the worker's
  });
  assert.equal(res.status, 200, res.text);
  return res.json as LedgerCard;
}

/** The card's movement records, newest last. */
function records(card: VirtualDesfireCard) {
  const file = card.application(DEFAULT_DESFIRE_AID)?.files.get(RECORD_FILE);
  return file?.type === 'cyclic-record' ? file.records.map(decodeMovementRecord) : [];
}

/** What the tray hears of cards while `run` runs. */
async function trayHears(run: () => Promise<void>): Promise<CardAnswer[]> {
  const heard: CardAnswer[] = [];
  const listen = (answer: CardAnswer) => heard.push(answer);
  rig.service.activity.on('card-answer', listen);
  try {
    await run();
  } finally {
    rig.service.activity.off('card-answer', listen);
  }
  return heard;
}

/**
 * A personalized card on the reader holding 40 under a till record (30 imported, then a
 * recharge of 10), everything settled; runs `attack`, then takes the card away.
 */
async function onTheReader(attack: (card: VirtualDesfireCard) => Promise<void>): Promise<void> {
  const card = await rig.desfireCardHolding(30);
  await rig.present(card);
  try {
    const loaded = await call('POST', '/writecard', { credits: 10 });
    assert.equal(loaded.status, 200, shown(loaded));
    await rig.settled();
    assert.deepEqual(
      records(card).map((record) => [record.counter, record.valueAfter]),
      [[1, 40]],
    );
    await attack(card);
  } finally {
    await rig.takeAway();
  }
}

/** POST /cards/settle: the card read again under a fresh authentication decides the write. */
async function readAgain(): Promise<void> {
  const settled = await call('POST', '/cards/settle');
  assert.equal(settled.status, 200, shown(settled));
  await rig.settled();
}

describe('DESFire: an answer the till cannot verify', () => {
  for (const [command, interception] of [
    ['credit', 'tamper-cmac'],
    ['credit', 'drop-cmac'],
    ['credit', 'forge-error'],
    ['writeRecord', 'tamper-cmac'],
  ] as const satisfies readonly [string, Interception][]) {
    test(`when the answer to a recharge's ${command} is altered (${interception}) and a commit is injected afterwards, then nothing lands: the card stays where the ledger has it, and the caller gets CardAnswerUnverified`, async () => {
      await onTheReader(async (card) => {
        const poolBefore = await pool();
        const altered = card.intercept(command, interception);
        const res = await call('POST', '/writecard', { credits: 5 });
        assert.ok(altered.fired, `the ${command}'s answer was altered`);
        assert.deepEqual(res.json, { error: 'CardAnswerUnverified' }, shown(res));
        const injected = card.intercept('selectApplication', { inject: COMMIT });
        const read = await call('GET', '/readcard');
        assert.ok(injected.fired, 'the commit was injected before the next read');
        assert.deepEqual(
          read.json,
          { cardId: card.id, credits: 40, rechargeAmount: null },
          shown(read),
        );
        assert.equal(walletBalance(card), 40, 'the abort dropped the pending credit');
        assert.equal(records(card).length, 1);
        await readAgain();
        assert.equal(await pool(), poolBefore, 'the movement was voided: nothing reserved');
        const ledger = await atLedger(card.id);
        assert.equal(ledger.credits, 40);
        assert.equal(ledger.suspect, false);
      });
    });
  }

  test("when the commit's answer is altered, then the caller gets CardAnswerUnverified (the card never left), and a retry with the same Idempotency-Key, the card read again, answers the truth: credited once", async () => {
    await onTheReader(async (card) => {
      const poolBefore = await pool();
      card.intercept('commit', 'tamper-cmac');
      const key = { 'Idempotency-Key': 'df-unverified-commit' };
      const first = await call('POST', '/writecard', { credits: 5 }, key);
      assert.deepEqual(first.json, { error: 'CardAnswerUnverified' }, shown(first));
      const retry = await call('POST', '/writecard', { credits: 5 }, key);
      assert.deepEqual(
        withoutReceipt(retry.json),
        { cardId: card.id, credits: 45, rechargeAmount: 2.5 },
        shown(retry),
      );
      assert.equal(walletBalance(card), 45);
      await rig.settled();
      assert.equal(await pool(), poolBefore - 5);
    });
  });
});

describe('DESFire: the abort swallowed, the commit injected', () => {
  test('when the credit lands without its record, then the next read flags the card at the till, and its payout is refused (CardRecordMismatch) and flagged card-above-record at the ledger', async () => {
    await onTheReader(async (card) => {
      const poolBefore = await pool();
      card.intercept('credit', 'tamper-cmac');
      const swallowed = card.intercept('abort', 'swallow');
      const res = await call('POST', '/writecard', { credits: 5 });
      assert.deepEqual(res.json, { error: 'CardAnswerUnverified' }, shown(res));
      assert.ok(swallowed.fired, 'the till sent AbortTransaction');
      card.intercept('selectApplication', { inject: COMMIT });

      const heard = await trayHears(async () => {
        const read = await call('GET', '/readcard');
        assert.equal((read.json as { credits: number }).credits, 45, shown(read));
      });
      assert.equal(walletBalance(card), 45, 'the injected commit landed');
      assert.deepEqual(
        records(card).map((record) => record.valueAfter),
        [40],
      );
      assert.ok(
        heard.some((answer) => answer.suspect && answer.suspectReason === 'card-above-record'),
        `the tray heard ${JSON.stringify(heard)}`,
      );

      const payout = await call('POST', '/dischargecard');
      assert.deepEqual(payout.json, { error: 'CardRecordMismatch' }, shown(payout));
      assert.equal(walletBalance(card), 45, 'not paid out');
      await rig.settled();
      assert.equal(await pool(), poolBefore, 'the recharge was voided, nothing paid out');
      const ledger = await atLedger(card.id);
      assert.equal(ledger.credits, 40);
      const [loaded] = ledger.movements.filter((m) => m.state === 'posted');
      assert.ok(
        ledger.flags.some(
          (flag) =>
            flag.kind === 'card-above-record' &&
            JSON.stringify(flag.record) ===
              JSON.stringify({ counter: 1, movementId: loaded?.id, valueAfter: 40 }),
        ),
        JSON.stringify(ledger.flags),
      );
    });
  });

  test('when the record lands with the credit before the card is read again, then the records decide the recharge committed and the ledger books it: card and ledger agree, nothing flagged', async () => {
    await onTheReader(async (card) => {
      const poolBefore = await pool();
      card.intercept('writeRecord', 'tamper-cmac');
      card.intercept('abort', 'swallow');
      const res = await call('POST', '/writecard', { credits: 5 });
      assert.deepEqual(res.json, { error: 'CardAnswerUnverified' }, shown(res));
      card.intercept('selectApplication', { inject: COMMIT });
      await readAgain();
      assert.equal(walletBalance(card), 45);
      assert.equal(await pool(), poolBefore - 5);
      const ledger = await atLedger(card.id);
      assert.equal(ledger.credits, 45);
      assert.equal(ledger.suspect, false);
    });
  });

  test("when the till's deciding read is fooled too (its reselect swallowed) and the commit injected after it, then the card's newest record names a movement the ledger voided: flagged at the till on the next read, and its payout refused and flagged at the ledger", async () => {
    await onTheReader(async (card) => {
      const poolBefore = await pool();
      card.intercept('writeRecord', 'tamper-cmac');
      card.intercept('abort', 'swallow');
      const res = await call('POST', '/writecard', { credits: 5 });
      assert.deepEqual(res.json, { error: 'CardAnswerUnverified' }, shown(res));
      // The transaction survives the till's new authentication (as on a real card), and the
      // records show no new one: the till decides the write did not land, and voids it.
      const reselect = card.intercept('selectApplication', 'swallow');
      await readAgain();
      assert.ok(reselect.fired);
      assert.equal(await pool(), poolBefore, 'voided');
      card.intercept('selectApplication', { inject: COMMIT });

      const heard = await trayHears(async () => {
        const read = await call('GET', '/readcard');
        assert.equal((read.json as { credits: number }).credits, 45, shown(read));
      });
      const newest = records(card).at(-1);
      assert.deepEqual([newest?.counter, newest?.valueAfter], [2, 45], 'value and record agree');
      assert.ok(
        heard.some(
          (answer) => answer.suspect && answer.suspectReason === 'record-of-voided-movement',
        ),
        `the tray heard ${JSON.stringify(heard)}`,
      );

      const payout = await call('POST', '/dischargecard');
      assert.deepEqual(payout.json, { error: 'CardRecordMismatch' }, shown(payout));
      assert.equal(walletBalance(card), 45, 'not paid out');
      await rig.settled();
      assert.equal(await pool(), poolBefore);
      const ledger = await atLedger(card.id);
      const voided = ledger.movements.find((m) => m.state === 'voided');
      assert.ok(
        ledger.flags.some(
          (flag) =>
            flag.kind === 'record-of-voided-movement' &&
            (flag.record as { movementId: string }).movementId === voided?.id,
        ),
        JSON.stringify(ledger),
      );
    });
  });
});
