import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ANSWER_RETENTION_MS,
  MovementJournal,
  type JournalStore,
} from '../../service/wallet/movement-journal.ts';

/** A journal store in memory, to reopen the same lines as after a restart. */
function memoryStore(): JournalStore & { text: string } {
  return {
    text: '',
    async read() {
      return this.text;
    },
    async rewrite(text: string) {
      this.text = text;
    },
    async append(line: string) {
      this.text += line;
    },
    async close() {},
  };
}

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
    const store = memoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await tornFirstWrite(journal, 'm1', '04A1B2C3');
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.equal(reopened.movements.get('m1')?.torn, true, store.text);
  });

  test('when a later movement of the same card exists, then the torn one is dropped as usual', async () => {
    const store = memoryStore();
    const journal = new MovementJournal(store);
    await journal.open(Date.parse(at));
    await tornFirstWrite(journal, 'm1', '04A1B2C3');
    await tornFirstWrite(journal, 'm2', '04A1B2C3');
    await journal.close();
    const reopened = new MovementJournal(store);
    await reopened.open(aWeekLater);
    assert.deepEqual([...reopened.movements.keys()], ['m2'], store.text);
  });

  test('when a personalization is unfinished, then it is kept across a restart until personalized', async () => {
    const store = memoryStore();
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
