/**
 * What a reconciliation hands to the ledger's word (MovementReconciler over a journal in memory,
 * a scripted ledger and a resolver that records): this till's undecided movements the ledger no
 * longer holds pending are learnt, but not one a running request owns (that request decides it
 * from its card), not one still pending, not one already decided, and none at all when a shop's
 * pending list could not be fetched (the list is incomplete: a pending movement would look
 * decided elsewhere).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { LedgerMovement } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import { silentLogger } from '../../service/logger.ts';
import { systemClock } from '../../service/wallet/clock.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import { KeyRing } from '../../service/wallet/key-ring.ts';
import { MovementBook } from '../../service/wallet/movement-book.ts';
import { MovementJournal } from '../../service/wallet/movement-journal.ts';
import { MovementReconciler } from '../../service/wallet/movement-reconciler.ts';
import type { MovementResolver } from '../../service/wallet/movement-resolver.ts';
import { CARD, KEY, MemoryStore, TILL, fingerprint } from '../support/money-rig.ts';

async function rig() {
  const journal = new MovementJournal(new MemoryStore());
  await journal.open();
  const book = new MovementBook({
    journal,
    tillId: TILL,
    keys: new KeyRing(() => KEY, fingerprint),
    clock: systemClock,
    log: silentLogger,
    newId: randomUUID,
  });
  const learnt: string[] = [];
  const resolver = Object.assign(new EventEmitter(), {
    learn: async (movement: Movement) => {
      learnt.push(movement.id);
      return false;
    },
  });
  const ledger = {
    pending: [] as LedgerMovement[],
    failList: false,
    listPendingMovements: async () => {
      if (ledger.failList) throw errors.ledgerUnavailable();
      return ledger.pending;
    },
  };
  const reconciler = new MovementReconciler(
    book,
    resolver as unknown as MovementResolver,
    {
      ledger: ledger as never,
      uncertainMovementBoundMs: 60_000,
      reconcileEveryMs: 60_000,
    } as never,
  );
  /** A movement of CARD reserved at the ledger, its card write undecided (or decided). */
  const movement = async (card?: 'committed'): Promise<string> => {
    const id = randomUUID();
    await book.append(
      {
        type: 'started',
        id,
        kind: 'recharge',
        cardId: CARD,
        keyFingerprint: fingerprint(KEY),
        credits: 5,
      },
      { type: 'reserved', id, credits: 5, amount: '2.50' },
    );
    if (card) await book.append({ type: 'card', id, outcome: card });
    return id;
  };
  return { book, ledger, reconciler, learnt, movement };
}

describe('reconciliation, the ledger word asked', () => {
  test('when an undecided movement is no longer pending at the ledger, then it is learnt; not one a running request owns, still pending, or decided', async () => {
    const { book, ledger, reconciler, learnt, movement } = await rig();
    const gone = await movement();
    const owned = await movement();
    book.owned.set(owned, fingerprint(KEY));
    const pending = await movement();
    ledger.pending = [{ id: pending, tillId: TILL, cardBefore: null } as LedgerMovement];
    await movement('committed');
    await reconciler.reconcile();
    await reconciler.close();
    assert.deepEqual(learnt, [gone]);
  });

  test("when a shop's pending list could not be fetched, then nothing is learnt this round", async () => {
    const { ledger, reconciler, learnt, movement } = await rig();
    await movement();
    ledger.failList = true;
    await reconciler.reconcile();
    await reconciler.close();
    assert.deepEqual(learnt, []);
  });
});
