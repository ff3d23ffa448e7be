/**
 * The changes waiting for a card (docs/integrators.md, "Replacement cards and corrections") as
 * the use cases apply them before their own movement, over the movement engine and the
 * simulated ledger: a replacement puts the lost card's account on the new one, a correction
 * takes back what an operator corrected; a change taken by another till or cancelled is
 * skipped after fetching the list again; a change the till's list did not know yet makes the
 * request fetch it, apply it and run once more. The http area's card-changes tests run the same
 * over real HTTP; these reach the use case from the unit tests alone.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import {
  applyCardChanges,
  isChangeWaiting,
  withCardChanges,
  type CardChanges,
  type WaitingChange,
} from '../../service/wallet/card-changes.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  SHOP,
  cardOnReader,
  eventually,
  fingerprint,
  replacementWaits,
  shopWithCard,
} from '../support/money-rig.ts';
import type { SimLedger } from '../simulation/sim-ledger.ts';

const keyFingerprint = fingerprint(KEY);
const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, detail: error.detail }
    : error instanceof LedgerRefusal
      ? { refusal: error.code, detail: error.detail }
      : { not: String(error) };

/** The till's card list over the simulated ledger: fetched on refresh(), or `known` by hand. */
function listOf(sim: SimLedger, { fetched = true } = {}) {
  let known: WaitingChange[] = fetched ? sim.cardRules.list(KEY).waiting : [];
  const calls: string[] = [];
  const changes: CardChanges = {
    waitingFor: (cardId) => known.filter((change) => change.cardId === cardId),
    refresh: async () => {
      calls.push('refresh');
      known = sim.cardRules.list(KEY).waiting;
    },
    applied: (changeId) => {
      calls.push(`applied ${changeId}`);
      known = known.filter((change) => change.id !== changeId);
    },
  };
  return { changes, calls };
}

const done = (engine: { unconfirmed: number }) =>
  eventually(() => engine.unconfirmed === 0, 'every movement resolved at the ledger');

describe('applyCardChanges', () => {
  test("when a replacement waits for the card, then the lost card's account is put on it with its own movement, and the list is told", async () => {
    const { sim, engine, card, changeId } = await replacementWaits();
    const { changes, calls } = listOf(sim);
    const applied = await applyCardChanges(card.card, engine, { changes, keyFingerprint });
    await done(engine);
    await engine.close();
    assert.equal(applied.length, 1, JSON.stringify(applied));
    const [{ movementId, ...rest }] = applied as [(typeof applied)[number]];
    assert.deepEqual(rest, { kind: 'replacement', changeId, credits: 30 });
    assert.equal(card.held(), 30);
    assert.deepEqual(calls, [`applied ${changeId}`]);
    const movement = sim.movements.get(movementId);
    assert.deepEqual(
      { kind: movement?.kind, state: movement?.state, applies: movement?.applies },
      { kind: 'replacement', state: 'posted', applies: changeId },
    );
  });

  test('when no list is given or nothing waits for the card, then nothing is applied and the card is not written', async () => {
    const { sim, engine, card } = await replacementWaits();
    const none = await applyCardChanges(card.card, engine, { changes: undefined, keyFingerprint });
    const other = cardOnReader(5, '04D1D1D1');
    const { changes } = listOf(sim);
    const notThis = await applyCardChanges(other.card, engine, { changes, keyFingerprint });
    await engine.close();
    assert.deepEqual([none, notThis], [[], []]);
    assert.deepEqual([card.writes, other.writes], [0, 0]);
  });

  test('when an operator corrected a recharge of the card, then the correction takes the credits back from the card', async () => {
    const { sim, card, engine } = await shopWithCard(30);
    const recharge = await rechargeCard(card.access, engine, {
      keyFingerprint,
      request: { credits: 10 },
      customer,
    });
    await done(engine);
    const changeId = randomUUID();
    sim.cardRules.correct(KEY, {
      id: changeId,
      cardId: CARD,
      recharge: recharge.movementId as string,
      credits: 4,
      by: 'owner',
      reason: 'keyed 10 for 6',
    });
    const { changes, calls } = listOf(sim);
    const applied = await applyCardChanges(card.card, engine, { changes, keyFingerprint });
    await done(engine);
    await engine.close();
    assert.deepEqual(
      applied.map(({ kind, changeId: id, credits }) => ({ kind, id, credits })),
      [{ kind: 'correction', id: changeId, credits: 4 }],
    );
    assert.equal(card.held(), 36);
    assert.deepEqual(calls, [`applied ${changeId}`]);
  });

  test('when a correction takes back all the card holds, then the card is left at 0; one the ledger plans for more than the card holds is NegativeCredits, the card not written', async () => {
    const { sim, ledger, card, engine } = await shopWithCard(0);
    const correct = async (credits: number) => {
      const recharge = await rechargeCard(card.access, engine, {
        keyFingerprint,
        request: { credits },
        customer,
      });
      await done(engine);
      sim.cardRules.correct(KEY, {
        id: randomUUID(),
        cardId: CARD,
        recharge: recharge.movementId as string,
        credits,
        by: 'owner',
        reason: 'not paid',
      });
      return listOf(sim).changes;
    };
    const all = await applyCardChanges(card.card, engine, {
      changes: await correct(10),
      keyFingerprint,
    });
    await done(engine);
    assert.deepEqual([all.map((change) => change.credits), card.held()], [[10], 0]);
    const changes = await correct(6);
    const create = ledger.createMovement;
    // A ledger that plans the correction for more than the card holds (cardCredits: 6).
    ledger.createMovement = async (apiKey, movement) => {
      const made = await create(apiKey, movement);
      return { ...made, credits: made.credits + 1 };
    };
    const writes = card.writes;
    const failure = await applyCardChanges(card.card, engine, { changes, keyFingerprint }).then(
      (applied) => ({ applied }),
      seen,
    );
    await engine.close();
    assert.equal((failure as { code?: string }).code, 'NegativeCredits', JSON.stringify(failure));
    assert.deepEqual([card.writes, card.held()], [writes, 6]);
  });

  for (const code of ['CardChangeTaken', 'InvalidCardChange']) {
    test(`when the ledger refuses the change as ${code} (taken by another till, or cancelled), then the list is fetched again and the change skipped`, async () => {
      const { sim, ledger, engine, card } = await replacementWaits();
      const { changes, calls } = listOf(sim);
      ledger.createMovement = () => Promise.reject(new LedgerRefusal(409, code, 'by the rig'));
      const applied = await applyCardChanges(card.card, engine, { changes, keyFingerprint });
      await engine.close();
      assert.deepEqual(applied, []);
      assert.deepEqual(calls, ['refresh']);
      assert.equal(card.writes, 0);
    });
  }

  test("when the ledger refuses the change for another till's open movement, then MovementPendingAtOtherTill; other refusals and outages as they are", async () => {
    const { sim, ledger, engine, card } = await replacementWaits();
    const { changes, calls } = listOf(sim);
    const failing = async (error: Error) => {
      ledger.createMovement = () => Promise.reject(error);
      return applyCardChanges(card.card, engine, { changes, keyFingerprint }).then(
        (applied) => ({ applied }),
        seen,
      );
    };
    const otherTill = await failing(new LedgerRefusal(409, 'CardMovementPending', 'movement m'));
    const floats = await failing(new LedgerRefusal(409, 'FloatReportPending', 'float f'));
    const other = await failing(new LedgerRefusal(422, 'SomethingNew', 'x'));
    const outage = await failing(errors.ledgerUnavailable());
    await engine.close();
    assert.equal(
      (otherTill as { code?: string }).code,
      'MovementPendingAtOtherTill',
      JSON.stringify(otherTill),
    );
    assert.equal(
      (floats as { code?: string }).code,
      errors.floatRechargeUnreported().code,
      JSON.stringify(floats),
    );
    assert.deepEqual(other, { refusal: 'SomethingNew', detail: 'x' });
    assert.equal((outage as { code?: string }).code, 'LedgerUnavailable', JSON.stringify(outage));
    assert.deepEqual(calls, [], 'the list is not fetched again');
    assert.equal(card.writes, 0);
  });

  test('when the card holds a negative balance, then NegativeCredits and nothing is asked of the ledger', async () => {
    const { sim, ledger, engine } = await replacementWaits();
    const card = cardOnReader(-5);
    const { changes } = listOf(sim);
    const calls = ledger.calls.length;
    const failure = await applyCardChanges(card.card, engine, { changes, keyFingerprint }).then(
      (applied) => ({ applied }),
      seen,
    );
    await engine.close();
    assert.equal((failure as { code?: string }).code, 'NegativeCredits', JSON.stringify(failure));
    assert.deepEqual(ledger.calls.slice(calls), []);
  });
});

describe('withCardChanges', () => {
  const changeWaiting = (detail?: string) => new LedgerRefusal(409, 'CardChangeWaiting', detail);

  test('when the request runs through, then its answer, after the changes the list knew', async () => {
    const { sim, engine, card, changeId } = await replacementWaits();
    const { changes, calls } = listOf(sim);
    const heldWhenRun: number[] = [];
    const answer = await withCardChanges(
      card.card,
      engine,
      { changes, keyFingerprint },
      async () => {
        heldWhenRun.push(card.held());
        return 'ran';
      },
    );
    await engine.close();
    assert.equal(answer, 'ran');
    assert.deepEqual(heldWhenRun, [30], 'the replacement was applied before the request');
    assert.deepEqual(calls, [`applied ${changeId}`]);
  });

  test("when the ledger says a change waits that the till's list did not know, then the list is fetched, the change applied and the request run again", async () => {
    const { sim, engine, card, changeId } = await replacementWaits();
    const { changes, calls } = listOf(sim, { fetched: false });
    let runs = 0;
    const answer = await withCardChanges(
      card.card,
      engine,
      { changes, keyFingerprint },
      async () => {
        runs += 1;
        if (card.held() === 0) throw changeWaiting('a replacement waits');
        return card.held();
      },
    );
    await engine.close();
    assert.deepEqual(
      { answer, runs, calls },
      { answer: 30, runs: 2, calls: ['refresh', `applied ${changeId}`] },
    );
  });

  test('when the ledger still says a change waits after the list is fetched, then CardChangeWaiting with its words, run twice', async () => {
    const { sim, engine, card } = await replacementWaits();
    const { changes } = listOf(sim, { fetched: false });
    let runs = 0;
    const failure = await withCardChanges(
      card.card,
      engine,
      { changes, keyFingerprint },
      async () => {
        runs += 1;
        throw changeWaiting(`still, run ${runs}`);
      },
    ).then((answer) => ({ answer }), seen);
    await engine.close();
    assert.deepEqual(
      { failure, runs },
      {
        failure: errorOf(errors.cardChangeWaiting('still, run 1')),
        runs: 2,
      },
    );
  });

  test('when the fetched list has nothing for the card, or there is no list, then CardChangeWaiting at once, run once', async () => {
    const { sim, card, engine } = await shopWithCard(30);
    const { changes, calls } = listOf(sim);
    let runs = 0;
    const refused = () => {
      runs += 1;
      return Promise.reject(changeWaiting());
    };
    const withList = await withCardChanges(
      card.card,
      engine,
      { changes, keyFingerprint },
      refused,
    ).then((answer) => ({ answer }), seen);
    const without = await withCardChanges(
      card.card,
      engine,
      { changes: undefined, keyFingerprint },
      refused,
    ).then((answer) => ({ answer }), seen);
    await engine.close();
    assert.deepEqual(
      { withList, without, runs, calls },
      {
        withList: errorOf(errors.cardChangeWaiting()),
        without: errorOf(errors.cardChangeWaiting()),
        runs: 2,
        calls: ['refresh'],
      },
    );
  });

  test('when the request fails otherwise, first or after the change, then that error as it is', async () => {
    const { sim, engine, card } = await replacementWaits();
    const { changes } = listOf(sim, { fetched: false });
    const first = await withCardChanges(card.card, engine, { changes, keyFingerprint }, () =>
      Promise.reject(errors.noCard()),
    ).then((answer) => ({ answer }), seen);
    let runs = 0;
    const again = await withCardChanges(card.card, engine, { changes, keyFingerprint }, () => {
      runs += 1;
      return Promise.reject(runs === 1 ? changeWaiting() : errors.ledgerUnavailable());
    }).then((answer) => ({ answer }), seen);
    await engine.close();
    assert.deepEqual(first, errorOf(errors.noCard()));
    assert.deepEqual(again, errorOf(errors.ledgerUnavailable()));
  });

  test("isChangeWaiting: the ledger's CardChangeWaiting only", () => {
    assert.equal(isChangeWaiting(changeWaiting()), true);
    assert.equal(isChangeWaiting(new LedgerRefusal(409, 'CardChangeTaken')), false);
    assert.equal(isChangeWaiting(errors.cardChangeWaiting()), false);
  });
});

function errorOf(error: AppError) {
  return seen(error);
}
