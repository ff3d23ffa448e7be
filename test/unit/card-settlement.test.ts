/**
 * CardSettlement on its own, over a journal in memory: what it asks of the card, the resolver
 * and the ledger when a card is presented (an earlier uncertain write; a write whose very block
 * another movement of the card already put there), and when the ledger holds the card for an
 * operator's word given without it (freeHeld, decideHeld, awaitsCard).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { planWrite } from '../../service/card/wallet-card.ts';
import type { CardRecord, WalletCard, WriteDecision } from '../../service/card/card-face.ts';
import type { LedgerCardAccount, LedgerMovement } from '../../service/cloud/ledger-client.ts';
import type { AnswerStore } from '../../service/wallet/answer-store.ts';
import { awaitsCard, CardSettlement } from '../../service/wallet/card-settlement.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementResolver } from '../../service/wallet/movement-resolver.ts';
import {
  CARD,
  KEY,
  OTHER_TILL,
  TILL,
  cardOnReader,
  fingerprint,
  bookInMemory,
  ledgerMovement,
} from '../support/money-rig.ts';

const OTHER_CARD = '04F1F2F3';

/** Another till's payout of 30 as the ledger shows it, voided by an operator, held for the card. */
function atLedger(overrides: Partial<LedgerMovement> = {}): LedgerMovement {
  return ledgerMovement({
    kind: 'discharge',
    state: 'voided',
    credits: 30,
    amount: '15.00',
    customerCredits: 1_000,
    resolvedAt: '2026-01-01T00:01:00.000Z',
    tillId: OTHER_TILL,
    evidence: 'operator: the card was reported lost',
    awaitsCard: true,
    ...overrides,
  });
}

async function setUp(account: () => Promise<LedgerCardAccount> = async () => accountOf([])) {
  const { journal, book, lines } = await bookInMemory();
  // What the settlement asks of the resolver and the answer store, recorded.
  const calls: string[] = [];
  const decided: { apiKey: string; movement: LedgerMovement; shows: unknown; evidence: string }[] =
    [];
  const resolver = {
    resolve: async (movement: Movement) => {
      calls.push(`resolve ${movement.id}`);
      return false;
    },
    learn: async (movement: Movement) => {
      calls.push(`learn ${movement.id}`);
      return false;
    },
    seen: async (movement: Movement, outcome?: string) => {
      calls.push(`seen ${movement.id} ${outcome ?? 'unknown'}`);
    },
    // Nothing at the ledger wrote the card since: the card decides.
    cardMayDecide: async () => true,
    cardDecides: async (
      apiKey: string,
      movement: LedgerMovement,
      shows: unknown,
      evidence: string,
    ) => {
      decided.push({ apiKey, movement, shows, evidence });
      return undefined;
    },
  };
  const answers = {
    record: async (movement: Movement) => {
      calls.push(`record ${movement.id}`);
      return {};
    },
  };
  const accountCalls: string[] = [];
  const ledger = {
    getCardAccount: (apiKey: string, cardId: string) => {
      accountCalls.push(`${apiKey} ${cardId}`);
      return account();
    },
  };
  const settlement = new CardSettlement(
    book,
    resolver as unknown as MovementResolver,
    answers as unknown as AnswerStore,
    ledger,
  );
  /**
   * Journals a movement of `cardId` reserved for `intent`, and its card outcome if given
   * (`learnt-not-written`: not written, as learnt from the ledger with the card away).
   */
  const journaled = async (
    cardId: string,
    intent: ReturnType<typeof planWrite>,
    outcome?: 'committed' | 'not-written' | 'learnt-not-written',
  ): Promise<Movement> => {
    const id = randomUUID();
    const at = new Date(0).toISOString();
    const print = fingerprint(KEY);
    await journal.append({
      type: 'started',
      id,
      kind: 'recharge',
      cardId,
      keyFingerprint: print,
      at,
    });
    await journal.append({ type: 'reserved', id, credits: 10, amount: '5.00', intent, at });
    if (outcome === 'learnt-not-written') {
      await journal.append({ type: 'card', id, outcome: 'not-written', learnt: true, at });
    } else if (outcome) {
      await journal.append({ type: 'card', id, outcome, at });
    }
    return book.movement(id);
  };
  return { settlement, book, journal, calls, decided, accountCalls, lines, journaled };
}

function accountOf(movements: LedgerMovement[]): LedgerCardAccount {
  return { cardId: CARD, credits: 0, importedCredits: null, suspect: false, flags: [], movements };
}

/** A card holding 30 credits whose reads are counted. */
async function countedCard(balance = 30, cardId = CARD) {
  const rig = cardOnReader(balance, cardId);
  const before = (await rig.card.readWallet()).before;
  let decides = 0;
  const card: WalletCard = {
    ...rig.card,
    cardId,
    checkUid: async () => undefined,
    decide: async (intent): Promise<WriteDecision> => {
      decides += 1;
      return rig.card.decide(intent);
    },
  };
  return { rig, card, before, decides: () => decides };
}

describe('CardSettlement.settle, a write whose block another movement of the card already put there', () => {
  test('when another movement of the same card planned the very same write and it landed, then this one is journaled not written without reading the card, and voided', async () => {
    const { settlement, calls, journaled } = await setUp();
    const { rig, card, before, decides } = await countedCard();
    const intent = planWrite(before, 40, randomUUID());
    // The retry's write landed: the card holds the block both planned.
    await journaled(CARD, intent, 'committed');
    assert.equal((await rig.card.write(intent)).outcome, 'committed');
    const adopted = await journaled(CARD, intent);
    await settlement.settle(card);
    assert.equal(adopted.card, 'not-written', JSON.stringify(adopted));
    assert.equal(decides(), 0, 'the card is not read for it');
    assert.deepEqual(calls, [`resolve ${adopted.id}`]);
  });

  test('when the movement with the same planned write is of another card, then the card decides: it holds the write, so it landed', async () => {
    const { settlement, calls, journaled } = await setUp();
    const { rig, card, before, decides } = await countedCard();
    const intent = planWrite(before, 40, randomUUID());
    await journaled(OTHER_CARD, intent, 'committed');
    assert.equal((await rig.card.write(intent)).outcome, 'committed');
    const uncertain = await journaled(CARD, intent);
    await settlement.settle(card);
    assert.equal(uncertain.card, 'committed', JSON.stringify(uncertain));
    assert.equal(decides(), 1);
    assert.deepEqual(calls, [`record ${uncertain.id}`, `resolve ${uncertain.id}`]);
  });

  test('when the movement with the same planned write did not land, then the card decides', async () => {
    const { settlement, journaled } = await setUp();
    const { rig, card, before, decides } = await countedCard();
    const intent = planWrite(before, 40, randomUUID());
    await journaled(CARD, intent, 'not-written');
    await rig.card.write(intent);
    const uncertain = await journaled(CARD, intent);
    await settlement.settle(card);
    assert.equal(uncertain.card, 'committed', JSON.stringify(uncertain));
    assert.equal(decides(), 1);
  });
});

describe('CardSettlement, a payout the card moved on from, and the ledger lists a write planned from the state it left', () => {
  /**
   * A card at 30 paid out (0, one generation on), then sold 4 credits from another till's float
   * planned from that state: the card shows neither side of the payout any more.
   */
  async function cardMovedOn() {
    const { rig, card, before } = await countedCard();
    const payoutId = randomUUID();
    const payout = planWrite(before, 0, payoutId);
    assert.equal((await rig.card.write(payout)).outcome, 'committed');
    const left = (await rig.card.readWallet()).before;
    const saleId = floatMovementId('ffffffffffff', 1);
    // The sale's block; its reference (a float recharge's) plays no part here.
    assert.equal((await rig.card.write(planWrite(left, 4, saleId))).outcome, 'committed');
    const atLedgerAs = atLedger({ id: payoutId, cardBefore: before, awaitsCard: false });
    const sale = atLedger({
      id: saleId,
      kind: 'recharge',
      credits: 4,
      state: 'posted',
      cardBefore: left,
      awaitsCard: false,
    });
    return { card, payout, payoutId, atLedgerAs, sale, left };
  }

  test('when its outcome was learnt from the ledger (voided) and the list shows the write landed, then the card is taken to show it landed; without that movement listed, the card cannot tell', async () => {
    for (const witnessed of [true, false]) {
      const { card, payout, atLedgerAs, sale } = await cardMovedOn();
      const listed = witnessed ? [sale, atLedgerAs] : [atLedgerAs];
      const { settlement, journaled, calls, lines } = await setUp(async () => accountOf(listed));
      const learnt = await journaled(CARD, payout, 'learnt-not-written');
      // The journaled id is the ledger's.
      atLedgerAs.id = learnt.id;
      await settlement.settle(card);
      assert.deepEqual(calls, [`seen ${learnt.id} ${witnessed ? 'committed' : 'unknown'}`]);
      assert.equal(
        lines.some((line) => line.includes(`was planned from`)),
        witnessed,
        lines.join('\n'),
      );
    }
  });

  test('when the write was left undecided and the list shows it landed, then it is journaled landed, its answer recorded, and resolved; without that movement listed, the ledger is asked', async () => {
    for (const witnessed of [true, false]) {
      const { card, payout, atLedgerAs, sale } = await cardMovedOn();
      const listed = witnessed ? [sale, atLedgerAs] : [atLedgerAs];
      const { settlement, journaled, calls } = await setUp(async () => accountOf(listed));
      const uncertain = await journaled(CARD, payout);
      atLedgerAs.id = uncertain.id;
      await assert.rejects(settlement.settle(card)).catch(() => undefined);
      assert.deepEqual(
        { card: uncertain.card, calls },
        witnessed
          ? { card: 'committed', calls: [`record ${uncertain.id}`, `resolve ${uncertain.id}`] }
          : { card: undefined, calls: [`learn ${uncertain.id}`] },
      );
    }
  });

  test("when an operator's void holds the card, then the list's word is the evidence that it holds the write", async () => {
    const { card, atLedgerAs, sale, left } = await cardMovedOn();
    const { settlement, decided } = await setUp();
    await settlement.decideHeld(card, KEY, atLedgerAs, [sale, atLedgerAs]);
    await settlement.decideHeld(card, KEY, atLedgerAs, [atLedgerAs]);
    assert.deepEqual(
      decided.map((d) => [d.shows, d.evidence]),
      [
        [
          'committed',
          `card ${CARD} read at till ${TILL}: it shows neither the balance before nor after the write, but movement ${sale.id} (till ${OTHER_TILL}) was planned from ${left}, the state only this write leaves`,
        ],
        [
          undefined,
          `card ${CARD} read at till ${TILL}: it shows neither the balance before nor after the write: the ledger's word stands`,
        ],
      ],
    );
  });
});

describe('CardSettlement.freeHeld', () => {
  test('when the key named is not held, then false, and the ledger is not asked', async () => {
    const { settlement, accountCalls, decided } = await setUp(async () => accountOf([atLedger()]));
    const { card } = await countedCard();
    assert.equal(await settlement.freeHeld(card, fingerprint('not-held')), false);
    assert.deepEqual(accountCalls, []);
    assert.deepEqual(decided, []);
  });

  test('when none of the card movements at the ledger holds the card, then false, and nothing is decided', async () => {
    const { settlement, accountCalls, decided } = await setUp(async () =>
      accountOf([
        atLedger({ state: 'pending', awaitsCard: false, resolvedAt: null }),
        atLedger({ state: 'posted', awaitsCard: false }),
      ]),
    );
    const { card } = await countedCard();
    assert.equal(await settlement.freeHeld(card, fingerprint(KEY)), false);
    assert.deepEqual(accountCalls, [`${KEY} ${CARD}`]);
    assert.deepEqual(decided, []);
  });

  test("when an operator's void holds the card, then it is decided from the card with the key, and true (a create may be tried again)", async () => {
    const { card, before } = await countedCard();
    const held = atLedger({ cardBefore: before });
    const free = atLedger({ state: 'posted', awaitsCard: false });
    const { settlement, decided } = await setUp(async () => accountOf([free, held]));
    assert.equal(await settlement.freeHeld(card, fingerprint(KEY)), true);
    assert.deepEqual(
      decided.map((d) => [d.apiKey, d.movement.id, d.shows]),
      [[KEY, held.id, 'not-written']],
    );
  });

  test('when the ledger does not answer, then false, with a warning naming the card and the error', async () => {
    const { settlement, lines } = await setUp(async () => {
      throw new Error('no answer');
    });
    const { card } = await countedCard();
    assert.equal(await settlement.freeHeld(card, fingerprint(KEY)), false);
    assert.deepEqual(lines, [
      `warn: card ${CARD}: could not decide what an operator decided without it: no answer`,
    ]);
  });
});

describe('CardSettlement.decideHeld', () => {
  test('when the card holds the write, then the evidence says it holds it, from the balance before to after', async () => {
    const { settlement, decided } = await setUp();
    const { rig, card, before } = await countedCard();
    const held = atLedger({ cardBefore: before });
    await rig.card.write(planWrite(before, 0, held.id));
    await settlement.decideHeld(card, KEY, held, [held]);
    assert.deepEqual(
      decided.map((d) => [d.shows, d.evidence]),
      [
        [
          'committed',
          `card ${CARD} read at till ${TILL}: it holds the write from ${before} to 0 credits`,
        ],
      ],
    );
  });

  test('when the card does not hold the write, then the evidence says so', async () => {
    const { settlement, decided } = await setUp();
    const { card, before } = await countedCard();
    const held = atLedger({ cardBefore: before, kind: 'recharge', credits: 5 });
    await settlement.decideHeld(card, KEY, held, [held]);
    assert.deepEqual(
      decided.map((d) => [d.shows, d.evidence]),
      [
        [
          'not-written',
          `card ${CARD} read at till ${TILL}: it does not hold the write from ${before} to 35 credits`,
        ],
      ],
    );
  });
});

describe('awaitsCard', () => {
  test("when an operator's post or void waits for the card, then it holds the card; pending, not waiting, or a compensation does not", () => {
    const cases = [
      [atLedger(), true],
      [atLedger({ state: 'posted' }), true],
      [atLedger({ state: 'pending', resolvedAt: null }), false],
      [atLedger({ awaitsCard: false }), false],
      [atLedger({ compensates: randomUUID() }), false],
    ] as const;
    assert.deepEqual(
      cases.map(([movement]) => awaitsCard(movement)),
      cases.map(([, holds]) => holds),
    );
  });
});

describe('CardSettlement.readWallet, a card its newest movement record does not explain', () => {
  /** A card on the reader holding `balance` whose newest record is `record`. */
  async function cardWithRecord(balance: number, record?: CardRecord) {
    const { card } = await countedCard(balance);
    const wallet = await card.readWallet();
    const read: WalletCard = {
      ...card,
      readWallet: async () => ({ ...wallet, ...(record ? { record } : {}) }),
    };
    return read;
  }
  const recordOf = (movementId: string, valueAfter: number): CardRecord => ({
    counter: 3,
    movementId,
    valueAfter,
  });

  test('when the card holds more than its newest record says, then it is suspect card-above-record, said in the log; at or below it, or without a record, it is not', async () => {
    const { settlement, lines } = await setUp();
    const above = await settlement.readWallet(await cardWithRecord(35, recordOf(randomUUID(), 30)));
    assert.equal(above.suspect, 'card-above-record');
    assert.match(
      lines.join('\n'),
      new RegExp(
        `error: card ${CARD} holding 35 is suspect: it holds more than its newest movement record says`,
      ),
    );
    for (const card of [
      await cardWithRecord(30, recordOf(randomUUID(), 30)),
      await cardWithRecord(12, recordOf(randomUUID(), 30)),
      await cardWithRecord(35),
    ]) {
      assert.equal((await settlement.readWallet(card)).suspect, undefined);
    }
  });

  test('when its newest record names a movement this till decided from the card did not land, then it is suspect record-of-voided-movement; one that landed, or one whose outcome was only learnt from the ledger with the card away, is not', async () => {
    const { settlement, journaled } = await setUp();
    const { before } = await countedCard();
    const notWritten = await journaled(CARD, planWrite(before, 40, randomUUID()), 'not-written');
    const landed = await journaled(CARD, planWrite(before, 40, randomUUID()), 'committed');
    const learnt = await journaled(CARD, planWrite(before, 40, randomUUID()), 'learnt-not-written');
    const suspicion = async (movementId: string) =>
      (await settlement.readWallet(await cardWithRecord(40, recordOf(movementId, 40)))).suspect;
    assert.equal(await suspicion(notWritten.id), 'record-of-voided-movement');
    assert.equal(await suspicion(landed.id), undefined);
    assert.equal(await suspicion(learnt.id), undefined);
    assert.equal(await suspicion(randomUUID()), undefined);
  });
});
