/**
 * The ledger's word on this till's undecided movements (LedgerWord) and the compensating
 * movements (Compensations), on their own: a journal in memory, a scripted ledger, the resolver
 * recorded. Whether a card may still decide a movement learnt from the ledger (not once this
 * till or another wrote it since), the journal lines the ledger's word leaves, a movement
 * decided while the ledger was being asked, and what a compensation's create and the check of
 * another till's compensation answer when the key is gone or the ledger is out of reach.
 * The engine's tests (wallet-use-cases, settle-card, card-settlement) run the same through it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { LedgerMovement } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import { systemClock } from '../../service/wallet/clock.ts';
import { Compensations } from '../../service/wallet/compensations.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import { LedgerWord } from '../../service/wallet/ledger-word.ts';
import { CARD, KEY, OTHER_KEY, fingerprint, bookInMemory } from '../support/money-rig.ts';

type Account = { movements: LedgerMovement[] };

/** A ledger movement of CARD as GET /v1/cards/{id} lists it (only the fields read here). */
const atLedger = (fields: Partial<LedgerMovement> & { id: string }): LedgerMovement =>
  ({
    kind: 'recharge',
    cardId: CARD,
    state: 'posted',
    credits: 5,
    compensates: null,
    awaitsCard: false,
    resolvedByTill: null,
    evidence: null,
    ...fields,
  }) as LedgerMovement;

async function rig() {
  const { store, book, lines } = await bookInMemory({ clock: systemClock });
  const asked: string[] = [];
  const ledger = {
    account: { movements: [] } as Account,
    movement: undefined as LedgerMovement | undefined,
    failAccount: false,
    /** Runs while the ledger is asked (another piece of work decides the movement meanwhile). */
    meanwhile: async (): Promise<void> => undefined,
    getMovement: async (_apiKey: string, id: string) => {
      asked.push(`get ${id}`);
      await ledger.meanwhile();
      return ledger.movement ?? atLedger({ id });
    },
    getCardAccount: async (_apiKey: string, cardId: string) => {
      asked.push(`account ${cardId}`);
      await ledger.meanwhile();
      if (ledger.failAccount) throw errors.ledgerUnavailable();
      return ledger.account as never;
    },
  };
  const told: string[] = [];
  const resolving = {
    resolve: async (movement: Movement) => {
      told.push(`resolve ${movement.id}`);
      return true;
    },
    resolveOnEvidence: async (_apiKey: string, id: string, action: string) => {
      told.push(`${action} ${id} on evidence`);
      return atLedger({ id });
    },
    resolved: (id: string) => told.push(`resolved ${id}`),
  };
  const compensations = {
    compensate: async (movement: Movement, ledgerState: string, shows: string) => {
      told.push(`compensate ${movement.id} ${ledgerState} ${shows}`);
    },
    start: async () => assert.fail('no compensation is started here'),
  };
  const word = new LedgerWord(book, ledger, resolving, compensations as never);
  /** A movement of `cardId` journaled as reserved (its card write undecided), `more` lines after. */
  const movement = async (
    more: 'uncertain' | 'committed' | 'not-written' | 'learnt' | 'learnt-voided' = 'uncertain',
    { cardId = CARD, key = KEY } = {},
  ): Promise<string> => {
    const id = randomUUID();
    await book.append(
      {
        type: 'started',
        id,
        kind: 'recharge',
        cardId,
        keyFingerprint: fingerprint(key),
        credits: 5,
      },
      { type: 'reserved', id, credits: 5, amount: '2.50' },
    );
    if (more === 'committed' || more === 'not-written') {
      await book.append({ type: 'card', id, outcome: more });
    }
    if (more === 'learnt' || more === 'learnt-voided') {
      const voided = more === 'learnt-voided';
      await book.append(
        { type: 'card', id, outcome: voided ? 'not-written' : 'committed', learnt: true },
        { type: 'resolved', id, state: voided ? 'voided' : 'posted' },
      );
    }
    return id;
  };
  const lineOf = (id: string, type: string) =>
    store.text
      .split('\n')
      .filter((line) => line.includes(`"type":"${type}"`) && line.includes(id))
      .map((line) => {
        const { at: _at, ...rest } = JSON.parse(line) as Record<string, unknown>;
        return rest;
      });
  return { book, ledger, asked, told, lines, word, movement, lineOf, store };
}

describe('LedgerWord.cardMayDecide', () => {
  test('when this till wrote the card after the movement (committed, learnt either way, or undecided), then the card may not decide it, without asking the ledger', async () => {
    for (const later of ['committed', 'learnt', 'learnt-voided', 'uncertain'] as const) {
      const { book, word, movement, asked } = await rig();
      const id = await movement('learnt');
      await movement(later);
      assert.equal(await word.cardMayDecide(book.movement(id)), false, later);
      assert.deepEqual(asked, [], later);
    }
  });

  test("when the till's later write of the card failed, or its writes came before, or were of another card, then the card may decide it (the ledger's list shows nothing newer)", async () => {
    const { book, word, movement, ledger, asked } = await rig();
    await movement('committed');
    await movement('uncertain');
    const id = await movement('learnt');
    await movement('not-written');
    await movement('committed', { cardId: '04FFFFFF' });
    ledger.account = { movements: [atLedger({ id })] };
    assert.equal(await word.cardMayDecide(book.movement(id)), true);
    assert.deepEqual(asked, [`account ${CARD}`]);
  });

  test("when the ledger's list of the card holds a newer movement, then the card may not decide it; newer ones that are its compensation or voided do not count", async () => {
    const { book, word, movement, ledger } = await rig();
    const id = await movement('learnt');
    const may = (movements: LedgerMovement[]) => {
      ledger.account = { movements };
      return word.cardMayDecide(book.movement(id));
    };
    const own = atLedger({ id });
    const compensation = atLedger({ id: randomUUID(), kind: 'discharge', compensates: id });
    const voided = atLedger({ id: randomUUID(), state: 'voided' });
    const newer = atLedger({ id: randomUUID(), state: 'pending' });
    const older = atLedger({ id: randomUUID() });
    assert.deepEqual(
      [
        await may([own, older]),
        await may([compensation, voided, own]),
        await may([newer, own]),
        await may([compensation, newer, own, older]),
        await may([atLedger({ id: randomUUID(), compensates: id, state: 'voided' }), own]),
      ],
      [true, true, false, false, true],
    );
  });

  test("when a newer movement is listed but no other write can leave the card as this payout's does, then the card may decide it; not a recharge's, nor when another listed write leaves that state", async () => {
    const { book, word, movement, ledger } = await rig();
    const id = await movement('learnt');
    const may = (movements: LedgerMovement[]) => {
      ledger.account = { movements };
      return word.cardMayDecide(book.movement(id));
    };
    // 27 at generation 103 in slot 0: the payout leaves 0 at 104 in slot 1, another till's
    // float recharge was sold from that, and a payout after a machine spent leaves it too.
    const payout = atLedger({
      id,
      kind: 'discharge',
      credits: 27,
      cardBefore: 'classic:v1:27:103:0',
    });
    const sale = atLedger({ id: randomUUID(), credits: 4, cardBefore: 'classic:v1:0:104:1' });
    const rival = atLedger({
      id: randomUUID(),
      kind: 'discharge',
      state: 'voided',
      cardBefore: 'classic:v1:12:103:0',
    });
    assert.deepEqual(
      [
        await may([sale, payout]),
        await may([sale, payout, rival]),
        await may([sale, { ...payout, kind: 'recharge', credits: 4 }]),
      ],
      [true, false, false],
    );
  });

  test("when the ledger's list does not hold the movement, then only an empty list lets the card decide it (newer ones filled the list)", async () => {
    const { book, word, movement, ledger } = await rig();
    const id = await movement('learnt');
    ledger.account = { movements: [] };
    const empty = await word.cardMayDecide(book.movement(id));
    ledger.account = { movements: [atLedger({ id: randomUUID() })] };
    const full = await word.cardMayDecide(book.movement(id));
    assert.deepEqual({ empty, full }, { empty: true, full: false });
  });

  test('when the ledger cannot be asked, or the key is gone, then the card decides', async () => {
    const { book, word, movement, ledger, asked } = await rig();
    const id = await movement('learnt');
    ledger.failAccount = true;
    ledger.account = { movements: [atLedger({ id: randomUUID() }), atLedger({ id })] };
    const offline = await word.cardMayDecide(book.movement(id));
    const other = await movement('learnt', { key: OTHER_KEY });
    const keyGone = await word.cardMayDecide(book.movement(other));
    assert.deepEqual(
      { offline, keyGone, asked },
      { offline: true, keyGone: true, asked: [`account ${CARD}`] },
    );
  });
});

describe('LedgerWord.ledgerWordStands', () => {
  test("when a learnt movement's card can no longer decide it, then its card line is journaled as the ledger's for good, and the log says so", async () => {
    const { book, word, movement, lineOf, lines } = await rig();
    const id = await movement('learnt');
    await word.ledgerWordStands(book.movement(id));
    assert.deepEqual(lineOf(id, 'card').at(-1), {
      type: 'card',
      id,
      outcome: 'committed',
      byLedger: true,
    });
    assert.equal(book.movement(id).byLedger, true);
    assert.deepEqual(lines, [
      `info: movement ${id}: its card was settled or written since the ledger's word (posted); that word stands`,
    ]);
  });

  test('when the movement is not learnt, then nothing is journaled', async () => {
    const { book, word, movement, lineOf } = await rig();
    const id = await movement('committed');
    await word.ledgerWordStands(book.movement(id));
    assert.equal(lineOf(id, 'card').length, 1);
  });
});

describe('LedgerWord.seen', () => {
  test("when the card shows the learnt outcome, then its card line is the card's own; when it cannot tell, the ledger's (byLedger)", async () => {
    const { book, word, movement, lineOf } = await rig();
    const shown = await movement('learnt');
    await word.seen(book.movement(shown), 'committed');
    const unknown = await movement('learnt');
    await word.seen(book.movement(unknown), undefined);
    assert.deepEqual(
      [lineOf(shown, 'card').at(-1), lineOf(unknown, 'card').at(-1)],
      [
        { type: 'card', id: shown, outcome: 'committed' },
        { type: 'card', id: unknown, outcome: 'committed', byLedger: true },
      ],
    );
  });
});

describe('LedgerWord.learn', () => {
  test('when the movement is decided while the ledger is asked for it, or for the card, then nothing is learnt', async () => {
    for (const during of ['movement', 'account'] as const) {
      const { book, word, movement, ledger, told, lineOf, asked } = await rig();
      const id = await movement('uncertain');
      ledger.movement = atLedger({ id, state: 'voided', resolvedByTill: 'other' });
      let calls = 0;
      ledger.meanwhile = async () => {
        calls += 1;
        if ((during === 'movement' && calls === 1) || (during === 'account' && calls === 2)) {
          await book.append({ type: 'card', id, outcome: 'committed' });
        }
      };
      const learnt = await word.learn(book.movement(id), { cardSeen: false });
      assert.deepEqual(
        { learnt, asked, told, cards: lineOf(id, 'card'), resolved: lineOf(id, 'resolved') },
        {
          learnt: false,
          // Decided while its movement was asked for: the card's movements are not asked.
          asked: during === 'movement' ? [`get ${id}`] : [`get ${id}`, `account ${CARD}`],
          told: [],
          cards: [{ type: 'card', id, outcome: 'committed' }],
          resolved: [],
        },
        during,
      );
    }
  });

  test("when the card's other posted movements compensate something else, then they are not taken for this one's compensation", async () => {
    const { book, word, movement, ledger, lineOf } = await rig();
    const id = await movement('uncertain');
    ledger.movement = atLedger({ id, state: 'voided', resolvedByTill: 'other' });
    const unrelated = atLedger({ id: randomUUID(), kind: 'discharge', compensates: randomUUID() });
    const plain = atLedger({ id: randomUUID() });
    ledger.account = { movements: [unrelated, plain] };
    assert.equal(await word.learn(book.movement(id), { cardSeen: false }), true);
    assert.deepEqual(lineOf(id, 'card'), [
      { type: 'card', id, outcome: 'not-written', learnt: true },
    ]);
    assert.equal(book.movements.has(unrelated.id), false);
    assert.equal(book.movements.has(plain.id), false);
  });
});

describe('Compensations', () => {
  async function compensationsRig(createMovement: () => Promise<LedgerMovement>) {
    const { book, movement, ledger } = await rig();
    const compensations = new Compensations(
      book,
      { createMovement, getCardAccount: ledger.getCardAccount },
      () => undefined,
    );
    return { book, movement, ledger, compensations };
  }

  test("when a compensation's key is gone or the ledger is out of reach, then its create answers false and journals nothing", async () => {
    const { book, movement, compensations } = await compensationsRig(() =>
      Promise.reject(errors.ledgerUnavailable()),
    );
    const of = await movement('committed');
    const offline = await compensations.start(
      { id: of, cardId: CARD, keyFingerprint: fingerprint(KEY), shows: 'committed' },
      'voided',
      { kind: 'recharge', credits: 5 },
    );
    const keyGone = await compensations.start(
      { id: of, cardId: CARD, keyFingerprint: fingerprint(OTHER_KEY), shows: 'committed' },
      'voided',
      { kind: 'recharge', credits: 5 },
    );
    const answers = [await compensations.create(offline), await compensations.create(keyGone)];
    assert.deepEqual(answers, [false, false]);
    assert.deepEqual(
      [book.movement(offline.id), book.movement(keyGone.id)].map((made) => [
        made.reserved,
        made.card,
      ]),
      [
        [undefined, undefined],
        [undefined, undefined],
      ],
    );
  });

  test("when another till's posted compensation of the movement is at the ledger, then compensatedSince is true; another's compensation, or one voided, false; the ledger out of reach, undefined; the key gone, false", async () => {
    const { movement, ledger, compensations, book } = await compensationsRig(() =>
      assert.fail('no create'),
    );
    const id = await movement('committed');
    const since = (movements: LedgerMovement[]) => {
      ledger.account = { movements };
      return compensations.compensatedSince(book.movement(id));
    };
    const answers = [
      await since([atLedger({ id: randomUUID(), kind: 'discharge', compensates: id })]),
      await since([atLedger({ id: randomUUID(), kind: 'discharge', compensates: randomUUID() })]),
      await since([
        atLedger({ id: randomUUID(), kind: 'discharge', compensates: id, state: 'voided' }),
      ]),
      await since([atLedger({ id })]),
    ];
    ledger.failAccount = true;
    answers.push(await compensations.compensatedSince(book.movement(id)));
    ledger.failAccount = false;
    const other = await movement('committed', { key: OTHER_KEY });
    ledger.account = { movements: [atLedger({ id: randomUUID(), compensates: other })] };
    answers.push(await compensations.compensatedSince(book.movement(other)));
    assert.deepEqual(answers, [true, false, false, false, undefined, false]);
  });
});
