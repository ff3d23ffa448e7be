/**
 * GET /movements (service/wallet/movement-lookup.ts) over a stub of the engine's journal and a
 * scripted ledger: the ledger's word when it has the movement, the journal's until it does,
 * never another key's journaled movement, and the compensation either side knows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Movement as LedgerMovement } from '../../common/ledger-contract.ts';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import {
  movementById,
  movementsByReference,
  type LookupLedger,
} from '../../service/wallet/movement-lookup.ts';

const TILL = '3d0f1f9c-8a3e-4f5e-9d7a-2f1b6c0e4a10';
const ID = '0b7a6f0e-5a6e-4c39-9a48-6f5c1e1d0a02';
const OTHER = '0b7a6f0e-5a6e-4c39-9a48-6f5c1e1d0a03';
const CALLER = { apiKey: 'key-of-the-shop-0123', keyFingerprint: 'f1' };

function journaled(overrides: Partial<Movement> = {}): Movement {
  return {
    id: ID,
    kind: 'recharge',
    cardId: '04A1B2C3',
    keyFingerprint: 'f1',
    reference: 'sale 1',
    startedAt: '2026-01-31T09:15:00.000Z',
    reserved: { credits: 20, amount: '10.00' },
    card: 'committed',
    cardAt: '2026-01-31T09:15:02.000Z',
    ...overrides,
  };
}

function engineOf(movements: Movement[], compensations: Record<string, string> = {}) {
  return {
    tillId: TILL,
    journaled: (id: string) => movements.find((m) => m.id === id),
    get journal() {
      return movements;
    },
    compensationOf: (id: string) =>
      compensations[id] === undefined ? undefined : ({ id: compensations[id] } as Movement),
  } as unknown as MovementEngine;
}

function atLedger(overrides: Partial<LedgerMovement> = {}): LedgerMovement {
  return {
    id: ID,
    kind: 'recharge',
    cardId: '04A1B2C3',
    state: 'posted',
    credits: 20,
    amount: '10.00',
    creditCost: '0.50',
    customerCredits: 900,
    createdAt: '2026-01-31T09:15:01.000Z',
    resolvedAt: '2026-01-31T09:15:03.000Z',
    tillId: TILL,
    cardBefore: null,
    compensates: null,
    resolvedByTill: TILL,
    evidence: null,
    awaitsCard: false,
    cardEvidence: null,
    occurredAt: '2026-01-31T09:15:02.000Z',
    reference: 'sale 1',
    ...overrides,
  };
}

function ledgerOf(script: {
  movement?: LedgerMovement | Error;
  list?: LedgerMovement[] | Error;
  card?: LedgerMovement[];
}): LookupLedger {
  return {
    getMovement: async () => {
      if (script.movement instanceof Error) throw script.movement;
      if (!script.movement) throw new LedgerRefusal(404, 'MovementNotFound');
      return script.movement;
    },
    listMovementsByReference: async () => {
      if (script.list instanceof Error) throw script.list;
      return script.list ?? [];
    },
    getCardAccount: async () => ({ movements: script.card ?? [] }),
  };
}

describe('a movement by its id', () => {
  test('when the ledger has it, then its word is answered, with a compensation another till made', async () => {
    const compensation = atLedger({ id: OTHER, kind: 'discharge', compensates: ID });
    const record = await movementById(
      engineOf([]),
      ledgerOf({ movement: atLedger({ state: 'voided', occurredAt: null }), card: [compensation] }),
      CALLER,
      ID,
    );
    assert.deepEqual(
      [record.state, record.atLedger, record.compensatedBy, record.amount, record.reference],
      ['voided', true, OTHER, 10, 'sale 1'],
    );
  });

  test('when the ledger does not have it yet, then the journal answers it, atLedger false, with when its write was proven', async () => {
    const record = await movementById(engineOf([journaled()]), ledgerOf({}), CALLER, ID);
    assert.deepEqual(record, {
      movementId: ID,
      kind: 'recharge',
      cardId: '04A1B2C3',
      credits: 20,
      amount: 10,
      reference: 'sale 1',
      tillId: TILL,
      state: 'pending',
      occurredAt: '2026-01-31T09:15:02.000Z',
      compensatedBy: null,
      atLedger: false,
    });
  });

  test('when the ledger cannot be asked, then the journal answers with atLedger null; a movement the journal does not know is the ledger’s error', async () => {
    const down = errors.ledgerUnavailable(new Error('refused'));
    const record = await movementById(
      engineOf([journaled({ resolved: 'posted' })]),
      ledgerOf({ movement: down }),
      CALLER,
      ID,
    );
    assert.deepEqual([record.state, record.atLedger], ['posted', null]);
    await assert.rejects(
      movementById(engineOf([]), ledgerOf({ movement: down }), CALLER, ID),
      down,
    );
  });

  test('when the journal’s movement was made with another key, or nobody has it, or the id is no UUID, then it is MovementNotFound', async () => {
    const theirs = engineOf([journaled({ keyFingerprint: 'another' })]);
    for (const [engine, id] of [
      [theirs, ID],
      [engineOf([]), ID],
      [engineOf([]), 'not-an-id'],
    ] as const) {
      await assert.rejects(movementById(engine, ledgerOf({}), CALLER, id), (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.deepEqual([error.status, error.code], [404, 'MovementNotFound']);
        return true;
      });
    }
  });
});

describe('movements by reference', () => {
  test('when the ledger has some and the journal one more, then all come once, newest first', async () => {
    const newer = journaled({ id: OTHER, startedAt: '2026-01-31T10:00:00.000Z', card: undefined });
    const found = await movementsByReference(
      engineOf([journaled(), newer, journaled({ id: 'x', reference: 'sale 2' })]),
      ledgerOf({ list: [atLedger()] }),
      CALLER,
      'sale 1',
    );
    assert.deepEqual(
      found.map((m) => [m.movementId, m.atLedger, m.state, m.occurredAt]),
      [
        [OTHER, false, 'pending', null],
        [ID, true, 'posted', '2026-01-31T09:15:02.000Z'],
      ],
    );
  });

  test('when the ledger cannot be asked, then the journal’s come with atLedger null, and with none the ledger’s error', async () => {
    const down = errors.ledgerUnavailable(new Error('refused'));
    const found = await movementsByReference(
      engineOf([journaled()]),
      ledgerOf({ list: down }),
      CALLER,
      'sale 1',
    );
    assert.deepEqual(
      found.map((m) => m.atLedger),
      [null],
    );
    await assert.rejects(
      movementsByReference(engineOf([]), ledgerOf({ list: down }), CALLER, 'sale 1'),
      down,
    );
  });
});
