import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { CardList } from '../../common/ledger-contract.ts';
import { CARD_LIST_FILE, CardListWatcher } from '../../service/cloud/card-list-watcher.ts';
import { errors } from '../../service/errors.ts';
import { memoryLogger } from '../support/memory-logger.ts';

const BLOCKED = '04B1B2B3';
const list = (seq: number, blocked: string[]): CardList => ({
  seq,
  changedAt: null,
  blocked: blocked.map((cardId) => ({ cardId, since: '2026-11-26T09:00:00.000Z' })),
  waiting: [],
});

/** A ledger answering the card list the test sets (null: 304), or down. */
class ListLedger {
  current: CardList = list(1, []);
  down = false;
  readonly asked: { apiKey: string; heldSeq: number | undefined }[] = [];
  getCardList(apiKey: string, heldSeq?: number): Promise<CardList | null> {
    this.asked.push({ apiKey, heldSeq });
    if (this.down) return Promise.reject(errors.ledgerUnavailable());
    return Promise.resolve(heldSeq === this.current.seq ? null : this.current);
  }
}

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'cww-card-list-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function watcher(ledger: ListLedger, key = { current: 'key-a' }) {
  return new CardListWatcher({
    ledger,
    apiKey: () => key.current,
    fingerprint: (apiKey) => `fp-${apiKey}`,
    dataDir,
    everyMs: 60_000,
    log: memoryLogger(),
  });
}

test('when the list is unchanged, then the poll sends the seq held and keeps the list (304)', async () => {
  const ledger = new ListLedger();
  ledger.current = list(3, [BLOCKED]);
  const cards = watcher(ledger);
  await cards.poll();
  await cards.poll();
  assert.deepEqual(
    ledger.asked.map(({ heldSeq }) => heldSeq),
    [undefined, 3],
  );
  assert.deepEqual(cards.blockOf(BLOCKED), { since: '2026-11-26T09:00:00.000Z' });
  assert.equal(cards.blockOf('04000001'), undefined);
  ledger.current = list(4, []);
  await cards.poll();
  assert.equal(cards.blockOf(BLOCKED), undefined);
  cards.close();
});

test('when the till starts without the ledger, then the blocks it learnt before are in effect (kept in the data folder)', async () => {
  const ledger = new ListLedger();
  ledger.current = list(5, [BLOCKED]);
  const first = watcher(ledger);
  await first.poll();
  first.close();
  assert.match(readFileSync(join(dataDir, CARD_LIST_FILE), 'utf8'), /04B1B2B3/);

  const down = new ListLedger();
  down.down = true;
  const restarted = watcher(down);
  await restarted.poll();
  assert.deepEqual(restarted.blockOf(BLOCKED), { since: '2026-11-26T09:00:00.000Z' });
  // Back online: it asks with the seq it kept.
  down.down = false;
  down.current = list(5, [BLOCKED]);
  await restarted.poll();
  assert.equal(down.asked.at(-1)?.heldSeq, 5);
  restarted.close();
});

test("when the key changes to another shop's, then the list learnt with the previous key is not used", async () => {
  const ledger = new ListLedger();
  ledger.current = list(2, [BLOCKED]);
  const key = { current: 'key-a' };
  const cards = watcher(ledger, key);
  await cards.poll();
  key.current = 'key-b';
  assert.equal(cards.blockOf(BLOCKED), undefined);
  ledger.current = list(9, []);
  await cards.poll();
  // No seq of another shop's list is sent.
  assert.deepEqual(ledger.asked.at(-1), { apiKey: 'key-b', heldSeq: undefined });
  cards.close();
});

test('when the ledger refuses a card as blocked before the list says so, then it is blocked here until the next list', async () => {
  const ledger = new ListLedger();
  const cards = watcher(ledger);
  await cards.poll();
  cards.learntBlocked(BLOCKED);
  assert.deepEqual(cards.blockOf(BLOCKED), { since: null });
  ledger.current = list(2, [BLOCKED]);
  await cards.poll();
  assert.deepEqual(cards.blockOf(BLOCKED), { since: '2026-11-26T09:00:00.000Z' });
  cards.close();
});

test("when the list names a card held for an operator's word, then it is held here, kept offline, and free once this till read it, until a list says otherwise", async () => {
  const ledger = new ListLedger();
  const held = { cardId: BLOCKED, movementId: '6f1c1c8e-0f5b-4c7e-9a52-000000000001' };
  ledger.current = { ...list(7, []), held: [{ ...held, state: 'voided' }] };
  const cards = watcher(ledger);
  await cards.poll();
  assert.deepEqual(cards.heldFor(BLOCKED), [{ ...held, state: 'voided' }]);
  assert.deepEqual(cards.heldFor('04000001'), []);
  cards.close();
  // Restarted without the ledger: the held card it learnt is held still.
  const down = new ListLedger();
  down.down = true;
  const restarted = watcher(down);
  await restarted.poll();
  assert.deepEqual(restarted.heldFor(BLOCKED), [{ ...held, state: 'voided' }]);
  restarted.learntRead(BLOCKED);
  assert.deepEqual(restarted.heldFor(BLOCKED), []);
  // A new list that holds it again (another operator's word) is taken.
  down.down = false;
  down.current = { ...list(9, []), held: [{ ...held, state: 'posted' }] };
  // After the poll learntRead started (refused: the ledger was down).
  await restarted.refresh();
  assert.deepEqual(restarted.heldFor(BLOCKED), [{ ...held, state: 'posted' }]);
  restarted.close();
});

test('when the watcher is given a file of its own, then it keeps the list there and a new watcher starts from it', async () => {
  const ledger = new ListLedger();
  ledger.current = list(5, [BLOCKED]);
  const kept: { text?: string } = {};
  const file = {
    name: 'simulated/card-list.json',
    read: () => kept.text,
    write: (text: string) => {
      kept.text = text;
    },
  };
  const options = {
    ledger,
    apiKey: () => 'key-a',
    fingerprint: (apiKey: string) => `fp-${apiKey}`,
    dataDir,
    file,
    everyMs: 60_000,
    log: memoryLogger(),
  };
  await new CardListWatcher(options).poll();
  assert.equal(JSON.parse(kept.text ?? '{}').list.seq, 5);
  ledger.down = true;
  const restarted = new CardListWatcher(options);
  assert.deepEqual(restarted.blockOf(BLOCKED), { since: '2026-11-26T09:00:00.000Z' });
  assert.throws(() => readFileSync(join(dataDir, CARD_LIST_FILE)), /ENOENT/);
});
