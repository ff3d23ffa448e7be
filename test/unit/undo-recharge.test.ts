/**
 * The cashier's undo (POST /cards/undo; docs/integrators.md, "Undoing a recharge") as the use
 * case runs it over the movement engine and the simulated ledger: what the journal refuses
 * before the ledger is asked, each ledger refusal as the integrator sees it, an outage, a
 * block the till did not know, and the body's parsing. The http area's cashier-undo tests run
 * the same over real HTTP; these reach the use case from the unit tests alone.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { parseUndoRequest, undoRecharge, undoRefusal } from '../../service/wallet/undo-recharge.ts';
import {
  CARD,
  KEY,
  SHOP,
  cardList,
  cardOnReader,
  eventually,
  fingerprint,
  shopWithCard,
} from '../support/money-rig.ts';
import { floatRig } from '../support/float-rig.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };
const keyFingerprint = fingerprint(KEY);

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, detail: error.detail }
    : { not: String(error) };

/** Every movement the engine made is posted or voided at the ledger. */
const posted = (engine: MovementEngine) =>
  eventually(() => engine.unconfirmed === 0, 'every movement resolved at the ledger');

/** A till with CARD recharged by `credits` on top of 30, the undo not asked yet. */
async function recharged(credits = 10) {
  const shop = await shopWithCard(30);
  const recharge = await rechargeCard(shop.card.access, shop.engine, {
    keyFingerprint,
    request: { credits },
    customer,
  });
  await posted(shop.engine);
  return { ...shop, recharge: recharge.movementId as string };
}

/** The undo's refusal (fails, showing the answer, when it is answered). */
const refusal = (run: Promise<unknown>) =>
  run.then(
    (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
    (error: unknown) => error,
  );

/** A recharge of 10 on `card` whose write certainly did not land (refused): its journal entry. */
async function rechargeNotLanded(card: ReturnType<typeof cardOnReader>, engine: MovementEngine) {
  card.nextWrite = 'fails';
  await refusal(
    rechargeCard(card.access, engine, { keyFingerprint, request: { credits: 10 }, customer }),
  );
  const [failed] = engine.journal;
  return failed;
}

describe('undoRecharge', () => {
  test("when this till's recharge is undone, then the card is written back, the refund posted, and the answer names it", async () => {
    const { sim, engine, card, recharge } = await recharged(10);
    assert.equal(card.held(), 40);
    const answer = await undoRecharge(card.access, engine, { recharge, keyFingerprint });
    await posted(engine);
    await engine.close();
    const { movementId, occurredAt, ...rest } = answer;
    assert.deepEqual(rest, {
      cardId: CARD,
      credits: 30,
      refundedCredits: 10,
      refundedAmount: 5,
      refunds: recharge,
      reference: null,
    });
    assert.equal(typeof occurredAt, 'string');
    assert.equal(card.held(), 30);
    const refund = sim.movements.get(movementId as string);
    assert.deepEqual(
      { kind: refund?.kind, state: refund?.state, refunds: refund?.refunds },
      { kind: 'refund', state: 'posted', refunds: recharge },
    );
  });

  test('when another card is on the reader, then UndoOfAnotherCard naming both cards, and nothing moves', async () => {
    const { sim, engine, recharge } = await recharged(10);
    sim.importCard(SHOP, '04A0A0A0', 20);
    const other = cardOnReader(20, '04A0A0A0');
    const failure = await refusal(undoRecharge(other.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.deepEqual(seen(failure), {
      code: 'UndoOfAnotherCard',
      status: 500,
      detail: `recharge ${recharge} was written to card ${CARD}; card 04A0A0A0 is on the reader: nothing moved, present the recharged card`,
    });
    assert.equal(other.writes, 0);
  });

  test('when the id is a payout of the card, then UndoRechargeNotFound saying it is a discharge, and nothing moves', async () => {
    const { engine, card } = await recharged(10);
    const payout = await dischargeCard(card.access, engine, { keyFingerprint });
    const writes = card.writes;
    const id = payout.movementId as string;
    const failure = await refusal(
      undoRecharge(card.access, engine, { recharge: id, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(seen(failure), {
      code: 'UndoRechargeNotFound',
      status: 500,
      detail: `${id} is a discharge, not a recharge`,
    });
    assert.equal(card.writes, writes);
  });

  test('when the recharge did not land on the card, then UndoRechargeNotFound saying so, without asking the ledger', async () => {
    const { ledger, card, engine } = await shopWithCard(30);
    const failed = await rechargeNotLanded(card, engine);
    assert.equal(failed?.card, 'not-written', JSON.stringify(failed));
    await posted(engine);
    const calls = ledger.calls.length;
    const failure = await refusal(
      undoRecharge(card.access, engine, { recharge: failed!.id, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(seen(failure), {
      code: 'UndoRechargeNotFound',
      status: 500,
      detail: `recharge ${failed!.id} did not land on the card: there is nothing to undo`,
    });
    assert.deepEqual(ledger.calls.slice(calls), [], 'no movement created at the ledger');
  });

  test('when the failed recharge is not voided at the ledger yet, then UndoRechargeNotFound all the same, without asking the ledger', async () => {
    const { ledger, card, engine } = await shopWithCard(30);
    ledger.voidMovement = () => Promise.reject(errors.ledgerUnavailable());
    const failed = await rechargeNotLanded(card, engine);
    assert.deepEqual([failed?.card, failed?.resolved], ['not-written', undefined]);
    const creates = () => ledger.calls.filter((call) => call.startsWith('create')).length;
    const before = creates();
    const failure = await refusal(
      undoRecharge(card.access, engine, { recharge: failed!.id, keyFingerprint }),
    );
    await engine.close();
    assert.deepEqual(seen(failure), {
      code: 'UndoRechargeNotFound',
      status: 500,
      detail: `recharge ${failed!.id} did not land on the card: there is nothing to undo`,
    });
    assert.equal(creates(), before, 'no refund created at the ledger');
  });

  test("when the id is a compensating movement this till journaled, then the ledger judges it (the journal's checks are for the till's own recharges)", async () => {
    const { ledger, engine, journal, card, recharge } = await recharged(10);
    const compensation = randomUUID();
    const at = new Date().toISOString();
    await journal.append(
      {
        type: 'started',
        id: compensation,
        kind: 'discharge',
        cardId: CARD,
        keyFingerprint,
        compensates: recharge,
        credits: 10,
        at,
      },
      { type: 'card', id: compensation, outcome: 'not-written', at },
    );
    const creates = () => ledger.calls.filter((call) => call.startsWith('create')).length;
    const before = creates();
    const failure = await refusal(
      undoRecharge(card.access, engine, { recharge: compensation, keyFingerprint }),
    );
    await engine.close();
    assert.equal((failure as AppError).code, 'UndoRechargeNotFound', JSON.stringify(seen(failure)));
    assert.equal(creates(), before + 1, 'the refund was asked of the ledger');
  });

  test('when the recharge is resolved voided (its write did not land by the ledger), then UndoRechargeNotFound', async () => {
    const { engine, journal, card, recharge } = await recharged(10);
    // The journal's own word: voided at the ledger though the card line says committed.
    await journal.append({
      type: 'resolved',
      id: recharge,
      state: 'voided',
      at: new Date().toISOString(),
    });
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.equal((failure as AppError).code, 'UndoRechargeNotFound', JSON.stringify(seen(failure)));
  });

  test('when the same recharge is undone twice, then the second is refused AlreadyUndone and the card keeps what the first left', async () => {
    const { engine, card, recharge } = await recharged(10);
    await undoRecharge(card.access, engine, { recharge, keyFingerprint });
    await posted(engine);
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.equal((failure as AppError).code, 'AlreadyUndone', JSON.stringify(seen(failure)));
    assert.equal(card.held(), 30);
  });

  test('when the ledger cannot be reached, then LedgerUnavailable saying an undo needs it, and the card is untouched', async () => {
    const { ledger, engine, card, recharge } = await recharged(10);
    ledger.createMovement = () => Promise.reject(errors.ledgerUnavailable());
    const writes = card.writes;
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.equal((failure as AppError).code, 'LedgerUnavailable', JSON.stringify(seen(failure)));
    assert.match(
      String((failure as AppError).detail),
      /^the ledger cannot be reached: an undo needs it/,
    );
    assert.equal(card.writes, writes);
  });

  test("when the ledger refuses with a code the worker has no error of, then UndoRefused with the ledger's code and words", async () => {
    const { ledger, engine, card, recharge } = await recharged(10);
    ledger.createMovement = () =>
      Promise.reject(new LedgerRefusal(422, 'SomethingNew', 'a rule of tomorrow'));
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    ledger.createMovement = () => Promise.reject(new LedgerRefusal(422, 'SomethingNew'));
    const bare = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.deepEqual(
      [seen(failure), seen(bare)],
      [
        { code: 'UndoRefused', status: 500, detail: 'SomethingNew: a rule of tomorrow' },
        { code: 'UndoRefused', status: 500, detail: 'SomethingNew' },
      ],
    );
  });

  test("when the ledger answers the worker's own error (not an outage), then that error is passed on", async () => {
    const { ledger, engine, card, recharge } = await recharged(10);
    ledger.createMovement = () => Promise.reject(errors.undoWindowPassed('by the rig'));
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.deepEqual(seen(failure), {
      code: 'UndoWindowPassed',
      status: 500,
      detail: 'by the rig',
    });
  });

  test('when the card was blocked since the recharge (the till not knowing), then CardBlocked, the card emptied, and no refund made', async () => {
    const { sim, engine, card, recharge } = await recharged(10);
    sim.cardRules.block(KEY, CARD, true, 'owner', 'lost');
    const { list, blocks } = cardList();
    const failure = await refusal(
      undoRecharge(card.access, engine, { recharge, keyFingerprint, blocks: list }),
    );
    await posted(engine);
    await engine.close();
    assert.equal((failure as AppError).code, 'CardBlocked', JSON.stringify(seen(failure)));
    assert.ok(blocks.has(CARD), 'the block is learnt');
    assert.equal(card.held(), 0, 'the card is emptied');
    const refunds = [...sim.movements.values()].filter((m) => m.kind === 'refund');
    assert.deepEqual(refunds, []);
  });
});

describe('undoRecharge, the card and the float', () => {
  test('when the undo takes back all the card holds, then the card is left at 0', async () => {
    const { card, engine } = await shopWithCard(0);
    const recharge = await rechargeCard(card.access, engine, {
      keyFingerprint,
      request: { credits: 10 },
      customer,
    });
    await posted(engine);
    const answer = await undoRecharge(card.access, engine, {
      recharge: recharge.movementId as string,
      keyFingerprint,
    });
    await engine.close();
    assert.deepEqual([answer.credits, answer.refundedCredits, card.held()], [0, 10, 0]);
  });

  test('when the card holds a negative balance, then NegativeCredits and nothing is asked of the ledger', async () => {
    const { ledger, engine, recharge } = await recharged(10);
    const negative = cardOnReader(-5);
    const calls = ledger.calls.length;
    const failure = await refusal(
      undoRecharge(negative.access, engine, { recharge, keyFingerprint }),
    );
    await engine.close();
    assert.equal((failure as AppError).code, 'NegativeCredits', JSON.stringify(seen(failure)));
    assert.deepEqual(ledger.calls.slice(calls), []);
  });

  test('when the card holds nothing (spent since), then the ledger is asked and refuses it: NothingToUndo, not NegativeCredits', async () => {
    const { ledger, engine, recharge } = await recharged(10);
    const spent = cardOnReader(0);
    const calls = ledger.calls.length;
    const failure = await refusal(undoRecharge(spent.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.equal((failure as AppError).code, 'NothingToUndo', JSON.stringify(seen(failure)));
    assert.ok(ledger.calls.length > calls, 'the ledger was asked');
    assert.equal(spent.writes, 0);
  });

  test('when the ledger would take back more than the card holds, then NegativeCredits and the card is not written', async () => {
    const { ledger, engine, card, recharge } = await recharged(10);
    const create = ledger.createMovement;
    ledger.createMovement = async (apiKey, movement) => {
      const made = await create(apiKey, movement);
      return { ...made, credits: 41 };
    };
    const writes = card.writes;
    const failure = await refusal(undoRecharge(card.access, engine, { recharge, keyFingerprint }));
    await engine.close();
    assert.equal((failure as AppError).code, 'NegativeCredits', JSON.stringify(seen(failure)));
    assert.deepEqual([card.writes, card.held()], [writes, 40]);
  });

  test("when the till's own float recharge of the card cannot be reported first, then LedgerUnavailable saying so, and the card is untouched", async () => {
    const rig = floatRig();
    await rig.open();
    rig.customer();
    rig.engine.start();
    await rig.clock.advance(0);
    await eventually(() => rig.floats.status().state === 'online', 'the float open');
    const card = cardOnReader(0, CARD, { spare: true });
    // The ledger stops answering; the till has not noticed yet (still online).
    rig.ledger.down = true;
    const sold = await rechargeCard(card.access, rig.engine, {
      request: { credits: 20 },
      customer: rig.customer(),
      keyFingerprint,
    });
    const before = rig.sim.movements.size;
    const failure = await refusal(
      undoRecharge(card.access, rig.engine, {
        recharge: sold.movementId as string,
        keyFingerprint,
      }),
    );
    await rig.engine.close();
    assert.deepEqual(seen(failure), {
      code: 'LedgerUnavailable',
      status: 500,
      detail: 'the float recharges on this card could not be reported to the ledger first',
    });
    assert.equal(card.held(), 20);
    assert.equal(rig.sim.movements.size, before, 'no refund created');
  });
});

describe('undoRefusal', () => {
  const cases: [string, string, string][] = [
    ['InvalidRefund', 'UndoRechargeNotFound', 'no such recharge of this card at the ledger'],
    ['MovementOfAnotherTill', 'UndoOfAnotherTill', ''],
    ['AlreadyRefunded', 'AlreadyUndone', ''],
    ['UndoNotNewest', 'UndoNotNewest', ''],
    ['UndoWindowPassed', 'UndoWindowPassed', ''],
    ['NothingToRefund', 'NothingToUndo', ''],
    ['CardChangeWaiting', 'CardChangeWaiting', ''],
  ];
  for (const [code, becomes, withoutDetail] of cases) {
    test(`when the ledger refuses a refund ${code}, then ${becomes} with the ledger's words`, () => {
      const said = undoRefusal(new LedgerRefusal(422, code, `the ledger on ${code}`));
      assert.deepEqual(seen(said), {
        code: becomes,
        status: 500,
        detail:
          becomes === 'CardChangeWaiting'
            ? `the ledger on ${code}; nothing moved: an undo does not apply it, and once it is applied the recharge can no longer be undone (an operator can correct it)`
            : `the ledger on ${code}`,
      });
      const bare = undoRefusal(new LedgerRefusal(422, code));
      assert.equal((bare as AppError | undefined)?.code, becomes, JSON.stringify(seen(bare)));
      if (withoutDetail) assert.equal((bare as AppError).detail, withoutDetail);
    });
  }

  test('when the refusal is another code, or not a refusal, then undefined', () => {
    assert.equal(undoRefusal(new LedgerRefusal(422, 'NoCredits')), undefined);
    assert.equal(undoRefusal(errors.ledgerUnavailable()), undefined);
  });
});

describe('parseUndoRequest', () => {
  const id = randomUUID();
  test('when the body names a recharge, then its id, lower-cased', () => {
    assert.deepEqual(parseUndoRequest({ movementId: id.toUpperCase() }), { movementId: id });
  });

  const invalid: [string, unknown, string][] = [
    [
      'not an object',
      'text',
      'the body must be {"movementId": "<the recharge\'s movementId, as /writecard answered it>"}',
    ],
    [
      'null',
      null,
      'the body must be {"movementId": "<the recharge\'s movementId, as /writecard answered it>"}',
    ],
    [
      'an array',
      [id],
      'the body must be {"movementId": "<the recharge\'s movementId, as /writecard answered it>"}',
    ],
    [
      'with other fields',
      { movementId: id, credits: 3, why: 'x' },
      '"credits", "why": not a field here; it takes movementId',
    ],
    [
      'without the id',
      {},
      "movementId: required, the recharge's movementId as /writecard answered it (a UUID; got none)",
    ],
    [
      'with an id that is not a UUID',
      { movementId: `${id}x` },
      `movementId: required, the recharge's movementId as /writecard answered it (a UUID; got "${id}x")`,
    ],
    [
      'with an id inside other text',
      { movementId: `x${id}` },
      `movementId: required, the recharge's movementId as /writecard answered it (a UUID; got "x${id}")`,
    ],
    [
      'with a number',
      { movementId: 7 },
      "movementId: required, the recharge's movementId as /writecard answered it (a UUID; got 7)",
    ],
  ];
  for (const [what, body, detail] of invalid) {
    test(`when the body is ${what}, then InvalidBody saying what it takes`, () => {
      let failure: unknown;
      try {
        const parsed = parseUndoRequest(body);
        assert.fail(`parsed ${JSON.stringify(parsed)}`);
      } catch (error) {
        failure = error;
      }
      assert.deepEqual(seen(failure), { code: 'InvalidBody', status: 400, detail });
    });
  }
});
