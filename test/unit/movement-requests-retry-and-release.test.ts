/**
 * MovementRequests on its own, over a journal in memory: a create refused because the ledger
 * holds the card for an operator's word (CardMovementPending) is tried once more only when the
 * card decided that word (freeHeld); and how a request's end hands its movement on (posted in
 * the background, to the outbox, or left for its card).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { WalletCard } from '../../service/card/card-face.ts';
import {
  LedgerRefusal,
  type LedgerMovement,
  type NewMovement,
} from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import { silentLogger } from '../../service/logger.ts';
import type { AnswerStore } from '../../service/wallet/answer-store.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import { MovementRequests, type ReserveInput } from '../../service/wallet/movement-requests.ts';
import type { MovementLedger, MovementResolver } from '../../service/wallet/movement-resolver.ts';
import {
  CARD,
  KEY,
  ManualClock,
  MemoryStore,
  TILL,
  cardOnReader,
  fingerprint,
  ledgerMovement,
} from '../support/money-rig.ts';

/** The ledger's pending movement for a create. */
function pendingOf(request: NewMovement): LedgerMovement {
  return ledgerMovement({
    id: request.id,
    kind: request.kind,
    cardId: request.cardId,
    credits: request.credits ?? 0,
    amount: '5.00',
    customerCredits: 1_000,
    tillId: request.tillId ?? null,
    cardBefore: request.cardBefore ?? null,
  });
}

/**
 * Requests over a journal in memory. `creates` answers each create in turn (an error is
 * thrown); `frees` is what freeHeld answers. The resolver and freeHeld record their calls.
 */
async function setUp(options: {
  creates?: (Error | 'pending')[];
  frees?: boolean;
  postBeforeAnswer?: boolean;
  /** The bonus credits the ledger's answer grants (none unless told). */
  bonusCredits?: number;
}) {
  const journal = new MovementJournal(new MemoryStore());
  await journal.open();
  const book = new MovementBook({
    journal,
    tillId: TILL,
    keys: new KeyRing(() => KEY, fingerprint),
    clock: new ManualClock(),
    log: silentLogger,
    newId: randomUUID,
  });
  const calls: string[] = [];
  const creates = [...(options.creates ?? ['pending'])];
  /** What each create asked the ledger for. */
  const created: NewMovement[] = [];
  const ledger = {
    createMovement: async (_apiKey: string, request: NewMovement) => {
      calls.push('create');
      created.push(request);
      const next = creates.shift() ?? 'pending';
      if (next !== 'pending') throw next;
      const pending = pendingOf(request);
      return options.bonusCredits === undefined
        ? pending
        : { ...pending, bonusCredits: options.bonusCredits };
    },
  } as unknown as MovementLedger;
  const resolver = {
    resolve: async (movement: Movement) => {
      calls.push(`resolve ${movement.id}`);
      return false;
    },
    kick: (delayMs?: number) => {
      calls.push(`kick ${delayMs}`);
    },
  } as unknown as MovementResolver;
  const answers = {
    record: async () => ({ cardId: CARD, credits: 40, rechargeAmount: 5 }),
  } as unknown as AnswerStore;
  const settlement = {
    freeHeld: async (card: WalletCard, keyFingerprint: string) => {
      calls.push(`freeHeld ${card.cardId} ${keyFingerprint}`);
      return options.frees ?? false;
    },
  };
  const requests = new MovementRequests(
    book,
    ledger,
    resolver,
    answers,
    settlement,
    options.postBeforeAnswer ?? false,
  );
  const card = cardOnReader(30);
  const input: ReserveInput = {
    kind: 'recharge',
    keyFingerprint: fingerprint(KEY),
    idempotency: undefined,
    wallet: await card.card.readWallet(),
    request: { credits: 10 },
    balanceAfter: (credits) => 30 + credits,
  };
  return { requests, journal, card, input, calls, created };
}

const held = () => new LedgerRefusal(409, 'CardMovementPending');

describe("reserve, on a card the ledger holds for an operator's word", () => {
  test('when the create is refused CardMovementPending and the card decides what held it, then the movement is tried once more and reserved', async () => {
    const { requests, card, input, calls } = await setUp({ creates: [held()], frees: true });
    const reservation = await requests.reserve(card.card, input);
    assert.equal(reservation.ledger?.state, 'pending');
    assert.equal(reservation.movement.reserved?.credits, 10);
    assert.deepEqual(
      calls.filter((call) => !call.startsWith('kick')),
      ['create', `freeHeld ${CARD} ${fingerprint(KEY)}`, 'create'],
    );
  });

  test('when the create is refused CardMovementPending and nothing held the card, then the refusal stands and the create is not tried again', async () => {
    const refusal = held();
    const { requests, card, input, calls } = await setUp({ creates: [refusal], frees: false });
    await assert.rejects(requests.reserve(card.card, input), (error) => error === refusal);
    assert.deepEqual(
      calls.filter((call) => !call.startsWith('kick')),
      ['create', `freeHeld ${CARD} ${fingerprint(KEY)}`],
    );
  });

  test('when the create fails otherwise (another refusal, no answer), then the card is not asked to decide anything and the create is not tried again', async () => {
    for (const failure of [new LedgerRefusal(422, 'NoCredits'), errors.ledgerUnavailable()]) {
      const { requests, card, input, calls } = await setUp({ creates: [failure], frees: true });
      await assert.rejects(requests.reserve(card.card, input), (error) => error === failure);
      assert.deepEqual(
        calls.filter((call) => !call.startsWith('kick')),
        ['create'],
        failure.message,
      );
    }
  });
});

describe('reserve, what the create carries and what of its answer is journaled', () => {
  const record = { counter: 3, movementId: '00000000-0000-4000-8000-000000000003', valueAfter: 30 };

  test("when a recharge or a payout is reserved on a card with a movement record, then the create carries the card's record", async () => {
    for (const kind of ['recharge', 'discharge'] as const) {
      const { requests, card, input, created } = await setUp({});
      await requests.reserve(card.card, { ...input, kind, wallet: { ...input.wallet, record } });
      assert.deepEqual(created[0]?.cardRecord, record, `${kind}: ${JSON.stringify(created)}`);
    }
  });

  test("when a card rule's movement (a refund, a correction) is reserved on a card with a record, then the create carries no record", async () => {
    for (const kind of ['refund', 'correction'] as const) {
      const { requests, card, input, created } = await setUp({});
      await requests.reserve(card.card, { ...input, kind, wallet: { ...input.wallet, record } });
      assert.equal(created.length, 1, kind);
      assert.equal(
        'cardRecord' in (created[0] ?? {}),
        false,
        `${kind}: ${JSON.stringify(created)}`,
      );
    }
  });

  test('when the ledger grants bonus credits with the reservation, then the journal keeps them with it', async () => {
    const { requests, card, input, journal } = await setUp({ bonusCredits: 2 });
    const reservation = await requests.reserve(card.card, input);
    assert.equal(journal.movements.get(reservation.movement.id)?.reserved?.bonusCredits, 2);
  });
});

describe("release, at the end of a request's commit", () => {
  test('when the card write landed, then the movement is posted in the background, not left to the outbox', async () => {
    const { requests, card, input, calls } = await setUp({});
    const reservation = await requests.reserve(card.card, input);
    await requests.commit(reservation, card.card);
    assert.deepEqual(calls, ['create', `resolve ${reservation.movement.id}`]);
  });

  test('when the card write is uncertain, then the movement is left for its card: neither resolved nor handed to the outbox', async () => {
    const { requests, card, input, calls } = await setUp({});
    const reservation = await requests.reserve(card.card, input);
    card.nextWrite = 'lost';
    await assert.rejects(requests.commit(reservation, card.card), {
      code: 'CardRemovedDuringWrite',
    });
    assert.deepEqual(calls, ['create']);
    assert.equal(reservation.movement.card, undefined);
  });

  test('when the post before the answer went unanswered, then the outbox is kicked at once to post it', async () => {
    const { requests, card, input, calls } = await setUp({ postBeforeAnswer: true });
    const reservation = await requests.reserve(card.card, input);
    await requests.commit(reservation, card.card);
    assert.equal(reservation.movement.card, 'committed');
    assert.deepEqual(calls, ['create', `resolve ${reservation.movement.id}`, 'kick 0']);
  });

  test('when the card was certainly not written, then the movement is voided now and the outbox kicked at once', async () => {
    const { requests, card, input, calls } = await setUp({});
    const reservation = await requests.reserve(card.card, input);
    card.nextWrite = 'fails';
    await assert.rejects(requests.commit(reservation, card.card), { code: 'NoCard' });
    assert.deepEqual(calls, ['create', `resolve ${reservation.movement.id}`, 'kick 0']);
  });
});
