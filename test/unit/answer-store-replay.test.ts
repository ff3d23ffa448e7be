/**
 * AnswerStore.replay on its own: the first attempt of an Idempotency-Key as the journal holds
 * it, the ledger's word on it scripted. Which card a replay belongs to, how long an answer is
 * kept, and when the ledger is asked before a stored answer is given again. The same replays
 * run over the engine in wallet-use-cases.test.ts and over HTTP in the http area; these pin the
 * branches that only those reached (Stryker's unit-only run of answer-store.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AnswerStore, answerFor } from '../../service/wallet/answer-store.ts';
import { ANSWER_RETENTION_MS, type Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import type { MovementResolver } from '../../service/wallet/movement-resolver.ts';
import type { WriteIntent } from '../../service/card/card-face.ts';

const CARD = '04A1B2C3';
const OTHER_CARD = '04D4E5F6';
const SCOPE = 'k1:key-1';
const STARTED = '2026-11-27T10:00:00.000Z';
const NOW = Date.parse(STARTED) + 60_000;
const INTENT = { value: 15 } as unknown as WriteIntent;

/** A recharge of 10 credits onto CARD (5 before), under SCOPE, as the journal folds it. */
function recharge(fields: Partial<Movement> = {}): Movement {
  return {
    id: 'm1',
    kind: 'recharge',
    cardId: CARD,
    keyFingerprint: 'k1',
    startedAt: STARTED,
    idempotency: { scope: SCOPE, requestHash: 'h1' },
    reserved: { credits: 10, amount: '5.00', intent: INTENT },
    ...fields,
  };
}

/** What a replay gave: a body, or an error's code; and what the resolver was asked. */
type Replayed = { body?: unknown; error?: string; asked: string[] };

/** The store over `earlier` as the key's first attempt; what the resolver was asked. */
function storeWith(
  earlier: Movement,
  options: { now?: number; landed?: boolean | undefined; compensation?: Movement } = {},
) {
  const asked: string[] = [];
  const book = {
    latestFor: (scope: string) => (scope === SCOPE ? earlier : undefined),
    clock: { now: () => options.now ?? NOW },
    compensationOf: () => options.compensation,
  } as unknown as MovementBook;
  const resolver = {
    resolve: async (movement: Movement) => {
      asked.push(`resolve ${movement.id}`);
      return true;
    },
    compensatedSince: async (movement: Movement) => {
      asked.push(`compensatedSince ${movement.id}`);
      return options.landed;
    },
  } as unknown as MovementResolver;
  const store = new AnswerStore(book, resolver);
  const replay = (cardId: string) =>
    store.replay({ scope: SCOPE, requestHash: 'h1' }, cardId).then(
      (body): Replayed => ({ body, asked }),
      (error: { code?: string }): Replayed => ({ error: error.code, asked }),
    );
  return { replay };
}

describe('answerFor', () => {
  test('when the journal holds the answer given, then that answer is replayed as it was, whatever the card line says', () => {
    const answer = { status: 200, body: { kept: 'as given' }, at: STARTED };
    assert.deepEqual(answerFor(recharge({ answer })), answer);
    assert.deepEqual(answerFor(recharge({ answer, card: 'committed' })), answer);
  });
});

describe('replay, which card it belongs to', () => {
  test('when the first attempt landed on another card, then it is IdempotencyKeyOtherCard, not MovementUnsettled', async () => {
    const earlier = recharge({ card: 'committed', resolved: 'posted' });
    const got = await storeWith(earlier).replay(OTHER_CARD);
    assert.deepEqual(got, { error: 'IdempotencyKeyOtherCard', asked: [] }, JSON.stringify(got));
  });

  test('when the first attempt is undecided on another card, then it is MovementUnsettled', async () => {
    const got = await storeWith(recharge()).replay(OTHER_CARD);
    assert.deepEqual(got, { error: 'MovementUnsettled', asked: [] }, JSON.stringify(got));
  });

  test('when the first attempt is undecided on this card (settling the card comes first), then nothing is replayed and the request runs', async () => {
    const got = await storeWith(recharge({ learnt: true, card: 'not-written' })).replay(CARD);
    assert.deepEqual(got, { body: undefined, asked: [] }, JSON.stringify(got));
  });

  test("when the ledger's word voided the first attempt and another card is on the reader, then it is MovementUnsettled and the ledger is not asked", async () => {
    const earlier = recharge({ card: 'not-written', byLedger: true, cardAt: STARTED });
    const got = await storeWith(earlier, { landed: true }).replay(OTHER_CARD);
    assert.deepEqual(got, { error: 'MovementUnsettled', asked: [] }, JSON.stringify(got));
  });
});

describe("replay of a first attempt the ledger's word voided (byLedger)", () => {
  test("when the ledger's word posted it instead, then its answer is given without asking whether a void was compensated", async () => {
    const posted = recharge({
      card: 'committed',
      byLedger: true,
      cardAt: STARTED,
      resolved: 'posted',
    });
    const got = await storeWith(posted, { landed: false }).replay(CARD);
    assert.deepEqual(got.asked, [], JSON.stringify(got));
    assert.equal((got.body as { credits: number }).credits, 15, JSON.stringify(got));
  });

  const voided = recharge({ card: 'not-written', byLedger: true, cardAt: STARTED });

  test('when the ledger cannot say whether its void was compensated, then it is LedgerUnavailable', async () => {
    const got = await storeWith(voided, { landed: undefined }).replay(CARD);
    assert.deepEqual(
      got,
      { error: 'LedgerUnavailable', asked: ['compensatedSince m1'] },
      JSON.stringify(got),
    );
  });

  test('when its void was compensated, then the write landed and its answer is given', async () => {
    const got = await storeWith(voided, { landed: true }).replay(CARD);
    assert.equal(got.error, undefined, JSON.stringify(got));
    assert.deepEqual(got.asked, ['compensatedSince m1']);
    assert.equal((got.body as { credits: number }).credits, 15, JSON.stringify(got));
  });

  test('when the void is exactly as old as an answer is kept, then nothing is replayed and the ledger is not asked', async () => {
    const now = Date.parse(STARTED) + ANSWER_RETENTION_MS;
    const got = await storeWith(voided, { now, landed: true }).replay(CARD);
    assert.deepEqual(got, { body: undefined, asked: [] }, JSON.stringify(got));
  });

  test('when the void is older than an answer is kept, then nothing is replayed and the ledger is not asked', async () => {
    const now = Date.parse(STARTED) + ANSWER_RETENTION_MS + 1;
    const got = await storeWith(voided, { now, landed: true }).replay(CARD);
    assert.deepEqual(got, { body: undefined, asked: [] }, JSON.stringify(got));
  });
});

describe('replay of a first attempt that landed', () => {
  test('when the ledger posted it, then its stored answer is given without asking anything', async () => {
    const answer = { status: 200, body: { stored: true }, at: STARTED };
    const earlier = recharge({ card: 'committed', resolved: 'posted', answer });
    const got = await storeWith(earlier, { landed: false }).replay(CARD);
    assert.deepEqual(got, { body: { stored: true }, asked: [] }, JSON.stringify(got));
  });

  test('when the ledger has not posted it yet, then it is asked, and still unposted is LedgerUnavailable', async () => {
    const answer = { status: 200, body: { stored: true }, at: STARTED };
    const earlier = recharge({ card: 'committed', answer });
    const got = await storeWith(earlier).replay(CARD);
    assert.deepEqual(
      got,
      { error: 'LedgerUnavailable', asked: ['resolve m1'] },
      JSON.stringify(got),
    );
  });
});
