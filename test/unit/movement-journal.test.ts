import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ANSWER_RETENTION_MS } from '../../service/wallet/journal-entries.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { MemoryStore } from '../support/money-rig.ts';

const at = '2024-01-01T00:00:00.000Z';
const aWeekLater = Date.parse(at) + 7 * ANSWER_RETENTION_MS;

async function tornFirstWrite(journal: MovementJournal, id: string, cardId: string) {
  await journal.append({ type: 'started', id, kind: 'recharge', cardId, keyFingerprint: 'k', at });
  const intent = { slot: 0 as const, value: 10, generation: 1, previousBalance: null };
  await journal.append({ type: 'reserved', id, credits: 10, amount: '5', intent, at });
  await journal.append({ type: 'card', id, outcome: 'not-written', torn: true, at });
  await journal.append({ type: 'resolved', id, state: 'voided', at });
}

describe('MovementJournal compaction', () => {
  test("when a torn first write is its card's latest movement, then it outlives the 24 h retention", async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await tornFirstWrite(journal, 'm1', '04A1B2C3');
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.equal(reopened.movements.get('m1')?.torn, true, store.text);
  });

  test('when a later movement of the same card exists, then the torn one is dropped as usual', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await tornFirstWrite(journal, 'm1', '04A1B2C3');
    await tornFirstWrite(journal, 'm2', '04A1B2C3');
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.deepEqual([...reopened.movements.keys()], ['m2'], store.text);
  });

  test("when a decision learnt from the ledger without the card is its card's latest movement, then it outlives the 24 h retention: the card still has to be seen", async () => {
    const learnt = async (journal: MovementJournal, id: string) => {
      await journal.append({
        type: 'started',
        id,
        kind: 'recharge',
        cardId: '04A1B2C3',
        keyFingerprint: 'k',
        at,
      });
      const intent = { slot: 1 as const, value: 30, generation: 2, previousBalance: 20 };
      await journal.append({ type: 'reserved', id, credits: 10, amount: '5', intent, at });
      await journal.append({ type: 'card', id, outcome: 'committed', learnt: true, at });
      await journal.append({ type: 'resolved', id, state: 'posted', at });
    };
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await learnt(journal, 'm1');
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.equal(reopened.movements.get('m1')?.learnt, true, store.text);
    // Once a later movement of the card exists, it goes as usual.
    await learnt(reopened, 'm2');
    await reopened.close();
    const again = new MovementJournal(store);
    await again.open(aWeekLater);
    assert.deepEqual([...again.movements.keys()], ['m2'], store.text);
  });

  test('when a personalization is unfinished, then it is kept across a restart until personalized', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await journal.append({ type: 'personalizing', cardId: 'AA', step: 'trailer', at });
    await journal.append({ type: 'personalizing', cardId: 'BB', step: 'slots', at });
    await journal.append({ type: 'personalized', cardId: 'BB', at });
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.deepEqual([...reopened.personalizing], [['AA', { step: 'trailer', at }]], store.text);
  });
});

describe('MovementJournal lines', () => {
  /** One movement of each shape the engine journals, each line kind at least once. */
  async function journalOfEveryShape(journal: MovementJournal) {
    const intent = { slot: 1 as const, value: 30, generation: 7, previousBalance: 20 };
    const idempotency = { scope: 'k:pos-1', requestHash: 'h1' };
    await journal.append({
      type: 'started',
      id: 'paid',
      kind: 'recharge',
      cardId: 'AA',
      keyFingerprint: 'k',
      idempotency,
      at,
    });
    await journal.append({ type: 'reserved', id: 'paid', credits: 10, amount: '5', intent, at });
    await journal.append({ type: 'card', id: 'paid', outcome: 'committed', at });
    await journal.append({ type: 'resolved', id: 'paid', state: 'posted', at });
    const body = { cardId: 'AA', credits: 30, rechargeAmount: 5 };
    await journal.append({ type: 'answered', id: 'paid', status: 200, body, at });
    await journal.append({
      type: 'started',
      id: 'compensation',
      kind: 'discharge',
      cardId: 'AA',
      keyFingerprint: 'k',
      compensates: 'paid',
      credits: 10,
      at,
    });
    await journal.append({ type: 'conflict', id: 'compensation', detail: 'refused', at });
    await journal.append({
      type: 'started',
      id: 'adopted',
      kind: 'discharge',
      cardId: 'BB',
      keyFingerprint: 'k',
      adopted: true,
      at,
    });
    await journal.append({ type: 'reserved', id: 'adopted', credits: 4, amount: '2', at });
    await journal.append({ type: 'card', id: 'adopted', outcome: 'not-written', torn: true, at });
    await journal.append({ type: 'resolved', id: 'adopted', state: 'voided', at });
    await journal.append({
      type: 'started',
      id: 'learnt',
      kind: 'recharge',
      cardId: 'CC',
      keyFingerprint: 'k',
      at,
    });
    await journal.append({ type: 'card', id: 'learnt', outcome: 'committed', learnt: true, at });
    await journal.append({ type: 'personalizing', cardId: 'DD', step: 'trailer', at });
  }

  test('when a journal of every line kind is compacted and reopened, then each movement folds back the same', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await journalOfEveryShape(journal);
    const before = structuredClone([...journal.movements]);
    await journal.close();
    // The first restart reads the lines as appended and compacts them; the second reads what
    // the compaction wrote.
    for (const restart of [1, 2]) {
      const reopened = new MovementJournal(store);
      await reopened.open(Date.parse(at) + restart * 60_000);
      assert.deepEqual([...reopened.movements], before, `restart ${restart}: ${store.text}`);
      assert.deepEqual([...reopened.personalizing], [['DD', { step: 'trailer', at }]]);
      await reopened.close();
    }
  });

  test('when the journal holds an empty line before others, then the lines after it are read', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await journalOfEveryShape(journal);
    await journal.close();
    store.text = `\n${store.text.replace('\n', '\n\n')}`;
    const reopened = new MovementJournal(store);
    await reopened.open(Date.parse(at) + 60_000);
    assert.deepEqual(
      [...reopened.movements.keys()],
      ['paid', 'compensation', 'adopted', 'learnt'],
      store.text,
    );
  });

  test('when an answer is 23 hours old it is kept, and at 25 hours it is dropped', async () => {
    const hour = 60 * 60 * 1000;
    for (const [hours, kept] of [
      [23, true],
      [25, false],
    ] as const) {
      const store = new MemoryStore();
      const journal = new MovementJournal(store);
      await journal.open(Date.parse(at));
      await journalOfEveryShape(journal);
      await journal.close();
      const reopened = new MovementJournal(store);
      await reopened.open(Date.parse(at) + hours * hour);
      assert.equal(reopened.movements.has('paid'), kept, `${hours} h: ${store.text}`);
    }
  });

  test('when the journal is not open yet, or closed, then an append is refused and nothing is written', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    const line = { type: 'resolved', id: 'x', state: 'posted', at } as const;
    await assert.rejects(journal.append(line), /movement journal is closed/);
    await journal.open(Date.parse(at));
    await journal.close();
    await assert.rejects(journal.append(line), /movement journal is closed/);
    assert.equal(store.text, '');
  });
});

describe('MovementJournal compaction, what a key keeps and what the file says', () => {
  const idempotency = { scope: 'k:order-1', requestHash: 'hash' };
  const aMinuteLater = Date.parse(at) + 60_000;

  /** A recharge of card AA journaled done (no answer line), with the POS's key or without. */
  async function doneWithoutAnswer(
    journal: MovementJournal,
    id: string,
    outcome: 'committed' | 'not-written',
    withKey: boolean,
  ) {
    await journal.append({
      type: 'started',
      id,
      kind: 'recharge',
      cardId: 'AA',
      keyFingerprint: 'k',
      ...(withKey ? { idempotency } : {}),
      at,
    });
    const intent = { slot: 1 as const, value: 30, generation: 2, previousBalance: 20 };
    await journal.append({ type: 'reserved', id, credits: 10, amount: '5', intent, at });
    await journal.append({ type: 'card', id, outcome, at });
    await journal.append({
      type: 'resolved',
      id,
      state: outcome === 'committed' ? 'posted' : 'voided',
      at,
    });
  }

  test("when done movements have no answer line, then a start keeps within 24 h only a key's landed write (answered as of its card line), and drops a write without a key or one that did not land", async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await doneWithoutAnswer(journal, 'no-key', 'committed', false);
    await doneWithoutAnswer(journal, 'key-not-written', 'not-written', true);
    await doneWithoutAnswer(journal, 'key-landed', 'committed', true);
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aMinuteLater);
    assert.deepEqual([...reopened.movements.keys()], ['key-landed'], store.text);
  });

  test('when several lines are appended in one write, then each is a line of its own: a restart reads them all', async () => {
    const store = new MemoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    const intent = { slot: 1 as const, value: 30, generation: 2, previousBalance: 20 };
    await journal.append(
      { type: 'started', id: 'm1', kind: 'recharge', cardId: 'AA', keyFingerprint: 'k', at },
      { type: 'reserved', id: 'm1', credits: 10, amount: '5', intent, at },
      { type: 'card', id: 'm1', outcome: 'committed', at },
    );
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aMinuteLater);
    const movement = reopened.movements.get('m1');
    assert.deepEqual(
      { credits: movement?.reserved?.credits, card: movement?.card },
      { credits: 10, card: 'committed' },
      store.text,
    );
  });
});
