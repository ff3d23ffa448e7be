/**
 * The money engine's background half on its own: a MovementResolver over a journal in memory, a
 * scripted ledger (each call answered as the test says, every call recorded), a manual clock for
 * the outbox, and a logger that keeps what the operator is told. What resolve(), learn(), seen()
 * and cardDecides() do with each answer the ledger can give, and when the outbox goes round again.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { CardAccount, ResolveRequest } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerMovement } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import type { WriteIntent } from '../../service/card/card-face.ts';
import { planWrite } from '../../service/card/wallet-card.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import { phaseOf } from '../../service/wallet/movement-phases.ts';
import { MovementResolver, type MovementLedger } from '../../service/wallet/movement-resolver.ts';
import {
  CARD,
  KEY,
  MemoryStore,
  ManualClock,
  OTHER_KEY,
  OTHER_TILL,
  TILL,
  fingerprint,
  recordingLogger,
  ledgerMovement,
} from '../support/money-rig.ts';

type Answer = (id: string) => Promise<LedgerMovement>;

/** A movement as the ledger answers it: a recharge of 5 credits of CARD by TILL, pending. */
function atLedger(fields: Partial<LedgerMovement> & { id: string }): LedgerMovement {
  return ledgerMovement({ createdAt: '2024-01-01T00:00:00.000Z', ...fields });
}

/** A card's account as the ledger answers it: `movements` newest first, no flags. */
function cardAccount(cardId: string, movements: LedgerMovement[] = [], credits = 0): CardAccount {
  return { cardId, credits, importedCredits: null, suspect: false, flags: [], movements };
}

interface LedgerCall {
  what: string;
  apiKey: string;
  by?: ResolveRequest;
  /** What a create asked for. */
  created?: Partial<LedgerMovement>;
}

/**
 * A ledger answering as told (default: every create, post and void taken, a card account
 * without movements), recording each call.
 */
function scriptedLedger() {
  const calls: LedgerCall[] = [];
  const answers: {
    create: Answer;
    post: Answer;
    void: Answer;
    get: Answer;
    account: (cardId: string) => Promise<CardAccount>;
  } = {
    create: async (id) => atLedger({ id }),
    post: async (id) => atLedger({ id, state: 'posted' }),
    void: async (id) => atLedger({ id, state: 'voided' }),
    get: () => Promise.reject(new Error('getMovement not scripted')),
    account: async (cardId) => cardAccount(cardId),
  };
  const ledger: MovementLedger = {
    createMovement: (apiKey, movement) => {
      calls.push({ what: `create ${movement.id}`, apiKey, created: movement });
      return answers.create(movement.id);
    },
    postMovement: (apiKey, id, by) => {
      calls.push({ what: `post ${id}`, apiKey, by });
      return answers.post(id);
    },
    voidMovement: (apiKey, id, by) => {
      calls.push({ what: `void ${id}`, apiKey, by });
      return answers.void(id);
    },
    getMovement: (apiKey, id) => {
      calls.push({ what: `get ${id}`, apiKey });
      return answers.get(id);
    },
    listPendingMovements: () => Promise.reject(new Error('listPendingMovements not expected')),
    getCardAccount: (apiKey, cardId) => {
      calls.push({ what: `account ${cardId}`, apiKey });
      return answers.account(cardId);
    },
  };
  return { ledger, calls, answers, asked: () => calls.map((call) => call.what) };
}

const open: MovementResolver[] = [];

afterEach(async () => {
  for (const resolver of open.splice(0)) await resolver.close();
});

/** A resolver of till TILL whose current key is `currentKey`, over an empty journal. */
async function resolverRig(currentKey: () => string = () => KEY) {
  const journal = new MovementJournal(new MemoryStore());
  const keys = new KeyRing(currentKey, fingerprint);
  const clock = new ManualClock();
  const log = recordingLogger();
  let made = 0;
  const book = new MovementBook({
    journal,
    tillId: TILL,
    keys,
    clock,
    log,
    newId: () => `comp-${(made += 1)}`,
  });
  const scripted = scriptedLedger();
  /** How many times the resolver asked for the float's recharges to be reported. */
  const floatReports = { asked: 0 };
  const resolver = new MovementResolver(book, {
    ledger: scripted.ledger,
    retryMs: 10,
    maxRetryMs: 40,
    reportFloat: () => {
      floatReports.asked += 1;
    },
  });
  open.push(resolver);
  await journal.open(0);
  const started = (id: string, key = KEY) =>
    book.append({
      type: 'started',
      id,
      kind: 'recharge',
      cardId: CARD,
      keyFingerprint: fingerprint(key),
    });
  const reserved = (id: string, intent?: WriteIntent) =>
    book.append({
      type: 'reserved',
      id,
      credits: 5,
      amount: '2.50',
      ...(intent === undefined ? {} : { intent }),
    });
  const card = (id: string, outcome: 'committed' | 'not-written', learnt = false) =>
    book.append({ type: 'card', id, outcome, ...(learnt ? { learnt: true } : {}) });
  /** Journals a recharge of 5 credits of CARD up to `phase` (planned as `intent`, if given). */
  const movement = async (
    id: string,
    phase: 'to-post' | 'to-void' | 'uncertain' | 'done',
    key = KEY,
    intent?: WriteIntent,
  ): Promise<Movement> => {
    await started(id, key);
    await reserved(id, intent);
    if (phase === 'to-post' || phase === 'done') await card(id, 'committed');
    if (phase === 'to-void') await card(id, 'not-written');
    if (phase === 'done') await book.append({ type: 'resolved', id, state: 'posted' });
    return book.movement(id);
  };
  /** Journals a movement whose outcome was learnt from the ledger (its card not seen since). */
  const learnt = async (id: string, outcome: 'committed' | 'not-written'): Promise<Movement> => {
    await started(id);
    await reserved(id);
    await card(id, outcome, true);
    await book.append({
      type: 'resolved',
      id,
      state: outcome === 'committed' ? 'posted' : 'voided',
    });
    return book.movement(id);
  };
  /** Journals a compensating recharge of 5 credits of `of`, not yet created at the ledger. */
  const compensation = async (id: string, of: string, key = KEY): Promise<Movement> => {
    await book.append({
      type: 'started',
      id,
      kind: 'recharge',
      cardId: CARD,
      keyFingerprint: fingerprint(key),
      compensates: of,
      credits: 5,
    });
    return book.movement(id);
  };
  /**
   * Journals a float recharge of 5 credits of `cardId` up to `phase` (no ledger call made it: it
   * is reported), or a recharge of `cardId` by a request, with `float` false.
   */
  const ofCard = async (
    id: string,
    cardId: string,
    phase: 'to-post' | 'uncertain' | 'done',
    { float = true }: { float?: boolean } = {},
  ): Promise<Movement> => {
    await book.append({
      type: 'started',
      id,
      kind: 'recharge',
      cardId,
      keyFingerprint: fingerprint(KEY),
      ...(float
        ? {
            float: {
              floatId: 'float-1',
              seq: 1,
              credits: 5,
              creditCost: '0.50',
              cardBefore: 'classic:v1:30:1:0',
            },
          }
        : {}),
    });
    await reserved(id);
    if (phase !== 'uncertain') await card(id, 'committed');
    if (phase === 'done') await book.append({ type: 'resolved', id, state: 'posted' });
    return book.movement(id);
  };
  return {
    journal,
    keys,
    clock,
    log,
    book,
    resolver,
    ...scripted,
    floatReports,
    movement,
    learnt,
    compensation,
    ofCard,
  };
}

const seenLines = (log: { lines: string[] }) => JSON.stringify(log.lines, null, 2);

describe('MovementResolver.resolve()', () => {
  test('when a movement is done, then resolve answers true without asking the ledger', async () => {
    const rig = await resolverRig();
    const done = await rig.movement('m1', 'done');
    const answer = await rig.resolver.resolve(done);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
  });

  test('when a movement’s card write is uncertain, then resolve answers false without asking the ledger', async () => {
    const rig = await resolverRig();
    const uncertain = await rig.movement('m1', 'uncertain');
    const answer = await rig.resolver.resolve(uncertain);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
  });

  test('when the ledger posts a movement its card holds, then resolve answers true, journals it posted and announces it resolved', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post');
    const counts: number[] = [];
    const resolved: string[] = [];
    rig.resolver.on('unconfirmed', (count) => counts.push(count));
    rig.resolver.on('resolved', (id) => resolved.push(id));
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), ['post m1']);
    // The post says when the card write was proven (the card line's time).
    assert.ok(movement.cardAt);
    assert.deepEqual(rig.calls[0]?.by, { tillId: TILL, occurredAt: movement.cardAt });
    assert.equal(movement.resolved, 'posted');
    assert.deepEqual(counts, [0]);
    assert.deepEqual(resolved, ['m1']);
  });

  test('when the ledger voids a movement its card does not hold, then resolve answers true and journals it voided', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-void');
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), ['void m1']);
    assert.equal(movement.resolved, 'voided');
  });

  test('when the key that made a movement is no longer held, then resolve answers false, asks nothing, and tells the operator which key to set again', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post', OTHER_KEY);
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
    assert.deepEqual(rig.log.lines, [
      `error: movement m1: the key that made it (fingerprint ${fingerprint(OTHER_KEY)}) is no longer held; set it again to post it`,
    ]);
  });

  test('when the ledger does not answer a post, then resolve answers false, warns that it retries in the background, counts it unconfirmed and schedules the outbox', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post');
    rig.answers.post = () => Promise.reject(errors.ledgerUnavailable());
    const counts: number[] = [];
    rig.resolver.on('unconfirmed', (count) => counts.push(count));
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.equal(movement.resolved, undefined);
    assert.deepEqual(rig.log.lines, [
      'warn: movement m1: ledger did not confirm; retrying in the background',
    ]);
    assert.deepEqual(counts, [1]);
    assert.deepEqual(rig.clock.delays, [10], `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });

  test('when the ledger refuses a post with a code that settles nothing, then the error names the code and it is retried in the background', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post');
    rig.answers.post = () => Promise.reject(new LedgerRefusal(409, 'MovementOfAnotherTill'));
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.equal(movement.resolved, undefined);
    assert.deepEqual(rig.log.lines, [
      'error: movement m1: the ledger refused to post it (MovementOfAnotherTill); retrying in the background',
    ]);
    assert.deepEqual(rig.clock.delays, [10], `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });

  test('when a running request owns a movement the ledger did not confirm, then the outbox is not scheduled for it', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post');
    rig.book.owned.set('m1', fingerprint(KEY));
    rig.answers.post = () => Promise.reject(errors.ledgerUnavailable());
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.deepEqual(rig.clock.delays, [], `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });

  test('when a post is refused as already voided while the card holds the movement, then it is journaled voided and a compensation of the same kind is started, the operator told', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-post');
    rig.answers.post = () => Promise.reject(new LedgerRefusal(409, 'MovementAlreadyVoided'));
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.equal(movement.resolved, 'voided');
    const made = rig.book.compensationOf('m1');
    assert.deepEqual(made && { id: made.id, kind: made.kind, credits: made.credits }, {
      id: 'comp-1',
      kind: 'recharge',
      credits: 5,
    });
    assert.deepEqual(rig.log.lines, [
      'error: movement m1: the card holds it but the ledger has it voided; compensating recharge 5 (comp-1)',
    ]);
  });

  test('when a void is refused as already posted while the card does not hold the movement, then a compensation of the other kind is started, the operator told', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-void');
    rig.answers.void = () => Promise.reject(new LedgerRefusal(409, 'MovementAlreadyPosted'));
    const answer = await rig.resolver.resolve(movement);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.equal(movement.resolved, 'posted');
    assert.equal(rig.book.compensationOf('m1')?.kind, 'discharge');
    assert.deepEqual(rig.log.lines, [
      'error: movement m1: the card does not hold it but the ledger has it posted; compensating discharge 5 (comp-1)',
    ]);
  });

  test('when the last movement made with a replaced key is resolved, then that key is released', async () => {
    let current = KEY;
    const rig = await resolverRig(() => current);
    const movement = await rig.movement('m1', 'to-post');
    current = OTHER_KEY;
    rig.keys.retire(KEY, (print) => rig.book.keyInUse(print));
    const released: string[] = [];
    rig.keys.on('released', (key) => released.push(key));
    assert.equal(
      rig.keys.keyFor(fingerprint(KEY)),
      KEY,
      'the old key is kept while m1 is unresolved',
    );
    await rig.resolver.resolve(movement);
    assert.deepEqual(
      rig.calls.map((call) => [call.what, call.apiKey]),
      [['post m1', KEY]],
    );
    assert.deepEqual(released, [KEY]);
    assert.equal(rig.keys.keyFor(fingerprint(KEY)), undefined);
  });
});

describe('MovementResolver.resolve() of a compensating movement', () => {
  test('when the ledger creates it, then it is journaled reserved and committed, posted, and resolve answers true', async () => {
    const rig = await resolverRig();
    const made = await rig.compensation('c1', 'm0');
    const answer = await rig.resolver.resolve(made);
    assert.equal(answer, true, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), ['create c1', 'post c1']);
    assert.equal(made.card, 'committed');
    assert.equal(made.resolved, 'posted');
  });

  for (const [what, error] of [
    ['the ledger is unavailable (500)', errors.ledgerUnavailable()],
    ['the ledger answers 503', new AppError('DatabaseUnavailable', 503)],
    ['the network fails', new Error('socket hang up')],
  ] as const) {
    test(`when its create gets no answer (${what}), then it is left to retry: nothing journaled, resolve answers false`, async () => {
      const rig = await resolverRig();
      const made = await rig.compensation('c1', 'm0');
      rig.answers.create = () => Promise.reject(error);
      const answer = await rig.resolver.resolve(made);
      assert.equal(answer, false, `resolve answered ${answer}`);
      assert.deepEqual(rig.asked(), ['create c1']);
      assert.equal(made.conflict, undefined, `conflict journaled: ${made.conflict}`);
      assert.equal(made.card, undefined, `card journaled: ${made.card}`);
      assert.deepEqual(rig.log.lines, []);
    });
  }

  for (const [what, error, code] of [
    ['the ledger refuses it', new LedgerRefusal(422, 'NoCredits'), 'NoCredits'],
    [
      'the ledger client refuses it (4xx)',
      new AppError('InvalidCompensation', 422),
      'InvalidCompensation',
    ],
  ] as const) {
    test(`when ${what}, then a conflict is journaled, the operator told the card is flagged, and the id voided`, async () => {
      const rig = await resolverRig();
      const made = await rig.compensation('c1', 'm0');
      rig.answers.create = () => Promise.reject(error);
      const answer = await rig.resolver.resolve(made);
      assert.equal(answer, true, `resolve answered ${answer}`);
      assert.equal(made.conflict, code);
      assert.equal(made.card, 'not-written');
      assert.deepEqual(rig.asked(), ['create c1', 'void c1']);
      assert.deepEqual(rig.log.lines, [
        `error: compensating movement c1 for m0: refused (${code}); the card is flagged for the operator`,
      ]);
    });
  }

  for (const [detail, shown] of [
    ['by comp-9', 'by comp-9'],
    [undefined, 'compensated already'],
  ] as const) {
    test(`when another till compensated the movement already (detail ${detail}), then it is not needed: no conflict, the id voided, the reason logged`, async () => {
      const rig = await resolverRig();
      const made = await rig.compensation('c1', 'm0');
      rig.answers.create = () =>
        Promise.reject(new LedgerRefusal(409, 'MovementCompensated', detail));
      const answer = await rig.resolver.resolve(made);
      assert.equal(answer, true, `resolve answered ${answer}`);
      assert.equal(made.conflict, undefined, `conflict journaled: ${made.conflict}`);
      assert.equal(made.card, 'not-written');
      assert.deepEqual(rig.asked(), ['create c1', 'void c1']);
      assert.deepEqual(rig.log.lines, [
        `info: compensating movement c1 for m0: not needed (${shown})`,
      ]);
    });
  }

  test('when the key that made it is no longer held, then resolve answers false and asks nothing', async () => {
    const rig = await resolverRig();
    const made = await rig.compensation('c1', 'm0', OTHER_KEY);
    const answer = await rig.resolver.resolve(made);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
  });
});

describe('MovementResolver.learn()', () => {
  test('when the key that made the movement is no longer held, then learn answers false without asking the ledger', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain', OTHER_KEY);
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
  });

  for (const phase of ['to-post', 'to-void', 'done'] as const) {
    test(`when the movement is not uncertain (${phase}), then learn answers false without asking the ledger`, async () => {
      const rig = await resolverRig();
      const movement = await rig.movement('m1', phase);
      rig.answers.get = async (id) => atLedger({ id, state: 'posted', resolvedByTill: OTHER_TILL });
      const answer = await rig.resolver.learn(movement, { cardSeen: false });
      assert.equal(answer, false, `learn answered ${answer}`);
      assert.deepEqual(rig.asked(), []);
    });
  }

  test('when the ledger cannot be reached, then learn answers false and journals nothing', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = () => Promise.reject(errors.ledgerUnavailable());
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), ['get m1']);
    assert.equal(movement.card, undefined);
  });

  test('when the ledger still holds it pending, then learn answers false and journals nothing', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'pending' });
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.equal(movement.card, undefined);
    assert.equal(movement.resolved, undefined);
  });

  test('when its card decides it while the ledger is asked, then learn leaves it to the card', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => {
      await rig.book.append({ type: 'card', id, outcome: 'committed' });
      return atLedger({ id, state: 'voided', resolvedByTill: OTHER_TILL });
    };
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.equal(movement.resolved, undefined, `journaled resolved: ${movement.resolved}`);
    assert.equal(movement.learnt, undefined);
    assert.deepEqual(rig.log.lines, []);
  });

  test('when another till posted it with evidence, then learn journals it committed as learnt and resolved, warning who decided it and on what', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    const resolved: string[] = [];
    rig.resolver.on('resolved', (id) => resolved.push(id));
    rig.answers.get = async (id) =>
      atLedger({ id, state: 'posted', resolvedByTill: OTHER_TILL, evidence: 'card read: 30' });
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.equal(movement.card, 'committed');
    assert.equal(movement.learnt, true);
    assert.equal(movement.resolved, 'posted');
    assert.deepEqual(resolved, ['m1']);
    assert.deepEqual(rig.log.lines, [
      `warn: movement m1: posted at the ledger by till ${OTHER_TILL} (card read: 30); taken as decided`,
    ]);
  });

  test('when an operator voided it without evidence, then the warning says an operator and no evidence given, and it is journaled not written', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'voided' });
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.equal(movement.card, 'not-written');
    assert.equal(movement.resolved, 'voided');
    assert.deepEqual(rig.log.lines, [
      'warn: movement m1: voided at the ledger by an operator (no evidence given); taken as decided',
    ]);
  });

  test('when the card was not seen and the ledger holds the card for the operator’s word, then learn tells the ledger nothing and journals it learnt', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'posted', awaitsCard: true });
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`]);
    assert.equal(movement.learnt, true);
  });

  test('when the card was seen and the ledger holds the card for the operator’s word, then the ledger is told the card cannot say otherwise, and it is journaled seen', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'posted', awaitsCard: true });
    const answer = await rig.resolver.learn(movement, { cardSeen: true });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`, 'post m1']);
    assert.deepEqual(rig.calls[2]?.by, {
      tillId: TILL,
      evidence: `card ${CARD} read at till ${TILL}: it shows neither the balance before nor after it: the ledger's word stands`,
    });
    assert.equal(movement.learnt, undefined);
    assert.equal(movement.resolved, 'posted');
  });

  test('when the card was seen and another till decided it (the ledger holds no card), then learn tells the ledger nothing and journals it seen', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'voided', resolvedByTill: OTHER_TILL });
    const answer = await rig.resolver.learn(movement, { cardSeen: true });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`]);
    assert.equal(movement.card, 'not-written');
    assert.equal(movement.learnt, undefined);
    assert.equal(movement.resolved, 'voided');
  });

  test('when the card was seen and the ledger does not answer the card’s word, then learn answers false and journals nothing', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'posted', awaitsCard: true });
    rig.answers.post = () => Promise.reject(errors.ledgerUnavailable());
    const answer = await rig.resolver.learn(movement, { cardSeen: true });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`, 'post m1']);
    assert.equal(movement.card, undefined, `card journaled: ${movement.card}`);
    assert.equal(movement.resolved, undefined, `journaled resolved: ${movement.resolved}`);
  });
});

describe('MovementResolver.learn(), a compensation another till made', () => {
  test('when the ledger voided it and another till posted its compensation, then learn journals the write landed, and the compensation done, so that none is made again', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'voided' });
    rig.answers.account = async (cardId) =>
      cardAccount(
        cardId,
        [
          atLedger({ id: 'other', state: 'posted', tillId: OTHER_TILL, compensates: 'm2' }),
          atLedger({ id: 'fix', state: 'posted', tillId: OTHER_TILL, compensates: 'm1' }),
        ],
        5,
      );
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, true, `learn answered ${answer}`);
    assert.equal(movement.card, 'committed');
    assert.equal(movement.resolved, 'voided');
    const fix = rig.book.compensationOf('m1');
    assert.equal(fix?.id, 'fix');
    assert.equal(fix?.resolved, 'posted');
    assert.deepEqual(rig.log.lines, [
      'warn: movement m1: voided at the ledger by an operator (no evidence given), compensated by fix; taken as decided',
    ]);
    await rig.resolver.seen(movement, undefined);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`], 'a compensation made again');
  });

  test("when another till compensated an operator's void of this till's refund, then learn journals the refund landed and that refund compensation done, so that none is made again", async () => {
    const rig = await resolverRig();
    await rig.book.append({
      type: 'started',
      id: 'm1',
      kind: 'refund',
      cardId: CARD,
      keyFingerprint: fingerprint(KEY),
    });
    await rig.book.append({ type: 'reserved', id: 'm1', credits: 5, amount: '2.50' });
    const movement = rig.book.movement('m1');
    rig.answers.get = async (id) => atLedger({ id, kind: 'refund', state: 'voided' });
    rig.answers.account = async (cardId) =>
      cardAccount(cardId, [
        atLedger({
          id: 'fix',
          kind: 'refund',
          state: 'posted',
          tillId: OTHER_TILL,
          compensates: 'm1',
        }),
      ]);
    assert.equal(await rig.resolver.learn(movement, { cardSeen: false }), true);
    assert.equal(movement.card, 'committed');
    const fix = rig.book.compensationOf('m1');
    assert.deepEqual([fix?.id, fix?.kind, fix?.resolved], ['fix', 'refund', 'posted']);
    await rig.resolver.seen(movement, undefined);
    assert.deepEqual(rig.asked(), ['get m1', `account ${CARD}`], 'a compensation made again');
  });

  test('when the card account cannot be read, then learn answers false and journals nothing', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'uncertain');
    rig.answers.get = async (id) => atLedger({ id, state: 'voided' });
    rig.answers.account = () => Promise.reject(errors.ledgerUnavailable());
    const answer = await rig.resolver.learn(movement, { cardSeen: false });
    assert.equal(answer, false, `learn answered ${answer}`);
    assert.equal(movement.card, undefined);
  });
});

describe('MovementResolver.cardMayDecide()', () => {
  /**
   * This till's uncertain write m1 of the card, from `cardBefore` to 134 credits, voided at the
   * ledger awaiting its card, and another till's write of the card posted after it.
   */
  async function followedByAnotherTill(cardBefore: string, options?: { float?: boolean }) {
    const rig = await resolverRig();
    const intent = planWrite(cardBefore, 134, 'm1', options);
    const movement = await rig.movement('m1', 'uncertain', KEY, intent);
    rig.answers.account = async (cardId) =>
      cardAccount(cardId, [
        atLedger({ id: 'other-till', tillId: OTHER_TILL, state: 'posted' }),
        atLedger({ id: 'm1', state: 'voided', awaitsCard: true }),
      ]);
    return { rig, movement };
  }

  test("when another till's write of the card followed at the ledger, then a Classic write's card may not decide it (that till may have put the very same block there)", async () => {
    const { rig, movement } = await followedByAnotherTill('classic:v1:114:3:0');
    assert.equal(await rig.resolver.cardMayDecide(movement), false);
    assert.deepEqual(rig.asked(), [`account ${CARD}`]);
  });

  test("when another till's write of the card followed at the ledger, then a DESFire write's card still decides it: the record of its counter names it", async () => {
    // Seed 769750810: this till's float recharge landed as the card left, an operator voided
    // it (the card reported lost), another till sold the card from its float, and the card,
    // back here, was taken to show nothing: the voided recharge stayed on it, never set right.
    const { rig, movement } = await followedByAnotherTill('desfire:v1:114:3296', { float: true });
    assert.equal(await rig.resolver.cardMayDecide(movement), true);
    // Also once this till wrote the card after it.
    await rig.movement('m2', 'to-post', KEY, planWrite('desfire:v1:134:3297', 140, 'm2'));
    assert.equal(await rig.resolver.cardMayDecide(movement), true);
  });
});

describe('MovementResolver.seen()', () => {
  test('when the card holds a movement the ledger voided, then the operator is told they disagree and a compensation of the same kind is created and posted', async () => {
    const rig = await resolverRig();
    const movement = await rig.learnt('m1', 'not-written');
    await rig.resolver.seen(movement, 'committed');
    assert.equal(movement.card, 'committed');
    assert.equal(movement.learnt, undefined);
    assert.deepEqual(rig.asked(), ['create comp-1', 'post comp-1']);
    assert.equal(rig.book.compensationOf('m1')?.kind, 'recharge');
    assert.equal(
      rig.log.lines[0],
      "error: movement m1: its card holds it, though the ledger's final word is voided",
      seenLines(rig.log),
    );
  });

  test('when the card does not hold a movement the ledger posted, then the operator is told they disagree and a compensation of the other kind is created and posted', async () => {
    const rig = await resolverRig();
    const movement = await rig.learnt('m1', 'committed');
    await rig.resolver.seen(movement, 'not-written');
    assert.equal(movement.card, 'not-written');
    assert.deepEqual(rig.asked(), ['create comp-1', 'post comp-1']);
    assert.equal(rig.book.compensationOf('m1')?.kind, 'discharge');
    assert.equal(
      rig.log.lines[0],
      "error: movement m1: its card does not hold it, though the ledger's final word is posted",
      seenLines(rig.log),
    );
  });

  for (const kind of ['refund', 'correction', 'replacement', 'block-clear'] as const) {
    test(`when the card disagrees with the ledger's word on this till's ${kind}, then a compensating ${kind} is created and posted`, async () => {
      for (const [learnt, shows] of [
        ['not-written', 'committed'],
        ['committed', 'not-written'],
      ] as const) {
        const rig = await resolverRig();
        await rig.book.append({
          type: 'started',
          id: 'm1',
          kind,
          cardId: CARD,
          keyFingerprint: fingerprint(KEY),
        });
        await rig.book.append({ type: 'reserved', id: 'm1', credits: 5, amount: '2.50' });
        await rig.book.append({ type: 'card', id: 'm1', outcome: learnt, learnt: true });
        await rig.book.append({
          type: 'resolved',
          id: 'm1',
          state: learnt === 'committed' ? 'posted' : 'voided',
        });
        const movement = rig.book.movement('m1');
        await rig.resolver.seen(movement, shows);
        assert.deepEqual(rig.asked(), ['create comp-1', 'post comp-1'], learnt);
        const made = rig.book.compensationOf('m1');
        assert.deepEqual([made?.kind, made?.credits], [kind, 5], learnt);
        assert.equal(rig.calls[0]?.created?.compensates, 'm1');
      }
    });
  }

  for (const [outcome, state, action, what] of [
    ['not-written', 'voided', 'void', 'does not hold it'],
    ['committed', 'posted', 'post', 'holds it'],
  ] as const) {
    test(`when the card agrees with the ledger (${outcome}, ${state}), then the ledger is told so on the card’s evidence and the card is journaled seen, no compensation`, async () => {
      const rig = await resolverRig();
      const movement = await rig.learnt('m1', outcome);
      await rig.resolver.seen(movement, outcome);
      assert.deepEqual(rig.asked(), [`${action} m1`]);
      assert.deepEqual(rig.calls[0]?.by, {
        tillId: TILL,
        evidence: `card ${CARD} read at till ${TILL}: it ${what}`,
      });
      assert.equal(movement.learnt, undefined);
      assert.equal(rig.book.compensationOf('m1'), undefined);
      assert.deepEqual(rig.log.lines, []);
    });
  }

  test('when the ledger refuses the card’s word, then the refusal is logged and the card is journaled seen all the same', async () => {
    const rig = await resolverRig();
    const movement = await rig.learnt('m1', 'not-written');
    rig.answers.void = () => Promise.reject(new LedgerRefusal(409, 'MovementAlreadyPosted'));
    await rig.resolver.seen(movement, 'not-written');
    assert.equal(movement.learnt, undefined, 'the card line is journaled');
    assert.deepEqual(rig.log.lines, [
      "error: movement m1: the ledger refused the card's word (MovementAlreadyPosted)",
    ]);
  });

  test('when the ledger does not answer the card’s word, then the movement stays learnt for the card to decide again', async () => {
    const rig = await resolverRig();
    const movement = await rig.learnt('m1', 'not-written');
    rig.answers.void = () => Promise.reject(errors.ledgerUnavailable());
    await rig.resolver.seen(movement, 'not-written');
    assert.equal(movement.learnt, true);
  });
});

describe('MovementResolver.cardDecides()', () => {
  test('when the card holds a movement an operator posted, then the ledger is told to post it on the card’s evidence, no compensation', async () => {
    const rig = await resolverRig();
    const decided = atLedger({ id: 'x1', state: 'posted', tillId: OTHER_TILL, awaitsCard: true });
    const made = await rig.resolver.cardDecides(KEY, decided, 'committed', 'card shows 30');
    assert.equal(made, undefined);
    assert.deepEqual(rig.asked(), ['post x1']);
    assert.deepEqual(rig.calls[0]?.by, { tillId: TILL, evidence: 'card shows 30' });
  });

  test('when the card does not hold a movement an operator voided, then the ledger is told to void it on the card’s evidence', async () => {
    const rig = await resolverRig();
    const decided = atLedger({ id: 'x1', state: 'voided', tillId: OTHER_TILL, awaitsCard: true });
    const made = await rig.resolver.cardDecides(KEY, decided, 'not-written', 'card shows 25');
    assert.equal(made, undefined);
    assert.deepEqual(rig.asked(), ['void x1']);
  });
});

describe("MovementResolver.cardDecides() of a card's own movements", () => {
  const kinds = ['refund', 'correction', 'replacement', 'block-clear'] as const;
  for (const kind of kinds) {
    test(`when the card agrees with an operator's word on a ${kind}, then the ledger is told so on the card's evidence, no compensation`, async () => {
      for (const [state, shows, action] of [
        ['posted', 'committed', 'post'],
        ['voided', 'not-written', 'void'],
      ] as const) {
        const rig = await resolverRig();
        const decided = atLedger({
          id: 'x1',
          kind,
          state,
          credits: 7,
          tillId: OTHER_TILL,
          awaitsCard: true,
        });
        const made = await rig.resolver.cardDecides(KEY, decided, shows, 'card shows 30');
        assert.equal(made, undefined, state);
        assert.deepEqual(rig.asked(), [`${action} x1`], state);
      }
    });

    test(`when the card disagrees with an operator's word on a ${kind}, then a compensating ${kind} of its credits sets it right, created and posted by this till`, async () => {
      for (const [state, shows] of [
        ['voided', 'committed'],
        ['posted', 'not-written'],
      ] as const) {
        const rig = await resolverRig();
        rig.answers.create = async (id) => atLedger({ id, kind, credits: 7, compensates: 'x1' });
        rig.answers.post = async (id) =>
          atLedger({ id, kind, credits: 7, compensates: 'x1', state: 'posted' });
        const decided = atLedger({
          id: 'x1',
          kind,
          state,
          credits: 7,
          tillId: OTHER_TILL,
          awaitsCard: true,
        });
        const made = await rig.resolver.cardDecides(KEY, decided, shows, 'card shows 30');
        assert.ok(made, `${state}: ${JSON.stringify(rig.calls)}`);
        assert.deepEqual(rig.asked(), [`create ${made.id}`, `post ${made.id}`], state);
        const created = rig.calls[0]?.created;
        assert.deepEqual(
          [created?.kind, created?.credits, created?.compensates, created?.cardId],
          [kind, 7, 'x1', CARD],
          state,
        );
        assert.equal(rig.book.movement(made.id).resolved, 'posted', state);
      }
    });
  }

  test('when the card cannot tell, then the operator’s word on a refund stands: the ledger is told, nothing is compensated', async () => {
    for (const state of ['posted', 'voided'] as const) {
      const rig = await resolverRig();
      const decided = atLedger({
        id: 'x1',
        kind: 'refund',
        state,
        tillId: OTHER_TILL,
        awaitsCard: true,
      });
      assert.equal(
        await rig.resolver.cardDecides(KEY, decided, undefined, 'card unreadable'),
        undefined,
      );
      assert.deepEqual(rig.asked(), [`${state === 'posted' ? 'post' : 'void'} x1`]);
    }
  });
});

describe('MovementResolver, the outbox', () => {
  test('when the resolver is closed during a pass, then the pass ends with the call in flight, and the rest stay in the journal for the next start', async () => {
    const rig = await resolverRig();
    for (const id of ['m1', 'm2', 'm3']) await rig.movement(id, 'to-post');
    let answerFirst: () => void = () => assert.fail('m1 was not posted');
    rig.answers.post = (id) =>
      id === 'm1'
        ? new Promise((resolve) => {
            answerFirst = () => resolve(atLedger({ id, state: 'posted' }));
          })
        : Promise.resolve(atLedger({ id, state: 'posted' }));
    rig.resolver.kick(0);
    await rig.clock.advance(0);
    const closed = rig.resolver.close();
    answerFirst();
    await closed;
    const phases = ['m1', 'm2', 'm3'].map((id) => phaseOf(rig.book.movement(id)));
    assert.deepEqual(
      { asked: rig.asked(), phases },
      {
        asked: ['post m1'],
        phases: ['done', 'to-post', 'to-post'],
      },
    );
  });

  test('when a pass posts everything, then no further pass is scheduled', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-post');
    await rig.movement('m2', 'to-void');
    rig.resolver.kick(0);
    await rig.clock.advance(0);
    assert.deepEqual(rig.asked(), ['post m1', 'void m2']);
    assert.equal(rig.clock.pending, 0, `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });

  test('when the only movements left wait for their card or are done, then a pass asks nothing and schedules nothing', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'uncertain');
    await rig.movement('m2', 'done');
    rig.resolver.kick(0);
    await rig.clock.advance(0);
    assert.deepEqual(rig.asked(), []);
    assert.equal(rig.clock.pending, 0, `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });

  test('when a running request owns a movement, then the outbox leaves it to that request', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-post');
    rig.book.owned.set('m1', fingerprint(KEY));
    rig.resolver.kick(0);
    await rig.clock.advance(0);
    assert.deepEqual(rig.asked(), []);
  });

  test('when one movement keeps going unanswered beside one the ledger posts, then the outbox retries with a doubling delay until it is posted', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-post');
    await rig.movement('m2', 'to-post');
    rig.answers.post = (id) =>
      id === 'm1'
        ? Promise.reject(errors.ledgerUnavailable())
        : Promise.resolve(atLedger({ id, state: 'posted' }));
    rig.resolver.kick(0);
    await rig.clock.advance(0);
    assert.deepEqual(rig.asked(), ['post m1', 'post m2']);
    await rig.clock.advance(10 + 20 + 40);
    assert.deepEqual(rig.clock.delays, [0, 10, 20, 40, 40]);
    assert.deepEqual(rig.asked(), ['post m1', 'post m2', 'post m1', 'post m1', 'post m1']);
    rig.answers.post = async (id) => atLedger({ id, state: 'posted' });
    await rig.clock.advance(40);
    assert.equal(rig.resolver.unconfirmed, 0);
    assert.equal(rig.clock.pending, 0, `timers asked: ${JSON.stringify(rig.clock.delays)}`);
  });
});

describe('MovementResolver.resolve() of a float recharge', () => {
  test('when its card write landed, then resolve asks the ledger nothing, has the float reported, and answers false (the report resolves it)', async () => {
    const rig = await resolverRig();
    const sale = await rig.ofCard('f1', CARD, 'to-post');
    const answer = await rig.resolver.resolve(sale);
    assert.equal(answer, false, `resolve answered ${answer}`);
    assert.deepEqual(rig.asked(), []);
    assert.equal(rig.floatReports.asked, 1);
  });

  test('when it is done, or its card write is uncertain, then resolve has nothing reported: done answers true, uncertain false', async () => {
    const rig = await resolverRig();
    const done = await rig.ofCard('f1', CARD, 'done');
    const uncertain = await rig.ofCard('f2', CARD, 'uncertain');
    const answers = [await rig.resolver.resolve(done), await rig.resolver.resolve(uncertain)];
    assert.deepEqual(answers, [true, false]);
    assert.equal(rig.floatReports.asked, 0);
    assert.deepEqual(rig.asked(), []);
  });
});

describe('MovementResolver, what a void says', () => {
  test('when a movement is voided, then the void names this till only, not when the movement happened (only a post says that)', async () => {
    const rig = await resolverRig();
    const movement = await rig.movement('m1', 'to-void');
    await rig.resolver.resolve(movement);
    assert.deepEqual(rig.asked(), ['void m1']);
    assert.deepEqual(rig.calls[0]?.by, { tillId: TILL });
  });
});

describe('MovementResolver.postCard()', () => {
  const OTHER_CARD = '04F1F2F3';

  test('when nothing of the card is left to post, then postCard answers true and asks nothing', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'done');
    assert.equal(await rig.resolver.postCard(CARD), true);
    assert.deepEqual(rig.asked(), []);
  });

  test("when another card's movement, a float recharge, and one a running request owns are left to post, then postCard posts none of them", async () => {
    const rig = await resolverRig();
    await rig.ofCard('other-card', OTHER_CARD, 'to-post', { float: false });
    await rig.ofCard('float', CARD, 'to-post');
    await rig.movement('owned', 'to-post');
    rig.book.owned.set('owned', fingerprint(KEY));
    assert.equal(await rig.resolver.postCard(CARD), true);
    assert.deepEqual(rig.asked(), []);
    assert.equal(rig.floatReports.asked, 0);
  });

  test('when the card has a movement to void, then postCard leaves it to the outbox: it only posts', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-void');
    assert.equal(await rig.resolver.postCard(CARD), true);
    assert.deepEqual(rig.asked(), []);
  });

  test('when the card has a movement to post and a compensation not yet created, then postCard posts the one, creates and posts the other, and answers true', async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-post');
    await rig.compensation('c1', 'm0');
    assert.equal(await rig.resolver.postCard(CARD), true);
    assert.deepEqual(rig.asked(), ['post m1', 'create c1', 'post c1']);
  });

  test("when one of the card's posts goes unanswered and the next is posted, then postCard answers false: something is left", async () => {
    const rig = await resolverRig();
    await rig.movement('m1', 'to-post');
    await rig.movement('m2', 'to-post');
    rig.answers.post = (id) =>
      id === 'm1'
        ? Promise.reject(errors.ledgerUnavailable())
        : Promise.resolve(atLedger({ id, state: 'posted' }));
    assert.equal(await rig.resolver.postCard(CARD), false);
    assert.deepEqual(rig.asked(), ['post m1', 'post m2']);
  });
});
