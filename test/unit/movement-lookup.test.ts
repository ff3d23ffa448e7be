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

describe('a movement by its id, in detail', () => {
  /** The refusal's code and detail (fails, showing the record, when one is answered). */
  const refusal = (run: Promise<unknown>) =>
    run.then(
      (record) => assert.fail(`answered ${JSON.stringify(record)}`),
      (error: unknown) =>
        error instanceof AppError
          ? { code: error.code, detail: error.detail }
          : { not: String(error) },
    );

  test('when the id is not exactly a UUID (text before or after it), then MovementNotFound saying so, without asking the ledger', async () => {
    const asked: string[] = [];
    const ledger = {
      ...ledgerOf({ movement: atLedger() }),
      getMovement: async (_key: string, id: string) => {
        asked.push(id);
        return atLedger();
      },
    };
    const engine = engineOf([journaled()]);
    for (const id of [`x${ID}`, `${ID}x`, 'not-an-id']) {
      assert.deepEqual(await refusal(movementById(engine, ledger, CALLER, id)), {
        code: 'MovementNotFound',
        detail: `${id}: not a movement id (a UUID)`,
      });
    }
    assert.deepEqual(asked, []);
  });

  test('when neither the ledger nor the journal has it, then MovementNotFound saying so', async () => {
    assert.deepEqual(await refusal(movementById(engineOf([]), ledgerOf({}), CALLER, ID)), {
      code: 'MovementNotFound',
      detail: `no movement ${ID} at this till or the ledger`,
    });
  });

  test('when the ledger refuses otherwise (not MovementNotFound), then the journal answers with atLedger null; without it, the refusal', async () => {
    const refused = new LedgerRefusal(403, 'Forbidden');
    const record = await movementById(
      engineOf([journaled()]),
      ledgerOf({ movement: refused }),
      CALLER,
      ID,
    );
    assert.equal(record.atLedger, null, JSON.stringify(record));
    await assert.rejects(
      movementById(engineOf([]), ledgerOf({ movement: refused }), CALLER, ID),
      refused,
    );
  });

  test('when the id is a movement of another kind at the ledger (a refund), then MovementNotFound naming its kind', async () => {
    const ledger = ledgerOf({ movement: atLedger({ kind: 'refund' }) });
    assert.deepEqual(await refusal(movementById(engineOf([]), ledger, CALLER, ID)), {
      code: 'MovementNotFound',
      detail: `${ID}: a refund at the ledger, not a recharge or payout`,
    });
  });

  test('when the journal has it voided or absent and the ledger does not, then its state is voided', async () => {
    const states = [];
    for (const resolved of ['voided', 'absent', 'posted', undefined] as const) {
      const record = await movementById(
        engineOf([journaled({ resolved })]),
        ledgerOf({}),
        CALLER,
        ID,
      );
      states.push(record.state);
    }
    assert.deepEqual(states, ['voided', 'voided', 'posted', 'pending']);
  });

  test("when the ledger has a time the write happened, then that one; the journal's proof only without it", async () => {
    const engine = engineOf([journaled({ cardAt: '2026-01-31T09:15:09.000Z' })]);
    const ledgers = await movementById(engine, ledgerOf({ movement: atLedger() }), CALLER, ID);
    const journals = await movementById(
      engine,
      ledgerOf({ movement: atLedger({ occurredAt: null }) }),
      CALLER,
      ID,
    );
    assert.deepEqual(
      [ledgers.occurredAt, journals.occurredAt],
      ['2026-01-31T09:15:02.000Z', '2026-01-31T09:15:09.000Z'],
    );
  });

  test("when the card's movements are asked for a compensation, then only for a decided movement that is not one itself and whose compensation the journal does not know; only the one compensating it counts", async () => {
    const asked: string[] = [];
    const lookup = async (
      movement: LedgerMovement,
      card: LedgerMovement[],
      compensations: Record<string, string> = {},
    ) => {
      const ledger = {
        ...ledgerOf({ movement }),
        getCardAccount: async (_key: string, cardId: string) => {
          asked.push(`${movement.state} ${movement.compensates ?? '-'} ${cardId}`);
          return { movements: card };
        },
      };
      return (await movementById(engineOf([], compensations), ledger, CALLER, ID)).compensatedBy;
    };
    const theirs = atLedger({ id: OTHER, kind: 'discharge', compensates: ID.toUpperCase() });
    const unrelated = atLedger({
      id: '0b7a6f0e-5a6e-4c39-9a48-6f5c1e1d0a04',
      kind: 'discharge',
      compensates: null,
    });
    const found = await lookup(atLedger(), [unrelated, theirs]);
    const none = await lookup(atLedger(), [unrelated]);
    const pending = await lookup(atLedger({ state: 'pending' }), [theirs]);
    const itself = await lookup(atLedger({ compensates: OTHER }), [theirs]);
    const known = await lookup(atLedger(), [], { [ID]: 'journal-compensation' });
    assert.deepEqual(
      { found, none, pending, itself, known, asked },
      {
        found: OTHER,
        none: null,
        pending: null,
        itself: null,
        known: 'journal-compensation',
        asked: ['posted - 04A1B2C3', 'posted - 04A1B2C3'],
      },
    );
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
