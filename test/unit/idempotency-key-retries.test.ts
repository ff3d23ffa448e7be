/**
 * An Idempotency-Key sent again moves a card once, in the cases the shop simulation found it
 * moving two (test/simulation/, "a key moved a card twice"):
 * - its write landed, and the till crashed after journaling that the card holds the write and
 *   before journaling the answer: the same key, after the restart (and after the restarts that
 *   compact the journal), replays the answer and never writes the card again;
 * - its write was left undecided on its card, and the ledger's word on it came (an operator
 *   voided it, the card reported lost) while the card was away: with another card on the
 *   reader, the key is MovementUnsettled until its card is seen, as for a write undecided;
 * - and when another till read that card first, compensated the operator's void (the card held
 *   the write) and wrote the card since, so that it shows neither side of the first write: the
 *   key, with its card, answers the write the books count, and writes nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { AppError } from '../../service/errors.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import type { RechargeAnswer } from '../../service/wallet/movement-engine.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import type { SimLedger } from '../simulation/sim-ledger.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  OTHER_TILL,
  SHOP,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  idempotency,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';

const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };
const keyFingerprint = fingerprint(KEY);

/** The journal as a crash right after the card line left it: no answer, nothing resolved. */
function crashedAfterCardLine(text: string): MemoryStore {
  const store = new MemoryStore();
  const lines = text.split('\n').filter((line) => line !== '');
  const card = lines.findIndex((line) => JSON.parse(line).type === 'card');
  store.text = lines
    .slice(0, card + 1)
    .map((line) => `${line}\n`)
    .join('');
  return store;
}

describe('a key replayed after a crash between the card line and the answer line', () => {
  for (const kind of ['recharge', 'discharge'] as const) {
    test(`when a ${kind}'s key comes again after the restart, and again after restarts that compacted the journal, then the first answer and the card is not written again`, async () => {
      const sim = simWithShops();
      sim.importCard(SHOP, CARD, 30);
      const ledger = ledgerOf(sim);
      const card = cardOnReader(30);
      const key = idempotency(`k-${kind}`, kind === 'recharge' ? '{"credits":10}' : '{}');
      const ask = (engine: ReturnType<typeof engineWith>['engine']) =>
        kind === 'recharge'
          ? rechargeCard(card.access, engine, {
              request: { credits: 10 },
              customer,
              keyFingerprint,
              idempotency: key,
            })
          : dischargeCard(card.access, engine, { keyFingerprint, idempotency: key });

      const first = engineWith(ledger);
      await first.open();
      const answer = await ask(first.engine);
      await first.engine.close();
      const held = card.held();
      const writes = card.writes;

      // The restart: the journal holds the card line, not the answer; the movement is posted.
      const store = crashedAfterCardLine(first.store.text);
      const second = engineWith(ledger, { store });
      await second.open();
      await eventually(() => sim.movements.values().next().value?.state === 'posted', 'the post');
      assert.deepEqual(await ask(second.engine), answer);
      await second.engine.close();

      // Two more restarts, each compacting the journal: the key is still remembered.
      for (const _ of [1, 2]) {
        const next = engineWith(ledger, { store });
        await next.open();
        assert.deepEqual(await ask(next.engine), answer);
        await next.engine.close();
      }
      assert.equal(card.writes, writes, 'the card written again');
      assert.equal(card.held(), held);
      assert.equal(sim.movements.size, 1, 'a second movement');
    });
  }
});

/**
 * A recharge of 10 with the Idempotency-Key `name` on a card holding 30, its write left
 * undecided (the card pulled as it landed), which an operator then voided as the card was
 * reported lost. `ask` asks the same key again (of `engine`, with the card `on`).
 */
async function recharge10VoidedUnseen(name: string, store = new MemoryStore()) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const till = engineWith(ledgerOf(sim), { store });
  await till.open();
  const card = cardOnReader(30);
  const key = idempotency(name, '{"credits":10}');
  const ask = (engine = till.engine, on = card) =>
    rechargeCard(on.access, engine, {
      request: { credits: 10 },
      customer,
      keyFingerprint,
      idempotency: key,
    });
  card.nextWrite = 'lost';
  await assert.rejects(ask(), (error: AppError) => error.code === 'CardRemovedDuringWrite');
  const [movement] = till.journal.movements.values();
  assert.ok(movement);
  sim.resolve(KEY, movement.id, 'voided', { evidence: 'operator: the card was reported lost' });
  return { sim, till, card, ask, movement };
}

/** Another till's compensation of `movementId` (it saw the card holding the write), created. */
function compensatedAtOtherTill(sim: SimLedger, movementId: string): string {
  const id = randomUUID();
  sim.create(KEY, {
    id,
    kind: 'recharge',
    cardId: CARD,
    credits: 10,
    tillId: OTHER_TILL,
    compensates: movementId,
  });
  return id;
}

/** The answer of the first write: 30 + 10 credits, 5.00 paid, the voided movement's id. */
const firstWrite = (movementId: string) => ({
  cardId: CARD,
  credits: 40,
  rechargeAmount: 5,
  movementId,
});
const written = ({ cardId, credits, rechargeAmount, movementId }: RechargeAnswer) => ({
  cardId,
  credits,
  rechargeAmount,
  movementId,
});

describe("a key whose write the ledger's word decided while its card was away", () => {
  test('when the key comes with another card, then MovementUnsettled and that card is not written; with its own card, the answer of the write it holds, and one card moved', async () => {
    const { till, card, ask, movement } = await recharge10VoidedUnseen('k-lost');
    const { engine } = till;
    const other = cardOnReader(5, '04BBBBBB');
    // The customer reports the card lost: the operator voided the recharge, the till learns it.
    await engine.reconcile();
    assert.equal(movement.learnt, true, 'learnt from the ledger');

    await assert.rejects(
      ask(engine, other),
      (error: AppError) => error.code === 'MovementUnsettled',
    );
    assert.equal(other.writes, 0);
    // The card turns up holding the write: compensated, and the key answers that write.
    assert.deepEqual(written(await ask()), firstWrite(movement.id));
    assert.equal(card.held(), 40);
    assert.equal(card.writes, 1);
    await engine.close();
  });
});

describe('a key whose write another till compensated, its card written since', () => {
  test('when the key comes again with its card, which shows neither side of the write, then the answer of the write the books count, and nothing is written', async () => {
    const { sim, till, card, ask, movement } = await recharge10VoidedUnseen('k-covered');
    // Found, the card is read at another till, which sets the books right (the card holds the
    // write), then recharges it.
    const other = { tillId: OTHER_TILL };
    sim.resolve(KEY, compensatedAtOtherTill(sim, movement.id), 'posted', other);
    const later = randomUUID();
    sim.create(KEY, {
      id: later,
      kind: 'recharge',
      cardId: CARD,
      credits: 5,
      ...other,
      cardBefore: 'classic:v1:40:2:1',
    });
    sim.resolve(KEY, later, 'posted', other);
    card.slots[0] = encodeValueBlock(45, 3);
    const writes = card.writes;

    assert.deepEqual(written(await ask()), firstWrite(movement.id));
    assert.equal(card.writes, writes, 'the card written again');
    assert.equal(sim.movements.size, 3, 'a movement more');
    await till.engine.close();
  });
});

describe('a key whose write an operator voided, its card unable to tell when seen', () => {
  test("when the key comes again with its card, then MovementUnsettled, nothing written (after a restart too), until another till's compensation is posted; then the answer of the write, and one card moved", async () => {
    // Seed 959995826: the write landed, the operator voided it (the card reported lost), a
    // machine spent from the found card (it shows neither side of the write), and another till
    // that saw it holding the write compensated the void only later.
    const store = new MemoryStore();
    const {
      sim,
      till: first,
      card,
      ask,
      movement,
    } = await recharge10VoidedUnseen('k-void-unseen', store);
    const landed = card.slots.findIndex((block) => block.equals(encodeValueBlock(40, 2)));
    assert.notEqual(landed, -1, 'the write landed');
    card.slots[landed] = encodeValueBlock(35, 2);
    const writes = card.writes;

    const unsettled = (error: AppError) => {
      assert.equal(error.code, 'MovementUnsettled', `${error.status} ${error.code}`);
      return true;
    };
    await assert.rejects(ask(first.engine), unsettled);
    assert.equal(first.journal.movements.get(movement.id)?.byLedger, true);
    await first.engine.close();
    // A restart compacts the journal: the key is still known.
    const second = engineWith(ledgerOf(sim), { store });
    await second.open();
    await assert.rejects(ask(second.engine), unsettled);
    const compensation = compensatedAtOtherTill(sim, movement.id);
    await assert.rejects(ask(second.engine), unsettled, 'the compensation still pending');
    sim.resolve(KEY, compensation, 'posted', { tillId: OTHER_TILL });

    assert.deepEqual(written(await ask(second.engine)), firstWrite(movement.id));
    assert.equal(card.writes, writes, 'the card written again');
    assert.equal(sim.movements.size, 2, 'the first movement and its compensation only');
    await second.engine.close();
  });
});
