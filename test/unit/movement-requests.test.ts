/**
 * The request half of the money engine (reserve, commit, settle) where the ledger or the card
 * answers unlike the happy path: a key no longer held, a create the ledger answers with
 * something other than this movement pending, a movement changed while its request owned it,
 * a card that cannot decide an earlier write. In each, the card is not written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { errors, type AppError } from '../../service/errors.ts';
import type { Logger } from '../../service/logger.ts';
import { dischargeCard } from '../../service/wallet/discharge-card.ts';
import type { ReserveInput } from '../../service/wallet/movement-engine.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  SHOP,
  cardOnReader,
  engineWith,
  eventually,
  fingerprint,
  ledgerOf,
  simWithShops,
} from '../support/money-rig.ts';
import { withoutReceipt } from '../support/http-client.ts';

const OTHER_CARD = '04F1F2F3';
const customer = { customerId: SHOP, name: 'A', credits: 1_000, creditCost: '0.50' };

async function setUp(options: Parameters<typeof engineWith>[1] = {}) {
  const sim = simWithShops();
  sim.importCard(SHOP, CARD, 30);
  const ledger = ledgerOf(sim);
  const rig = engineWith(ledger, options);
  await rig.open();
  const card = cardOnReader(30);
  const recharge = () =>
    rechargeCard(card.access, rig.engine, {
      request: { credits: 10 },
      customer,
      keyFingerprint: fingerprint(KEY),
    });
  return { sim, ledger, ...rig, card, recharge, movements: () => [...sim.movements.values()] };
}

const rejectsWith = (code: string) => (error: AppError) => {
  assert.equal(error.code, code, `${error.code}: ${error.message}`);
  return true;
};

function recordingLog() {
  const lines: string[] = [];
  const log: Logger = {
    debug: () => undefined,
    info: (message) => lines.push(`info: ${message}`),
    warn: (message) => lines.push(`warn: ${message}`),
    error: (message) => lines.push(`error: ${message}`),
  };
  return { log, lines };
}

describe('reserve', () => {
  test('when the key a request names is not held, then 401 and nothing is journaled or asked', async () => {
    const { engine, card, ledger, journal } = await setUp();
    await assert.rejects(
      dischargeCard(card.access, engine, { keyFingerprint: 'not-held' }),
      rejectsWith('Unauthorized: invalid api key'),
    );
    assert.deepEqual(ledger.calls, []);
    assert.equal(journal.movements.size, 0);
    await engine.close();
  });

  test("when a void's tombstone refuses the create, then MovementVoided, journaled voided, the card not written", async () => {
    const { engine, card, ledger, journal, recharge } = await setUp();
    ledger.createMovement = async () => {
      throw new LedgerRefusal(409, 'MovementAlreadyVoided');
    };
    await assert.rejects(recharge(), rejectsWith('MovementVoided'));
    const [movement] = journal.movements.values();
    assert.equal(movement?.resolved, 'voided');
    assert.equal(movement?.card, undefined);
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test('when the ledger answers the create with another movement, none, or not pending, then MovementVoided, logged, the card not written, and the movement voided', async () => {
    for (const answer of ['other id', 'no id', 'posted'] as const) {
      const recorded = recordingLog();
      const { engine, card, journal, ledger, movements, recharge, sim } = await setUp({
        log: recorded.log,
      });
      const create = ledger.createMovement;
      ledger.createMovement = async (apiKey, request) => {
        const created = await create(apiKey, request);
        if (answer === 'posted') return sim.resolve(apiKey, request.id, 'posted');
        if (answer === 'no id') return { ...created, id: undefined as unknown as string };
        return { ...created, id: 'another' };
      };
      await assert.rejects(recharge(), rejectsWith('MovementVoided'));
      assert.equal(card.writes, 0, answer);
      const id = movements()[0]?.id;
      assert.ok(
        recorded.lines.some((line) =>
          line.startsWith(`error: movement ${id}: the ledger answered the create with state`),
        ),
        recorded.lines.join('\n'),
      );
      if (answer !== 'posted') {
        await eventually(() => movements()[0]?.state === 'voided', 'the void');
        // An answer about another movement (or none) says nothing of this one's credits.
        assert.equal(journal.movements.get(id ?? '')?.reserved, undefined, answer);
      } else {
        // Posted without its card write: a compensating payout sets the books right.
        await eventually(
          () => movements()[1]?.compensates === movements()[0]?.id,
          'the compensation',
        );
        assert.equal(movements()[1]?.kind, 'discharge');
        assert.equal(movements()[1]?.credits, 10);
        await eventually(() => movements()[1]?.state === 'posted', 'the compensation posted');
        assert.equal(sim.shops.get(SHOP)?.credits, 1_000, "the shop's pool is whole again");
        assert.equal(sim.cardAccount(SHOP, CARD), 30, 'the card account is what the card holds');
      }
      await engine.close();
    }
  });

  test('when the movement was resolved while the ledger answered its create, then MovementVoided and the card is not written', async () => {
    const { engine, card, journal, ledger, recharge } = await setUp();
    const create = ledger.createMovement;
    ledger.createMovement = async (apiKey, request) => {
      const created = await create(apiKey, request);
      await journal.append({
        type: 'resolved',
        id: request.id,
        state: 'voided',
        at: new Date().toISOString(),
      });
      return created;
    };
    await assert.rejects(recharge(), rejectsWith('MovementVoided'));
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test('when the ledger did not answer the create, then the card is not written and the movement is voided (a late create meets its tombstone)', async () => {
    const { engine, card, ledger, journal, recharge, sim } = await setUp();
    let sent = '';
    ledger.createMovement = async (_apiKey, request) => {
      sent = request.id;
      throw errors.ledgerUnavailable();
    };
    await assert.rejects(recharge(), rejectsWith('LedgerUnavailable'));
    assert.equal(card.writes, 0);
    const movement = journal.movements.get(sent);
    assert.equal(movement?.card, 'not-written');
    await eventually(() => movement?.resolved !== undefined, 'the void');
    assert.throws(
      () => sim.create(KEY, { id: sent, kind: 'recharge', cardId: CARD, credits: 10 }),
      { code: 'MovementAlreadyVoided' },
    );
    await engine.close();
  });
});

describe('commit', () => {
  test('when the movement was resolved while its request owned it, then the card is not written', async () => {
    const { engine, card, journal } = await setUp();
    const wallet = await engine.readWallet(card.card);
    const input: ReserveInput = {
      kind: 'discharge',
      keyFingerprint: fingerprint(KEY),
      idempotency: undefined,
      wallet,
      request: { credits: 30 },
      balanceAfter: () => 0,
    };
    const reservation = await engine.reserve(card.card, input);
    await journal.append({
      type: 'resolved',
      id: reservation.movement.id,
      state: 'voided',
      at: new Date().toISOString(),
    });
    await assert.rejects(engine.commit(reservation, card.card), {
      message: `movement ${reservation.movement.id} changed while its request owned it`,
    });
    assert.equal(card.writes, 0);
    await engine.close();
  });

  test('while a request owns its movement, then the card is not listed as uncertain nor settled by another request', async () => {
    const { engine, card } = await setUp();
    const wallet = await engine.readWallet(card.card);
    const reservation = await engine.reserve(card.card, {
      kind: 'discharge',
      keyFingerprint: fingerprint(KEY),
      idempotency: undefined,
      wallet,
      request: { credits: 30 },
      balanceAfter: () => 0,
    });
    assert.deepEqual(engine.uncertainCards, new Set());
    await engine.settle(card.card);
    assert.equal(reservation.movement.card, undefined, 'left to its request');
    assert.equal(engine.unconfirmed, 1);
    await engine.commit(reservation, card.card);
    await eventually(() => engine.unconfirmed === 0, 'the post');
    await engine.close();
  });
});

describe('release', () => {
  test('when the background post of an answered movement fails (the journal cannot be written), then the error is logged with the movement, and the card keeps its write', async () => {
    const store = new MemoryStore();
    const { log, lines } = recordingLog();
    const { engine, ledger, card, sim, recharge } = await setUp({ store, log });
    const post = ledger.postMovement;
    ledger.postMovement = async (apiKey, id, by) => {
      const posted = await post(apiKey, id, by);
      // The disk fills between the ledger's answer and the journal line that records it.
      store.append = () => Promise.reject(new Error('ENOSPC: no space left on device'));
      return posted;
    };
    const answer = await recharge();
    assert.equal(answer.credits, 40, JSON.stringify(answer));
    const [movement] = [...sim.movements.values()];
    await eventually(
      () => lines.some((line) => line.startsWith('error: ')),
      `an error line (log: ${JSON.stringify(lines)})`,
    );
    assert.ok(
      lines.includes(
        `error: movement ${movement?.id}: posting in the background: ENOSPC: no space left on device`,
      ),
      JSON.stringify(lines),
    );
    assert.equal(card.held(), 40);
    await engine.close().catch(() => undefined);
  });
});

describe('settle', () => {
  test('when the card shows neither the balance before nor after an earlier write and the ledger still holds it pending, then MovementUnsettled, logged, and the card is not written', async () => {
    const recorded = recordingLog();
    const { engine, card, recharge, movements } = await setUp({ log: recorded.log });
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    // Someone else's value at the planned slot and generation.
    card.slots[1] = encodeValueBlock(7, 2);
    const writes = card.writes;
    await assert.rejects(recharge(), rejectsWith('MovementUnsettled'));
    assert.equal(card.writes, writes);
    assert.equal(movements()[0]?.state, 'pending');
    assert.ok(
      recorded.lines.some((line) =>
        line.startsWith(
          `error: movement ${movements()[0]?.id} on card ${CARD}: the card shows neither`,
        ),
      ),
      recorded.lines.join('\n'),
    );
    await engine.close();
  });

  test('when the card cannot decide an earlier write but an operator already decided it at the ledger, then that decision is taken and the card is free', async () => {
    const { engine, card, journal, recharge, sim } = await setUp();
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    card.slots[1] = encodeValueBlock(7, 2);
    const [movement] = journal.movements.values();
    assert.ok(movement);
    sim.resolve(KEY, movement.id, 'voided');
    await engine.settle(card.card);
    assert.equal(movement.card, 'not-written');
    assert.equal(movement.resolved, 'voided');
    assert.deepEqual(engine.uncertainCards, new Set());
    await engine.close();
  });

  test('when only another card holds an uncertain write, then settling this card touches neither that write nor this card', async () => {
    const { engine, card, recharge } = await setUp();
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    const other = cardOnReader(30, OTHER_CARD);
    let touched = 0;
    await engine.settle({
      ...other.card,
      checkUid: async () => {
        touched += 1;
      },
      decide: async (intent) => {
        touched += 1;
        return other.card.decide(intent);
      },
    });
    assert.equal(touched, 0, 'no UID check, no read');
    assert.deepEqual(engine.uncertainCards, new Set([CARD]));
    await engine.close();
  });

  test('when a write is uncertain and the card later decides it, then the log says so and whether it landed', async () => {
    for (const [nextWrite, said] of [
      ['lost', 'landed'],
      ['dropped', 'did not land'],
    ] as const) {
      const recorded = recordingLog();
      const { engine, card, journal, recharge } = await setUp({ log: recorded.log });
      card.nextWrite = nextWrite;
      await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
      await engine.settle(card.card);
      const [movement] = journal.movements.values();
      assert.ok(
        recorded.lines.some((line) =>
          line.startsWith(`warn: movement ${movement?.id}: card write uncertain (`),
        ),
        recorded.lines.join('\n'),
      );
      assert.ok(
        recorded.lines.includes(`info: movement ${movement?.id}: card shows it ${said}`),
        recorded.lines.join('\n'),
      );
      await engine.close();
    }
  });

  test('when the card shows an earlier write landed, then its answer is journaled and it is posted before anything new', async () => {
    const { engine, card, journal, recharge, movements } = await setUp();
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    await engine.settle(card.card);
    const [movement] = journal.movements.values();
    assert.equal(movement?.card, 'committed');
    assert.deepEqual(withoutReceipt(movement?.answer?.body), {
      cardId: CARD,
      credits: 40,
      rechargeAmount: 5,
    });
    assert.equal(movements()[0]?.state, 'posted');
    await engine.close();
  });

  test('when the card shows an earlier write did not land, then it is voided and not journaled as torn', async () => {
    const { engine, card, journal, recharge, movements } = await setUp();
    card.nextWrite = 'dropped';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    await engine.settle(card.card);
    const [movement] = journal.movements.values();
    assert.equal(movement?.card, 'not-written');
    assert.equal(movement?.torn, undefined);
    assert.equal(movement?.answer, undefined);
    assert.equal(movements()[0]?.state, 'voided');
    assert.equal(engine.tornProof(CARD), undefined);
    await engine.close();
  });

  test("when a card's UID no longer matches, then settling fails before the card is read", async () => {
    const { engine, card, recharge } = await setUp();
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    let reads = 0;
    const other = {
      ...card.card,
      checkUid: async () => {
        throw errors.noCard();
      },
      decide: async () => {
        reads += 1;
        return { outcome: 'committed' as const };
      },
    };
    await assert.rejects(engine.settle(other), rejectsWith('NoCard'));
    assert.equal(reads, 0);
    await engine.close();
  });

  test('when the journal is reopened after a restart, then an earlier uncertain write is still settled by its card', async () => {
    const store = new MemoryStore();
    const { engine, card, recharge, sim } = await setUp({ store });
    card.nextWrite = 'lost';
    await assert.rejects(recharge(), rejectsWith('CardRemovedDuringWrite'));
    await engine.close();
    const restarted = engineWith(ledgerOf(sim), { store });
    await restarted.open();
    assert.deepEqual(restarted.engine.uncertainCards, new Set([CARD]));
    await restarted.engine.settle(card.card);
    assert.equal([...sim.movements.values()][0]?.state, 'posted');
    await restarted.engine.close();
  });
});
