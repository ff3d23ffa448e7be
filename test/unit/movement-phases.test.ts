/**
 * The money engine's pure decisions: where a movement stands, what to do with one the ledger
 * holds pending, what a refusal proves, what sets a disagreement right, and when an answer may
 * be replayed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import {
  balanceAfterWrite,
  compensationFor,
  compensationOfWrite,
  decidePending,
  phaseOf,
  replayable,
  settledByRefusal,
} from '../../service/wallet/movement-phases.ts';

const intent = { slot: 1 as const, value: 0, generation: 2, previousBalance: 30 };
const base: Movement = {
  id: 'm1',
  kind: 'discharge',
  cardId: '04A1B2C3',
  keyFingerprint: 'k1',
  startedAt: '2024-01-01T00:00:00.000Z',
};
const reserved = { credits: 30, amount: '15.00', intent };
const movement = (fields: Partial<Movement>): Movement => ({ ...base, ...fields });
const compensating = (fields: Partial<Movement>): Movement =>
  movement({ id: 'c1', compensates: 'm1', credits: 30, ...fields });

describe('phaseOf', () => {
  test('when the journal says where a movement stands, then its phase', () => {
    const cases: [Partial<Movement>, string][] = [
      [{}, 'to-void'],
      [{ reserved }, 'uncertain'],
      [{ reserved, card: 'committed' }, 'to-post'],
      [{ reserved, card: 'not-written' }, 'to-void'],
      [{ card: 'not-written' }, 'to-void'],
      [{ reserved, card: 'committed', resolved: 'posted' }, 'done'],
      [{ resolved: 'absent' }, 'done'],
    ];
    for (const [fields, phase] of cases) {
      assert.equal(phaseOf(movement(fields)), phase, JSON.stringify(fields));
    }
  });

  test('when a compensating movement is not answered yet, then to-create; answered, it is posted (it writes no card) or voided as journaled', () => {
    assert.equal(phaseOf(compensating({})), 'to-create');
    assert.equal(phaseOf(compensating({ reserved, card: 'committed' })), 'to-post');
    assert.equal(phaseOf(compensating({ card: 'not-written' })), 'to-void');
    // Created at the ledger, then a crash before its card line: no card can decide it, and none
    // needs to (the card already holds what it records).
    assert.equal(phaseOf(compensating({ reserved })), 'to-post');
    assert.equal(phaseOf(compensating({ resolved: 'posted' })), 'done');
  });
});

describe('decidePending', () => {
  const THIS = 'till-1';
  const decide = (
    known: Movement | undefined,
    fields: Partial<Parameters<typeof decidePending>[0]> = {},
  ) =>
    decidePending({
      movement: known,
      owned: false,
      tillId: THIS,
      thisTill: THIS,
      hasEvidence: true,
      ...fields,
    });

  test('when a running request owns the movement, then only it resolves it', () => {
    assert.equal(decide(movement({ reserved, card: 'committed' }), { owned: true }), 'owned');
    assert.equal(decide(undefined, { owned: true, tillId: 'till-2' }), 'owned');
  });

  test("when the journal does not know the movement, then another till's (or a nameless one) is shown; this till's is adopted on evidence, else an operator's", () => {
    assert.equal(decide(undefined, { tillId: 'till-2' }), 'other-till');
    assert.equal(decide(undefined, { tillId: null }), 'other-till');
    assert.equal(decide(undefined), 'adopt');
    assert.equal(decide(undefined, { hasEvidence: false }), 'operator');
  });

  test('when the journal knows it, then its phase decides: post, void, wait for the card, or say the resolution again', () => {
    assert.equal(decide(movement({ reserved, card: 'committed' })), 'post');
    assert.equal(decide(movement({ reserved, card: 'not-written' })), 'void');
    assert.equal(decide(movement({ reserved })), 'wait-for-card');
    assert.equal(decide(compensating({})), 'post');
    assert.equal(decide(movement({ reserved, card: 'committed', resolved: 'posted' })), 'post');
    assert.equal(decide(movement({ reserved, card: 'not-written', resolved: 'voided' })), 'void');
    assert.equal(decide(movement({ resolved: 'absent' })), 'void');
    // Known to the journal, the till named at the ledger does not matter.
    assert.equal(decide(movement({ reserved }), { tillId: 'till-2' }), 'wait-for-card');
  });
});

describe('settledByRefusal', () => {
  const refusal = (code: string) => new LedgerRefusal(409, code);
  test('when the ledger refuses because the movement is already resolved, then where it stands', () => {
    assert.equal(settledByRefusal(refusal('MovementAlreadyPosted'), 'void'), 'posted');
    assert.equal(settledByRefusal(refusal('MovementAlreadyVoided'), 'post'), 'voided');
  });

  test('when a void finds no movement, then absent for good (a tombstone); a post that finds none proves nothing', () => {
    assert.equal(settledByRefusal(refusal('MovementNotFound'), 'void'), 'absent');
    assert.equal(settledByRefusal(refusal('MovementNotFound'), 'post'), undefined);
  });

  test('when a void is refused for any reason but a missing movement, then it is not taken as absent', () => {
    // A void refused as another till's, or for a key the ledger no longer takes, says nothing
    // about whether the movement exists: taking it as absent would drop a movement it holds.
    for (const code of [
      'MovementOfAnotherTill',
      'KeyNotAssigned',
      'Unauthorized: invalid api key',
    ]) {
      assert.equal(settledByRefusal(refusal(code), 'void'), undefined, code);
    }
  });

  test('when the failure is another refusal, or no refusal at all, then it proves nothing', () => {
    assert.equal(settledByRefusal(refusal('MovementOfAnotherTill'), 'post'), undefined);
    assert.equal(settledByRefusal(errors.ledgerUnavailable(), 'void'), undefined);
    assert.equal(settledByRefusal(new Error('MovementAlreadyPosted'), 'void'), undefined);
  });
});

describe('compensationFor', () => {
  test('when the card holds the write but the ledger did not post it, then the same movement again', () => {
    for (const ledger of ['voided', 'absent'] as const) {
      assert.deepEqual(compensationFor(movement({ reserved, card: 'committed' }), ledger), {
        kind: 'discharge',
        credits: 30,
      });
    }
    assert.deepEqual(
      compensationFor(movement({ kind: 'recharge', reserved, card: 'committed' }), 'voided'),
      { kind: 'recharge', credits: 30 },
    );
  });

  test('when the ledger posted a write the card does not hold, then the other kind', () => {
    assert.deepEqual(compensationFor(movement({ reserved, card: 'not-written' }), 'posted'), {
      kind: 'recharge',
      credits: 30,
    });
    assert.deepEqual(
      compensationFor(movement({ kind: 'recharge', reserved, card: 'not-written' }), 'posted'),
      { kind: 'discharge', credits: 30 },
    );
  });

  test('when the card and the ledger agree, or nothing was reserved, or it is a compensation itself, then none', () => {
    assert.equal(compensationFor(movement({ reserved, card: 'committed' }), 'posted'), undefined);
    for (const ledger of ['voided', 'absent'] as const) {
      assert.equal(compensationFor(movement({ reserved, card: 'not-written' }), ledger), undefined);
    }
    assert.equal(compensationFor(movement({ card: 'not-written' }), 'posted'), undefined);
    assert.equal(compensationFor(movement({ reserved }), 'voided'), undefined);
    assert.equal(
      compensationFor(compensating({ reserved, card: 'committed' }), 'voided'),
      undefined,
    );
  });
});

describe("compensationOfWrite, a card's own movements", () => {
  const kinds = ['refund', 'correction', 'replacement', 'block-clear'] as const;
  test('when the ledger voided a write its card holds, then a movement of the same kind redoes it', () => {
    for (const kind of kinds) {
      assert.deepEqual(compensationOfWrite({ kind, credits: 7, card: 'committed' }, 'voided'), {
        kind,
        credits: 7,
      });
    }
  });

  test('when the ledger posted a write its card does not hold, then a movement of the same kind undoes it', () => {
    for (const kind of kinds) {
      assert.deepEqual(compensationOfWrite({ kind, credits: 7, card: 'not-written' }, 'posted'), {
        kind,
        credits: 7,
      });
    }
  });

  test('when the card agrees, cannot tell, or the ledger never held the write, then none', () => {
    for (const kind of kinds) {
      for (const [card, ledger] of [
        ['committed', 'posted'],
        ['not-written', 'voided'],
        ['not-written', 'absent'],
        ['committed', 'absent'],
        [undefined, 'posted'],
        [undefined, 'voided'],
      ] as const) {
        assert.equal(
          compensationOfWrite({ kind, credits: 7, card }, ledger),
          undefined,
          `${kind} ${card} ${ledger}`,
        );
      }
    }
  });
});

describe('replayable', () => {
  test('when the ledger posted the movement, or the compensation of a write the card holds, then the answer may be replayed; otherwise not', () => {
    assert.equal(
      replayable(movement({ reserved, card: 'committed', resolved: 'posted' }), undefined),
      true,
    );
    const landed = movement({ reserved, card: 'committed', resolved: 'voided' });
    assert.equal(replayable(landed, undefined), false);
    assert.equal(replayable(landed, compensating({ resolved: 'posted' })), true);
    assert.equal(replayable(landed, compensating({ resolved: 'voided' })), false);
    assert.equal(replayable(landed, compensating({})), false);
    const missed = movement({ reserved, card: 'not-written', resolved: 'posted' });
    assert.equal(
      replayable({ ...missed, resolved: 'voided' }, compensating({ resolved: 'posted' })),
      false,
    );
    assert.equal(replayable(movement({ reserved, card: 'committed' }), undefined), false);
  });
});

describe('balanceAfterWrite', () => {
  test('when a write of each kind is planned from 30 credits, then a recharge or replacement adds 7, an undo or correction takes 7 off, a payout or block-clear leaves 0', () => {
    const kinds = [
      'recharge',
      'replacement',
      'refund',
      'correction',
      'discharge',
      'block-clear',
    ] as const;
    assert.deepEqual(
      kinds.map((kind) => [kind, balanceAfterWrite(kind, 30, 7)]),
      [
        ['recharge', 37],
        ['replacement', 37],
        ['refund', 23],
        ['correction', 23],
        ['discharge', 0],
        ['block-clear', 0],
      ],
    );
  });
});
