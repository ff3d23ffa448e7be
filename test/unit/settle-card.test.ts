/**
 * POST /cards/settle: the card on the reader decides other tills' pending movements of it from
 * the card state each carries (`cardBefore`), with the evidence the ledger keeps; what the card
 * cannot decide is listed with the reason, and nothing is written to the card.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import type { LedgerCardAccount } from '../../service/cloud/ledger-client.ts';
import type { AppError } from '../../service/errors.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { settleCard } from '../../service/wallet/settle-card.ts';
import type { SimLedger } from '../simulation/sim-ledger.ts';
import {
  CARD,
  KEY,
  OTHER_TILL,
  SHOP,
  TILL,
  engineWith,
  eventually,
  fingerprint,
  replacementWaits,
  shopWithCard,
} from '../support/money-rig.ts';

/** GET /v1/cards/{id} over the simulated ledger: the shop's movements of the card, newest first. */
function cardAccounts(sim: SimLedger) {
  return {
    getCardAccount: async (apiKey: string, cardId: string): Promise<LedgerCardAccount> => ({
      cardId,
      credits: 0,
      importedCredits: null,
      suspect: false,
      flags: [],
      movements: [...sim.movements.values()]
        .filter((movement) => movement.cardId === cardId)
        .reverse()
        .map((movement) => sim.get(apiKey, movement.id)),
    }),
  };
}

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };

/** Two tills of one shop on one ledger; the other till's card write is left undecided. */
async function otherTillLeftUndecided(
  kind: 'recharge' | 'discharge',
  write: 'lost' | 'dropped',
  ledgerClock?: () => number,
) {
  const { sim, ledger, card, ...here } = await shopWithCard(30, { now: ledgerClock });
  const other = engineWith(ledger, { tillId: OTHER_TILL });
  await other.open();
  card.nextWrite = write;
  const input = { keyFingerprint: fingerprint(KEY) };
  await assert.rejects(
    kind === 'recharge'
      ? rechargeCard(card.access, other.engine, { ...input, request: { credits: 20 }, customer })
      : dischargeCard(card.access, other.engine, input),
    (error: AppError) => error.code === 'CardRemovedDuringWrite',
  );
  const [movement] = sim.movements.values();
  assert.ok(movement && movement.state === 'pending');
  return { sim, ledger, card, here, other, movement };
}

/**
 * The other till's payout of 30 landed (0 at generation 2 in slot 1); a recharge of 4 planned
 * from that state is at the ledger, posted, and its write landed over it: the card shows
 * neither side of the payout any more. Answers that recharge's id.
 */
function writtenOverPayout(sim: SimLedger, card: { slots: Buffer[] }): string {
  const later = randomUUID();
  sim.create(KEY, {
    id: later,
    kind: 'recharge',
    cardId: CARD,
    credits: 4,
    cardBefore: 'classic:v1:0:2:1',
  });
  sim.resolve(KEY, later, 'posted');
  card.slots[0] = encodeValueBlock(4, 3);
  return later;
}

describe('settleCard', () => {
  test("when the card holds another till's payout, then it is posted with the card as evidence", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    const writes = card.writes;
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(answer, {
      cardId: CARD,
      settled: [
        { id: movement.id, tillId: OTHER_TILL, kind: 'discharge', credits: 30, state: 'posted' },
      ],
      undecided: [],
    });
    assert.equal(movement.state, 'posted');
    assert.equal(movement.resolvedByTill, TILL);
    assert.equal(
      movement.evidence,
      `card ${CARD} read at till ${TILL}: it holds the write from classic:v1:30:1:0 to 0 credits`,
    );
    assert.equal(card.writes, writes, 'nothing is written to the card');
    await here.engine.close();
  });

  test("when the card does not hold another till's recharge, then it is voided with the card as evidence", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('recharge', 'dropped');
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(answer.settled, [
      { id: movement.id, tillId: OTHER_TILL, kind: 'recharge', credits: 20, state: 'voided' },
    ]);
    assert.equal(movement.state, 'voided');
    assert.equal(
      movement.evidence,
      `card ${CARD} read at till ${TILL}: it does not hold the write from classic:v1:30:1:0 to 50 credits`,
    );
    await here.engine.close();
  });

  test("when the card holds another till's recharge, then the write it decides by is the balance before plus the credits", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('recharge', 'lost');
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(
      answer.settled.map((settled) => settled.state),
      ['posted'],
    );
    assert.match(movement.evidence ?? '', /holds the write from classic:v1:30:1:0 to 50 credits$/);
    await here.engine.close();
  });

  test('when the card shows neither the balance before nor after, or the movement carries no card state, then both are left undecided, saying why', async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    // Another value at the planned slot and generation: neither 30 nor 0 as planned.
    card.slots[1] = encodeValueBlock(7, 2);
    const bare = randomUUID();
    sim.create(KEY, { id: bare, kind: 'recharge', cardId: CARD, credits: 1, tillId: OTHER_TILL });
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(answer.settled, []);
    assert.deepEqual(answer.undecided, [
      {
        id: bare,
        tillId: OTHER_TILL,
        kind: 'recharge',
        credits: 1,
        reason: 'the movement carries no card state to decide it by',
      },
      {
        id: movement.id,
        tillId: OTHER_TILL,
        kind: 'discharge',
        credits: 30,
        reason: 'the card shows neither the balance before nor after it',
      },
    ]);
    assert.equal(movement.state, 'pending');
    await here.engine.close();
  });

  test("when the card moved on from another till's payout, and the ledger lists a write planned from the state only that payout leaves, then the payout is posted with that as evidence", async () => {
    // Seed 918000141's race at POST /cards/settle: the payout landed (0 at generation 2 in slot
    // 1), its answer lost; another write was planned from that state and landed over it.
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    const later = writtenOverPayout(sim, card);
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(
      [answer.settled, answer.undecided],
      [
        [{ id: movement.id, tillId: OTHER_TILL, kind: 'discharge', credits: 30, state: 'posted' }],
        [],
      ],
      JSON.stringify(answer),
    );
    assert.equal(
      movement.evidence,
      `card ${CARD} read at till ${TILL}: it shows neither the balance before nor after the write, but movement ${later} (till (none)) was planned from classic:v1:0:2:1, the state only this write leaves`,
    );
    await here.engine.close();
  });

  test("when the card's movements are this till's or resolved, then none is listed", async () => {
    const { sim, ledger, card, ...here } = await shopWithCard(30);
    // Another till's recharge, posted, and its compensating payout, posted.
    const { compensation } = otherTillCompensated(sim);
    sim.resolve(KEY, compensation, 'posted', { tillId: OTHER_TILL });
    // This till's own payout, left pending (its post unanswered).
    ledger.failPosts = true;
    await dischargeCard(card.access, here.engine, { keyFingerprint: fingerprint(KEY) });
    const states = [...sim.movements.values()].map((movement) => movement.state);
    assert.deepEqual(states, ['posted', 'posted', 'pending']);
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(answer, { cardId: CARD, settled: [], undecided: [] });
    ledger.failPosts = false;
    await here.engine.close();
  });

  test("when another till's compensation was left pending (that till gone), then it is posted with evidence, and settled again nothing more is counted", async () => {
    const { sim, card, ...here } = await shopWithCard(30);
    const { posted, compensation } = otherTillCompensated(sim);
    const writes = card.writes;
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(answer, {
      cardId: CARD,
      settled: [
        { id: compensation, tillId: OTHER_TILL, kind: 'discharge', credits: 1, state: 'posted' },
      ],
      undecided: [],
    });
    const made = sim.movements.get(compensation);
    assert.equal(made?.state, 'posted');
    assert.equal(made?.resolvedByTill, TILL);
    assert.equal(
      made?.evidence,
      `compensation of ${posted} made by till ${OTHER_TILL}, left pending; posted at till ${TILL}, as that till would have`,
    );
    assert.equal(card.writes, writes, 'nothing is written to the card');
    assert.equal(sim.cardAccount(SHOP, CARD), 34, 'the books count the compensation');
    const again = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(again.settled, []);
    assert.equal(sim.cardAccount(SHOP, CARD), 34, 'counted once');
    await here.engine.close();
  });
});

describe('settleCard, a compensation no till made', () => {
  test("when a compensation made without a till (the provider's) was left pending, then it is posted with evidence naming no till", async () => {
    const { sim, card, ...here } = await shopWithCard(30);
    const { posted, compensation } = otherTillCompensated(sim, { byTill: false });
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    await here.engine.close();
    assert.deepEqual(answer.settled, [
      { id: compensation, tillId: null, kind: 'discharge', credits: 1, state: 'posted' },
    ]);
    assert.equal(
      sim.movements.get(compensation)?.evidence,
      `compensation of ${posted} made by till (none), left pending; posted at till ${TILL}, as that till would have`,
    );
  });
});

describe('settleCard, with the changes waiting for the card', () => {
  test('when a replacement waits for the card, then settling applies it and lists it; with none, no list', async () => {
    const { sim, card, changeId, ...here } = await replacementWaits();
    let waiting = sim.cardRules.list(KEY).waiting;
    const changes = {
      changes: {
        waitingFor: (cardId: string) => waiting.filter((change) => change.cardId === cardId),
        refresh: async () => undefined,
        applied: (id: string) => {
          waiting = waiting.filter((change) => change.id !== id);
        },
      },
      keyFingerprint: fingerprint(KEY),
    };
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY, changes);
    const again = await settleCard(card.access, here.engine, cardAccounts(sim), KEY, changes);
    await here.engine.close();
    const applied = answer.cardChanges?.map(({ kind, changeId: id, credits }) => ({
      kind,
      id,
      credits,
    }));
    assert.deepEqual(
      applied,
      [{ kind: 'replacement', id: changeId, credits: 30 }],
      JSON.stringify(answer),
    );
    assert.equal(card.held(), 30);
    assert.equal('cardChanges' in again, false, JSON.stringify(again));
  });
});

/** Another till's recharge of 5, posted, and its compensating payout of 1, created (pending). */
function otherTillCompensated(
  sim: SimLedger,
  { byTill = true } = {},
): { posted: string; compensation: string } {
  const posted = randomUUID();
  const by = { tillId: OTHER_TILL };
  sim.create(KEY, { id: posted, kind: 'recharge', cardId: CARD, credits: 5, ...by });
  sim.resolve(KEY, posted, 'posted', by);
  const compensation = randomUUID();
  sim.create(KEY, {
    id: compensation,
    kind: 'discharge',
    cardId: CARD,
    credits: 1,
    compensates: posted,
    ...(byTill ? by : {}),
  });
  return { posted, compensation };
}

describe("settleCard, on an operator's word given without the card", () => {
  test("when an operator voided another till's payout that the card holds, then a compensating payout of this till sets the books right and frees the card; settled again, nothing more is made", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    assert.equal(movement.awaitsCard, true);
    const writes = card.writes;
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    const compensation = [...sim.movements.values()].find((m) => m.compensates === movement.id);
    assert.ok(compensation, JSON.stringify(answer));
    assert.deepEqual(answer, {
      cardId: CARD,
      settled: [
        {
          id: movement.id,
          tillId: OTHER_TILL,
          kind: 'discharge',
          credits: 30,
          state: 'voided',
          compensatedBy: compensation.id,
        },
      ],
      undecided: [],
    });
    assert.deepEqual(
      [compensation.kind, compensation.credits, compensation.state, compensation.tillId],
      ['discharge', 30, 'posted', TILL],
    );
    assert.equal(movement.awaitsCard, false);
    assert.equal(sim.cardAccount(SHOP, CARD), 0, 'the books match the card');
    assert.equal(card.writes, writes, 'nothing is written to the card');
    const again = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    assert.deepEqual(again.settled, []);
    assert.equal([...sim.movements.values()].filter((m) => m.compensates !== null).length, 1);
    await here.engine.close();
  });

  test("when an operator voided another till's payout that landed, and a write planned from the state only that payout leaves went over it, then the payout is compensated from the ledger's list", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    writtenOverPayout(sim, card);
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    const compensation = [...sim.movements.values()].find((m) => m.compensates === movement.id);
    assert.ok(compensation, JSON.stringify(answer));
    assert.deepEqual(
      [compensation.kind, compensation.credits, compensation.state, movement.awaitsCard],
      ['discharge', 30, 'posted', false],
    );
    assert.equal(sim.cardAccount(SHOP, CARD), 4, 'the books match the card');
    await here.engine.close();
  });

  test("when the card agrees with the operator's word, or shows neither side of the write, then the ledger keeps the card's word and frees the card", async () => {
    for (const shown of ['agrees', 'neither'] as const) {
      const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'dropped');
      if (shown === 'neither') card.slots[1] = encodeValueBlock(7, 2);
      sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
      const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
      assert.deepEqual(
        answer.settled,
        [{ id: movement.id, tillId: OTHER_TILL, kind: 'discharge', credits: 30, state: 'voided' }],
        shown,
      );
      assert.equal(movement.awaitsCard, false, shown);
      assert.equal(
        movement.cardEvidence,
        shown === 'agrees'
          ? `card ${CARD} read at till ${TILL}: it does not hold the write from classic:v1:30:1:0 to 0 credits`
          : `card ${CARD} read at till ${TILL}: it shows neither the balance before nor after the write: the ledger's word stands`,
      );
      assert.equal([...sim.movements.values()].filter((m) => m.compensates !== null).length, 0);
      await here.engine.close();
    }
  });

  test('when an operator posted a recharge the card does not hold, then the compensation is a payout of its credits', async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('recharge', 'dropped');
    sim.resolve(KEY, movement.id, 'posted', { evidence: 'operator: the customer has it' });
    const answer = await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    const compensation = [...sim.movements.values()].find((m) => m.compensates === movement.id);
    assert.deepEqual(answer.settled[0]?.compensatedBy, compensation?.id, JSON.stringify(answer));
    assert.deepEqual([compensation?.kind, compensation?.credits], ['discharge', 20]);
    assert.equal(sim.cardAccount(SHOP, CARD), 30, 'the account is what the card holds');
    await here.engine.close();
  });

  test('when the till that made it sees the card after another till compensated it, then its own compensation is refused as not needed: one compensation, no conflict', async () => {
    const { sim, card, here, other, movement } = await otherTillLeftUndecided('discharge', 'lost');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    await other.engine.reconcile();
    assert.ok(other.engine.uncertainCards.has(CARD), 'the owner learnt the void, card away');
    await settleCard(card.access, here.engine, cardAccounts(sim), KEY);
    await card.access.withCard((session) => other.engine.settle(session));
    await eventually(() => other.engine.unconfirmed === 0, "the owner's compensation resolved");
    const compensations = [...sim.movements.values()].filter((m) => m.compensates !== null);
    assert.deepEqual(
      compensations.map((m) => [m.tillId, m.state]),
      [[TILL, 'posted']],
    );
    assert.deepEqual(other.engine.conflicts, []);
    assert.equal(sim.cardAccount(SHOP, CARD), 0);
    await here.engine.close();
    await other.engine.close();
  });

  test("when another till wrote the very block the owner's voided payout planned (the card freed by the operator's void), then the owner's card decides nothing: the void stands, no compensation, no answer", async () => {
    // Seed 689714656: the owner's payout tore (the card kept 30), an operator voided it (the
    // card reported lost), another till found the card did not hold it, paid it out from the
    // same state, and the owner then read the card holding "its" write. The ledger's clock
    // stands still: both payouts are made in one millisecond, as on a fast machine, and only
    // the order of the ledger's list says which came later.
    const { sim, card, here, other, movement } = await otherTillLeftUndecided(
      'discharge',
      'dropped',
      () => Date.parse('2026-11-27T03:30:04.777Z'),
    );
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    const paid = await dischargeCard(card.access, here.engine, {
      keyFingerprint: fingerprint(KEY),
    });
    assert.equal(paid.dischargedCredits, 30, JSON.stringify(paid));
    await eventually(() => here.engine.unconfirmed === 0, "this till's payout posted");
    await card.access.withCard((session) => other.engine.settle(session));
    await eventually(() => other.engine.unconfirmed === 0, "the owner's journal done");
    const owned = other.engine.journaled(movement.id);
    assert.deepEqual(
      [owned?.card, owned?.resolved, owned?.answer],
      ['not-written', 'voided', undefined],
    );
    assert.deepEqual(
      [...sim.movements.values()].filter((m) => m.compensates !== null),
      [],
      'no compensation',
    );
    assert.deepEqual(other.engine.conflicts, []);
    assert.equal(sim.cardAccount(SHOP, CARD), 0, 'the books match the card');
    await here.engine.close();
    await other.engine.close();
  });

  test("when the ledger does not take the card's word, then settling fails and the card stays held", async () => {
    const { sim, card, here, ledger, movement } = await otherTillLeftUndecided('recharge', 'lost');
    sim.resolve(KEY, movement.id, 'posted', { evidence: 'operator: the customer has it' });
    ledger.failPosts = true;
    await assert.rejects(settleCard(card.access, here.engine, cardAccounts(sim), KEY));
    assert.equal(movement.awaitsCard, true);
    ledger.failPosts = false;
    await here.engine.close();
  });
});

describe("a recharge or payout of a card held for an operator's word", () => {
  test('when the card holds the payout an operator voided, then a recharge at another till first sets the books right from the card, then goes on', async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'lost');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    const answer = await rechargeCard(card.access, here.engine, {
      keyFingerprint: fingerprint(KEY),
      request: { credits: 5 },
      customer,
    });
    assert.deepEqual([answer.cardId, answer.credits], [CARD, 5]);
    const compensation = [...sim.movements.values()].find((m) => m.compensates === movement.id);
    assert.deepEqual([compensation?.kind, compensation?.credits], ['discharge', 30]);
    assert.equal(movement.awaitsCard, false);
    await eventually(() => here.engine.unconfirmed === 0, 'the recharge posted');
    assert.equal(sim.cardAccount(SHOP, CARD), 5, 'the books match the card');
    await here.engine.close();
  });

  test("when the card agrees with the operator's void, then a payout confirms it and pays out what the card holds", async () => {
    const { sim, card, here, movement } = await otherTillLeftUndecided('discharge', 'dropped');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    const answer = await dischargeCard(card.access, here.engine, {
      keyFingerprint: fingerprint(KEY),
    });
    assert.equal(answer.dischargedCredits, 30, JSON.stringify(answer));
    assert.match(movement.cardEvidence ?? '', /does not hold the write/);
    await here.engine.close();
  });

  test('when the ledger does not say what holds the card, then the refusal stands: MovementPendingAtOtherTill, nothing moved', async () => {
    const { sim, card, here, ledger, movement } = await otherTillLeftUndecided('discharge', 'lost');
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    ledger.getCardAccount = () => Promise.reject(new Error('no answer'));
    const writes = card.writes;
    await assert.rejects(
      rechargeCard(card.access, here.engine, {
        keyFingerprint: fingerprint(KEY),
        request: { credits: 5 },
        customer,
      }),
      (error: AppError) => error.code === 'MovementPendingAtOtherTill',
    );
    assert.equal(card.writes, writes);
    assert.equal(movement.awaitsCard, true);
    await here.engine.close();
  });
});
