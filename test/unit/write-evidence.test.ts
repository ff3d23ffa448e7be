/**
 * The ledger's list of a card's movements as evidence of one write (write-evidence.ts): a later
 * movement planned from the very state a payout's write leaves, and no other write that could
 * leave it, show the payout landed though the card moved on since.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LedgerMovement } from '../../service/cloud/ledger-client.ts';
import type { WalletCard, WriteDecision } from '../../service/card/card-face.ts';
import {
  landedPerList,
  onlyWriteLeaving,
  writeShownBy,
} from '../../service/wallet/write-evidence.ts';
import { CARD, OTHER_TILL, ledgerMovement } from '../support/money-rig.ts';

/** 27 credits at generation 103 in slot 0; a payout from it leaves 0 at 104 in slot 1. */
const BEFORE = 'classic:v1:27:103:0';
const LEFT = 'classic:v1:0:104:1';

/** A movement of CARD as GET /v1/cards/{id} lists it: another till's posted payout of 27. */
const listed = (fields: Partial<LedgerMovement> = {}): LedgerMovement =>
  ledgerMovement({
    kind: 'discharge',
    state: 'posted',
    credits: 27,
    amount: '13.50',
    tillId: OTHER_TILL,
    ...fields,
  });

/** A payout voided by an operator, and a float recharge another till sold over it. */
function payoutAndSaleOverIt() {
  const payout = listed({ cardBefore: BEFORE, state: 'voided', awaitsCard: true });
  const sale = listed({ kind: 'recharge', credits: 4, cardBefore: LEFT, tillId: 'till-b' });
  return { payout, sale };
}

describe('landedPerList', () => {
  test("when a later movement was planned from the state only a voided payout's write leaves, then the list says the payout landed and names that movement", () => {
    const { payout, sale } = payoutAndSaleOverIt();
    const older = listed({ kind: 'recharge', credits: 20, cardBefore: 'classic:v1:7:102:1' });
    assert.equal(
      landedPerList(payout.id, [sale, payout, older]),
      `movement ${sale.id} (till till-b) was planned from ${LEFT}, the state only this write leaves`,
    );
  });

  test('when no later movement was planned from that state, then the list says nothing, though no other write leaves it', () => {
    const { payout } = payoutAndSaleOverIt();
    const elsewhere = listed({ kind: 'recharge', credits: 4, cardBefore: BEFORE });
    assert.equal(landedPerList(payout.id, [elsewhere, payout]), undefined);
    assert.equal(onlyWriteLeaving(payout.id, [elsewhere, payout]), true);
  });

  test('when another listed write leaves the very same state (a payout from the same generation after a machine spent, a block cleared), whatever its state, then nothing is said', () => {
    const { payout, sale } = payoutAndSaleOverIt();
    for (const other of [
      listed({ cardBefore: 'classic:v1:12:103:0' }),
      listed({ cardBefore: BEFORE, state: 'voided' }),
      listed({ kind: 'block-clear', cardBefore: 'classic:v1:5:103:0' }),
      listed({ kind: 'refund', credits: 27, cardBefore: BEFORE, state: 'pending' }),
    ]) {
      const all = [sale, other, payout];
      assert.equal(landedPerList(payout.id, all), undefined, JSON.stringify(other));
      assert.equal(onlyWriteLeaving(payout.id, all), false, JSON.stringify(other));
    }
  });

  test('when a listed write other than a recharge carries no card state this till reads, then nothing is said; a recharge without one cannot leave a card at 0, nor a compensation write it', () => {
    const { payout, sale } = payoutAndSaleOverIt();
    const unread = [
      listed({ cardBefore: null }),
      listed({ kind: 'correction', cardBefore: 'other-format:7' }),
    ];
    for (const other of unread) {
      assert.equal(landedPerList(payout.id, [sale, other, payout]), undefined, other.kind);
    }
    const harmless = [
      listed({ kind: 'recharge', credits: 9, cardBefore: null }),
      listed({ kind: 'replacement', credits: 9, cardBefore: null }),
      listed({ kind: 'discharge', compensates: payout.id }),
    ];
    assert.match(landedPerList(payout.id, [sale, ...harmless, payout]) ?? '', /was planned from/);
  });

  test('when the write leaves credits on the card (a recharge, a partial refund), then nothing is said: a float recharge the ledger has not heard of yet may leave the same state', () => {
    const recharge = listed({ kind: 'recharge', credits: 4, cardBefore: BEFORE });
    const refund = listed({ kind: 'refund', credits: 7, cardBefore: BEFORE });
    for (const write of [recharge, refund]) {
      const after = write.kind === 'recharge' ? 'classic:v1:31:104:1' : 'classic:v1:20:104:1';
      const reader = listed({ kind: 'recharge', credits: 1, cardBefore: after });
      assert.equal(onlyWriteLeaving(write.id, [reader, write]), false, write.kind);
      assert.equal(landedPerList(write.id, [reader, write]), undefined, write.kind);
    }
    const wholeRefund = listed({ kind: 'refund', credits: 27, cardBefore: BEFORE });
    const reader = listed({ kind: 'recharge', credits: 1, cardBefore: LEFT });
    assert.match(landedPerList(wholeRefund.id, [reader, wholeRefund]) ?? '', /was planned from/);
  });

  test('when the list is cut at its 100 newest, or does not hold the payout, or the payout carries no Classic card state, then nothing is said', () => {
    const { payout, sale } = payoutAndSaleOverIt();
    const filler = Array.from({ length: 97 }, () =>
      listed({ kind: 'recharge', credits: 1, cardBefore: 'classic:v1:1:50:0' }),
    );
    assert.match(landedPerList(payout.id, [sale, payout, ...filler]) ?? '', /planned from/);
    const more = listed({ kind: 'recharge', credits: 1, cardBefore: 'classic:v1:1:50:0' });
    assert.equal(landedPerList(payout.id, [sale, payout, ...filler, more]), undefined);
    assert.equal(landedPerList(payout.id, [sale]), undefined);
    const desfire = listed({ cardBefore: 'desfire:v1:27:103' });
    assert.equal(landedPerList(desfire.id, [sale, desfire]), undefined);
    assert.equal(onlyWriteLeaving(desfire.id, [sale, desfire]), false);
  });
});

describe('writeShownBy', () => {
  /** A card that shows `outcome` for any write it is asked about. */
  const showing = (outcome: WriteDecision['outcome']) =>
    ({ cardId: CARD, decide: async () => ({ outcome }) }) as unknown as WalletCard;
  const evidence = (shows: string) => `card ${CARD} read at till till-c: it ${shows}`;

  test("when the card shows the write, or not, then that is its word, whatever the ledger's list says; when it shows neither, the list's word that it landed, or nothing", async () => {
    const { payout, sale } = payoutAndSaleOverIt();
    const listedBoth = [sale, payout];
    const shown = async (outcome: WriteDecision['outcome'], list = listedBoth) =>
      writeShownBy(showing(outcome), payout, 'till-c', list);
    assert.deepEqual(
      [
        await shown('committed'),
        await shown('not-written'),
        await shown('unknown'),
        await shown('unknown', [payout]),
      ],
      [
        { outcome: 'committed', evidence: evidence(`holds the write from ${BEFORE} to 0 credits`) },
        {
          outcome: 'not-written',
          evidence: evidence(`does not hold the write from ${BEFORE} to 0 credits`),
        },
        {
          outcome: 'committed',
          evidence: evidence(
            `shows neither the balance before nor after the write, but movement ${sale.id} (till till-b) was planned from ${LEFT}, the state only this write leaves`,
          ),
        },
        {
          outcome: 'unknown',
          evidence: evidence('shows neither the balance before nor after the write'),
        },
      ],
    );
    assert.equal(await writeShownBy(showing('committed'), listed(), 'till-c', []), undefined);
  });
});
