/**
 * The money engine against a ledger that answers as told, for the overlaps a real one makes
 * rare: a create whose first try lands after a later try was refused, a key replaced while a
 * movement may still be at the ledger, an answer replayed before or after the ledger's final
 * word, and a ledger that voided a write the card holds.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { classicWalletCard } from '../../service/card/classic-wallet.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { LedgerClient } from '../../service/cloud/ledger-client.ts';
import { errors, type AppError } from '../../service/errors.ts';
import type { CardAccess, CardOnReader } from '../../service/wallet/card-access.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { phaseOf } from '../../service/wallet/movement-phases.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  KEY,
  MemoryStore,
  OTHER_KEY,
  OTHER_TILL,
  SHOP,
  TILL,
  CARD,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  idempotency,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';
import { printable } from '../simulation/sim-ledger.ts';
import { withoutReceipt } from '../support/http-client.ts';

describe('a create that was sent', () => {
  /**
   * A ledger over HTTP whose first create attempt is held past the client's timeout and carried
   * out only after the client's retry met a refusal (the pool was empty by then): it lands late.
   * Nothing here depends on how fast the machine is: the first try is never answered, the retry
   * at once, and the late landing waits for the retry.
   */
  async function refusingLedger({ firstTryLandsLate }: { firstTryLandsLate: boolean }) {
    const creates: string[] = [];
    const voids: string[] = [];
    let attempts = 0;
    let held: string | undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const send = (status: number, value: unknown) => {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (req.method === 'POST' && req.url === '/v1/movements') {
          attempts += 1;
          const { id } = JSON.parse(body) as { id: string };
          if (attempts === 1 && firstTryLandsLate) {
            held = id;
            return;
          }
          send(422, { error: 'NoCredits' });
          // The held first try is carried out now, after the refusal of the retry.
          if (held !== undefined) creates.push(held);
          return;
        }
        const voided = /^\/v1\/movements\/([^/]+)\/void$/.exec(req.url ?? '');
        if (req.method === 'POST' && voided) {
          const id = voided[1] as string;
          voids.push(id);
          if (creates.includes(id)) send(200, { id, state: 'voided' });
          else send(404, { error: 'MovementNotFound' });
          return;
        }
        send(404, { error: 'NotFound' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      // The held first try is unanswered once its 1 s is up; without one, no try may time out,
      // however busy the machine.
      client: new LedgerClient({
        baseUrl: url,
        timeoutMs: firstTryLandsLate ? 1_000 : 10_000,
        retries: 1,
        backoffMs: 1,
      }),
      creates,
      voids,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  test('when a create is refused on a retry while its first try lands later, then the movement is voided (leaving a tombstone), not taken as absent, and the key it was made with is kept until then', async () => {
    const ledger = await refusingLedger({ firstTryLandsLate: true });
    try {
      let current = KEY;
      const { engine, keys, journal, open } = engineWith(ledger.client, {
        currentKey: () => current,
      });
      await open();
      const released: string[] = [];
      keys.on('released', (key) => released.push(key));
      const { access } = cardOnReader(10);
      const recharge = rechargeCard(access, engine, {
        request: { credits: 5 },
        customer: { customerId: SHOP, name: 'A', credits: 0, creditCost: '0.50' },
        keyFingerprint: fingerprint(KEY),
      });
      await assert.rejects(recharge, (error: AppError) => error.code === 'NoCredits');
      // The operator changes the key right away; the movement made with the first one may
      // still be at the ledger, so that key is held until the ledger says otherwise.
      current = OTHER_KEY;
      engine.retireKey(KEY);
      await eventually(() => ledger.voids.length > 0, 'the void of the refused create');
      const [movement] = journal.movements.values();
      assert.ok(movement);
      assert.deepEqual(ledger.voids, [movement.id]);
      assert.deepEqual(ledger.creates, [movement.id], 'its first try landed late');
      await eventually(() => phaseOf(movement) === 'done', 'the movement resolved');
      assert.equal(movement.resolved, 'voided');
      await eventually(() => released.length === 1, 'the key released after the void');
      assert.deepEqual(released, [KEY]);
      await engine.close();
    } finally {
      await ledger.close();
    }
  });

  test('when every try of a create was answered with a refusal, then nothing is voided: the ledger certainly holds nothing', async () => {
    const ledger = await refusingLedger({ firstTryLandsLate: false });
    try {
      const { engine, journal, open } = engineWith(ledger.client);
      await open();
      const { access } = cardOnReader(0);
      await assert.rejects(
        rechargeCard(access, engine, {
          request: { credits: 5 },
          customer: { customerId: SHOP, name: 'A', credits: 3, creditCost: '0.50' },
          keyFingerprint: fingerprint(KEY),
        }),
        (error: AppError) => error.code === 'NoCredits',
      );
      const [movement] = journal.movements.values();
      assert.equal(movement?.resolved, 'absent');
      assert.equal(engine.unconfirmed, 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(ledger.voids, []);
      await engine.close();
    } finally {
      await ledger.close();
    }
  });
});

describe("answers and the ledger's final word", () => {
  test('when an answered payout is replayed before the ledger confirmed its post, then the replay is LedgerUnavailable; once posted, the first answer', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const ledger = ledgerOf(sim);
    const { engine, open } = engineWith(ledger);
    await open();
    const { access, held } = cardOnReader(30);
    ledger.failPosts = true;
    const key = idempotency('payout', 'discharge');
    const input = { keyFingerprint: fingerprint(KEY), idempotency: key };
    const first = await dischargeCard(access, engine, input);
    assert.deepEqual(withoutReceipt(first), {
      cardId: '04E1E2E3',
      dischargedCredits: 30,
      dischargedAmount: 15,
    });
    assert.equal(held(), 0);
    await assert.rejects(
      dischargeCard(access, engine, input),
      (error: AppError) => error.code === 'LedgerUnavailable',
    );
    ledger.failPosts = false;
    assert.deepEqual(await dischargeCard(access, engine, input), first);
    assert.equal([...sim.movements.values()][0]?.state, 'posted');
    await engine.close();
  });

  test('when the ledger voided a payout the card holds (an operator decided without the card), then a compensating payout is posted and the replay is the first answer; refused, the replay is MovementConflict and the card is flagged', async () => {
    for (const refused of [false, true]) {
      const sim = simWithShops();
      sim.importCard(SHOP, '04E1E2E3', 30);
      const ledger = ledgerOf(sim);
      const { engine, journal, open } = engineWith(ledger);
      await open();
      const { access } = cardOnReader(30);
      ledger.failPosts = true;
      const key = idempotency(`payout-${refused}`, 'discharge');
      const input = { keyFingerprint: fingerprint(KEY), idempotency: key };
      const first = await dischargeCard(access, engine, input);
      const [payout] = journal.movements.values();
      assert.ok(payout);
      // An operator voids it "on evidence" that was wrong: the card was paid out.
      sim.resolve(KEY, payout.id, 'voided', { evidence: 'card reported lost' });
      // Refused: the account was paid out meanwhile by an imported dump elsewhere.
      if (refused) {
        const drain = randomUUID();
        sim.create(KEY, { id: drain, kind: 'discharge', cardId: '04E1E2E3', credits: 30 });
        sim.resolve(KEY, drain, 'posted');
      }
      ledger.failPosts = false;
      const replay = dischargeCard(access, engine, input);
      if (refused) {
        await assert.rejects(replay, (error: AppError) => error.code === 'MovementConflict');
        assert.deepEqual(
          sim.flags.map((flag) => flag.kind),
          ['compensation-refused'],
        );
        assert.equal(engine.conflicts.length, 1);
      } else {
        assert.deepEqual(await replay, first);
        const compensation = [...sim.movements.values()].find((m) => m.compensates === payout.id);
        assert.equal(compensation?.kind, 'discharge');
        assert.equal(compensation?.credits, 30);
        assert.equal(compensation?.state, 'posted');
        assert.equal(sim.cardAccount(SHOP, '04E1E2E3'), 0, 'the books match the card again');
      }
      await eventually(() => engine.unconfirmed === 0, 'everything resolved');
      await engine.close();
    }
  });
});

describe('a decision the till learnt from the ledger, without the card', () => {
  /** A card whose writes land but whose answers are lost while `away` (it leaves the reader). */
  function cardThatLeaves(balance: number) {
    const slots: [Buffer, Buffer] = [encodeValueBlock(balance, 1), Buffer.alloc(16)];
    let away = true;
    const card = classicWalletCard({
      cardId: '04E1E2E3',
      checkUid: async () => undefined,
      readSlots: async () => [Buffer.from(slots[0]), Buffer.from(slots[1])],
      writeSlotBlock: async (slot, block) => {
        slots[slot] = Buffer.from(block);
        return away
          ? { outcome: 'uncertain', error: errors.cardNotResponding() }
          : { outcome: 'committed' };
      },
    });
    const access: CardAccess = { withCard: (run) => run(card as CardOnReader) };
    return { access, slots, back: () => (away = false) };
  }

  /** A recharge of 20 whose write lands while the card leaves: CardRemovedDuringWrite. */
  async function rechargeLeftUndecided(
    access: CardAccess,
    engine: MovementEngine,
    journal: MovementJournal,
  ): Promise<Movement> {
    const recharge = rechargeCard(access, engine, {
      request: { credits: 20 },
      customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
      keyFingerprint: fingerprint(KEY),
    });
    await assert.rejects(recharge, (error: AppError) => error.code === 'CardRemovedDuringWrite');
    const [movement] = journal.movements.values();
    assert.ok(movement);
    return movement;
  }

  /** A recharge left undecided (its card away), voided by an operator, the void learnt at reconciliation. */
  async function voidLearntWhileAway() {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const { engine, journal, open } = engineWith(ledgerOf(sim));
    await open();
    const { access, slots, back } = cardThatLeaves(30);
    const movement = await rechargeLeftUndecided(access, engine, journal);
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    await engine.reconcile();
    assert.equal(journal.movements.get(movement.id)?.learnt, true);
    return { sim, engine, journal, access, slots, back, movement };
  }

  test('when an operator decided a movement whose card was away and the till learnt it at reconciliation, then the card, back, still decides it: where they disagree a compensating movement sets the books right', async () => {
    for (const decided of ['voided', 'posted'] as const) {
      const sim = simWithShops();
      sim.importCard(SHOP, '04E1E2E3', 30);
      const { engine, journal, open } = engineWith(ledgerOf(sim));
      await open();
      const { access, slots, back } = cardThatLeaves(30);
      const movement = await rechargeLeftUndecided(access, engine, journal);
      // The customer reports the card lost. The operator voids the recharge, whose write the
      // card holds; or posts it, and the card turns up without the write (it had not landed).
      if (decided === 'posted') slots[1] = Buffer.alloc(16);
      sim.resolve(KEY, movement.id, decided, { evidence: 'operator: the card was reported lost' });
      await engine.reconcile();
      assert.equal(phaseOf(movement), 'done', 'learnt from the ledger');
      back();
      await access.withCard((session) => engine.settle(session));
      await eventually(() => engine.unconfirmed === 0, 'the compensation posted');
      const compensation = [...sim.movements.values()].find((m) => m.compensates === movement.id);
      assert.equal(compensation?.state, 'posted', `${decided}: compensated`);
      assert.equal(compensation?.kind, decided === 'voided' ? 'recharge' : 'discharge');
      assert.equal(
        sim.cardAccount(SHOP, '04E1E2E3'),
        decided === 'voided' ? 50 : 30,
        `${decided}: the books match the card again`,
      );
      const atLedger = sim.movements.get(movement.id);
      assert.equal(atLedger?.awaitsCard, false, `${decided}: the compensation frees the card`);
      await engine.close();
    }
  });

  test("when the card, back, agrees with the operator's word, then the ledger is told, and frees the card; unanswered, the card decides it again when seen", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const ledger = ledgerOf(sim);
    const { engine, journal, open } = engineWith(ledger);
    await open();
    const { access, back } = cardThatLeaves(30);
    const movement = await rechargeLeftUndecided(access, engine, journal);
    // The write landed, and the operator posted it without the card: the card is held.
    sim.resolve(KEY, movement.id, 'posted', { evidence: 'operator: the customer has it' });
    const atLedger = sim.movements.get(movement.id);
    assert.equal(atLedger?.awaitsCard, true);
    await engine.reconcile();
    back();

    ledger.failPosts = true;
    await access.withCard((session) => engine.settle(session));
    assert.equal(atLedger?.awaitsCard, true, 'the ledger did not answer');
    assert.ok(engine.uncertainCards.has('04E1E2E3'), 'the card decides it again when seen');

    ledger.failPosts = false;
    await access.withCard((session) => engine.settle(session));
    assert.equal(atLedger?.awaitsCard, false, printable(atLedger));
    assert.equal(atLedger?.cardEvidence, `card 04E1E2E3 read at till ${TILL}: it holds it`);
    assert.equal(engine.uncertainCards.size, 0);
    assert.equal(
      [...sim.movements.values()].filter((m) => m.compensates !== null).length,
      0,
      'no compensation: the card agrees',
    );
    await engine.close();
  });

  test("when the card, back, shows neither side of a write the operator decided meanwhile, then the operator's word stands and the ledger is told so, which frees the card", async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const { engine, journal, open } = engineWith(ledgerOf(sim));
    await open();
    const { access, slots, back } = cardThatLeaves(30);
    const movement = await rechargeLeftUndecided(access, engine, journal);
    sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
    // Written over elsewhere: neither 30 nor 50 where the write was planned.
    slots[1] = encodeValueBlock(7, 2);
    back();
    await access.withCard((session) => engine.settle(session));
    assert.equal(phaseOf(movement), 'done');
    const atLedger = sim.movements.get(movement.id);
    assert.equal(atLedger?.awaitsCard, false, printable(atLedger));
    assert.equal(
      atLedger?.cardEvidence,
      `card 04E1E2E3 read at till ${TILL}: it shows neither the balance before nor after it: the ledger's word stands`,
    );
    await engine.close();
  });
  test("when another till read the card and settled a void this till had learnt, then wrote the same credits from the same balance, then the card, back here, does not decide it: the ledger's word stands and nothing is compensated", async () => {
    const { sim, engine, journal, access, slots, back, movement } = await voidLearntWhileAway();
    // The card, found, is read at another till: it does not hold the write, which frees it...
    sim.resolve(KEY, movement.id, 'voided', {
      tillId: OTHER_TILL,
      evidence: `card 04E1E2E3 read at till ${OTHER_TILL}: it does not hold it`,
    });
    assert.equal(sim.movements.get(movement.id)?.awaitsCard, false);
    // ...and that till recharges it by the same 20 credits: the very balance and generation
    // this till had planned (30 -> 50, generation 2). Made later by the ledger's clock.
    const madeAt = Date.parse(sim.movements.get(movement.id)?.createdAt ?? '');
    await eventually(() => Date.now() > madeAt, "the ledger's clock past the first create");
    const other = randomUUID();
    const from = { cardId: '04E1E2E3', tillId: OTHER_TILL, cardBefore: 'classic:v1:30:1:0' };
    sim.create(KEY, { id: other, kind: 'recharge', credits: 20, ...from });
    sim.resolve(KEY, other, 'posted', { tillId: OTHER_TILL });
    slots[1] = encodeValueBlock(50, 2);
    back();
    await access.withCard((session) => engine.settle(session));
    const compensations = [...sim.movements.values()].filter((m) => m.compensates === movement.id);
    assert.deepEqual(
      compensations.map(printable),
      [],
      'no compensation of a write that never landed',
    );
    const settled = journal.movements.get(movement.id);
    assert.equal(settled?.learnt, undefined, printable(settled));
    assert.equal(settled?.card, 'not-written');
    assert.equal(phaseOf(movement), 'done');
    await engine.close();
  });
  test('when the card, back, shows neither side of a write whose void the till had learnt, then the ledger is told the card could not tell, not that it does not hold the write', async () => {
    const { sim, engine, access, slots, back, movement } = await voidLearntWhileAway();
    // Written, then spent from at a machine: the planned generation with less than planned.
    slots[1] = encodeValueBlock(47, 2);
    back();
    await access.withCard((session) => engine.settle(session));
    const atLedger = sim.movements.get(movement.id);
    assert.equal(atLedger?.awaitsCard, false, printable(atLedger));
    assert.equal(
      atLedger?.cardEvidence,
      `card 04E1E2E3 read at till ${TILL}: it shows neither the balance before nor after it: the ledger's word stands`,
    );
    await engine.close();
  });
});

describe('a movement adopted from the ledger', () => {
  test('when the till crashed between journaling an adopted movement and its planned write, then it is not voided: the plan is rebuilt and its card decides it', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const id = randomUUID();
    // Made by this till, whose journal was lost; its write landed (the card holds 50).
    sim.create(KEY, {
      id,
      kind: 'recharge',
      cardId: '04E1E2E3',
      credits: 20,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    const store = new MemoryStore();
    store.text = `${JSON.stringify({
      type: 'started',
      id,
      kind: 'recharge',
      cardId: '04E1E2E3',
      keyFingerprint: fingerprint(KEY),
      adopted: true,
      at: new Date().toISOString(),
    })}\n`;
    const { journal, engine, open } = engineWith(ledgerOf(sim), { store });
    await open();
    // Not left to the outbox (which voids what is 'to-void') before reconciliation rebuilds it.
    const adopted = journal.movements.get(id);
    assert.ok(adopted);
    assert.equal(phaseOf(adopted), 'uncertain');
    engine.start();
    await engine.reconcile();
    assert.equal(sim.movements.get(id)?.state, 'pending', 'not voided unseen');
    assert.deepEqual(journal.movements.get(id)?.reserved?.intent, {
      type: 'classic',
      slot: 1,
      value: 50,
      generation: 2,
      previousBalance: 30,
    });
    const slots: [Buffer, Buffer] = [encodeValueBlock(30, 1), encodeValueBlock(50, 2)];
    const card = classicWalletCard({
      cardId: '04E1E2E3',
      checkUid: async () => undefined,
      readSlots: async () => slots,
      writeSlotBlock: async () => ({ outcome: 'committed' }),
    });
    await engine.settle(card);
    await eventually(() => sim.movements.get(id)?.state === 'posted', 'the recharge posted');
    await engine.close();
  });
});

describe('a compensating movement', () => {
  test('when the till crashed between journaling a compensation the ledger created and its card line, then it is posted, not left waiting for a card that cannot decide it', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, '04E1E2E3', 30);
    const id = randomUUID();
    const compensation = randomUUID();
    // A recharge the card holds, voided by an operator; this till created its compensation.
    sim.create(KEY, {
      id,
      kind: 'recharge',
      cardId: '04E1E2E3',
      credits: 20,
      tillId: TILL,
      cardBefore: 'classic:v1:30:1:0',
    });
    sim.resolve(KEY, id, 'voided', { evidence: 'operator: the card was reported lost' });
    sim.create(KEY, {
      id: compensation,
      kind: 'recharge',
      cardId: '04E1E2E3',
      credits: 20,
      tillId: TILL,
      compensates: id,
    });
    const at = new Date().toISOString();
    const store = new MemoryStore();
    // The crash came after the ledger's answer was journaled (reserved), before its card line.
    store.text = [
      {
        type: 'started',
        id,
        kind: 'recharge',
        cardId: '04E1E2E3',
        keyFingerprint: fingerprint(KEY),
        at,
      },
      { type: 'card', id, outcome: 'committed' },
      { type: 'resolved', id, state: 'voided' },
      {
        type: 'started',
        id: compensation,
        kind: 'recharge',
        cardId: '04E1E2E3',
        keyFingerprint: fingerprint(KEY),
        compensates: id,
        credits: 20,
        at,
      },
      { type: 'reserved', id: compensation, credits: 20, amount: '10.00' },
    ]
      .map((line) => `${JSON.stringify(line)}\n`)
      .join('');
    const { journal, engine, open } = engineWith(ledgerOf(sim), { store });
    await open();
    const made = journal.movements.get(compensation);
    assert.ok(made);
    // It writes no card: the card holds what it records already.
    assert.equal(phaseOf(made), 'to-post');
    engine.start();
    await engine.reconcile();
    await eventually(() => sim.movements.get(compensation)?.state === 'posted', 'the post');
    assert.equal(sim.cardAccount(SHOP, '04E1E2E3'), 50, 'the books match the card again');
    await eventually(() => engine.unconfirmed === 0, 'nothing left unconfirmed');
    await engine.close();
  });
});

describe('a till that lost its journal', () => {
  test('when its unknown movement and the retry it made meanwhile planned the same Classic write, then the card counts once: the retry is posted and the unknown movement voided', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    const rig = cardOnReader(30);
    const request = {
      request: { credits: 20 },
      customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
      keyFingerprint: fingerprint(KEY),
    };
    // The first try: the write never reaches the card, and the worker cannot tell.
    const before = engineWith(ledgerOf(sim));
    await before.open();
    rig.nextWrite = 'dropped';
    await assert.rejects(
      rechargeCard(rig.access, before.engine, request),
      (error: AppError) => error.code === 'CardRemovedDuringWrite',
    );
    const [lost] = before.journal.movements.values();
    assert.ok(lost);
    await before.engine.close();
    // The till's disk is lost: the same till, a new journal. The POS retries; it lands.
    const after = engineWith(ledgerOf(sim));
    await after.open();
    const retried = await rechargeCard(rig.access, after.engine, request);
    assert.equal(retried.credits, 50, JSON.stringify(retried));
    // Reconciliation adopts the unknown movement (this till's); the card decides it.
    await after.engine.reconcile();
    await rig.access.withCard((session) => after.engine.settle(session));
    await eventually(() => after.engine.unconfirmed === 0, 'everything resolved');
    assert.equal(sim.movements.get(lost.id)?.state, 'voided', 'the unknown movement');
    assert.equal(rig.held(), 50);
    assert.equal(sim.cardAccount(SHOP, CARD), 50, 'the books match the card');
    await after.engine.close();
  });
});

describe('a create that reaches the ledger after another till wrote the card', () => {
  test('when the card state it was planned from was moved on from by a posted movement, then MovementVoided: the card is not written, and the movement is voided', async () => {
    const sim = simWithShops();
    sim.importCard(SHOP, CARD, 30);
    // Another till read the card in the same state (30, generation 1), wrote it and posted.
    const other = randomUUID();
    const from = { cardId: CARD, tillId: OTHER_TILL, cardBefore: 'classic:v1:30:1:0' };
    sim.create(KEY, { id: other, kind: 'recharge', credits: 5, ...from });
    sim.resolve(KEY, other, 'posted', { tillId: OTHER_TILL });
    const { engine, journal, open } = engineWith(ledgerOf(sim));
    await open();
    const card = cardOnReader(30);
    const writes = card.writes;
    await assert.rejects(
      rechargeCard(card.access, engine, {
        request: { credits: 5 },
        customer: { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' },
        keyFingerprint: fingerprint(KEY),
      }),
      (error: AppError) => error.code === 'MovementVoided',
    );
    assert.equal(card.writes, writes, 'the card is not written');
    // The rig's refusals do not say every try was answered: voided (a tombstone) to be sure.
    await eventually(
      () => [...journal.movements.values()].every((movement) => movement.resolved === 'absent'),
      'the refused movement resolved as absent',
    );
    await engine.close();
  });
});
