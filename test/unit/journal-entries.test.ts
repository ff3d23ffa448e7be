/**
 * The movement journal's lines and their fold (service/wallet/journal-entries.ts), on their own:
 * what each line makes of a movement, field by field (a field without a value is left out, not
 * kept as undefined), a line of a movement the journal does not hold, a flag a later line takes
 * back, and the lines compaction writes for a movement, each exactly, folding back the same.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  entriesOf,
  foldEntry,
  occurredAtOf,
  type MovementEntry,
  type Movement,
} from '../../service/wallet/journal-entries.ts';

const at = '2026-11-26T10:00:00.000Z';
const later = '2026-11-26T10:00:05.000Z';
const intent = { slot: 1 as const, value: 30, generation: 7, previousBalance: 20 };
const idempotency = { scope: 'fp-1:pos-1', requestHash: 'h1' };
const float = {
  floatId: 'float-1',
  seq: 3,
  credits: 12,
  creditCost: '0.50',
  cardBefore: 'classic:v1:x',
  bonusCredits: 2,
};

function fold(entries: MovementEntry[]): Map<string, Movement> {
  const movements = new Map<string, Movement>();
  for (const entry of entries) foldEntry(movements, entry);
  return movements;
}

/** Every optional field of a started line, each with a value the movement keeps. */
const everyOptional = {
  idempotency,
  compensates: 'm0',
  credits: 4,
  adopted: true,
  float,
  reference: 'receipt-7',
  refunds: 'm-1',
};

const started = (extra: Partial<Extract<MovementEntry, { type: 'started' }>> = {}) =>
  ({
    type: 'started',
    id: 'm1',
    kind: 'recharge',
    cardId: '04A1',
    keyFingerprint: 'fp-1',
    at,
    ...extra,
  }) as const;

/**
 * The lines of a movement that holds every field: one of each type, in the order compaction
 * writes them (fresh objects on each call).
 */
function everyLine() {
  return {
    started: started(everyOptional),
    reserved: {
      type: 'reserved',
      id: 'm1',
      credits: 12,
      amount: '5.00',
      bonusCredits: 2,
      intent,
      at,
    },
    card: {
      type: 'card',
      id: 'm1',
      outcome: 'committed',
      torn: true,
      learnt: true,
      byLedger: true,
      at: later,
    },
    resolved: { type: 'resolved', id: 'm1', state: 'posted', at },
    reported: { type: 'reported', id: 'm1', at },
    answered: {
      type: 'answered',
      id: 'm1',
      status: 200,
      body: { cardId: '04A1', credits: 30 },
      at: later,
    },
    conflict: { type: 'conflict', id: 'm1', detail: 'refused', at },
  } as const satisfies Record<string, MovementEntry>;
}

describe('foldEntry', () => {
  test('when a plain movement starts, then it holds its id, kind, card, key and start, and no field it was not given', () => {
    assert.deepEqual(fold([started()]).get('m1'), {
      id: 'm1',
      kind: 'recharge',
      cardId: '04A1',
      keyFingerprint: 'fp-1',
      idempotency: undefined,
      startedAt: at,
    });
  });

  test('when a movement starts with every optional field, then it holds each of them', () => {
    const movement = fold([started(everyOptional)]).get('m1');
    assert.deepEqual(movement, {
      id: 'm1',
      kind: 'recharge',
      cardId: '04A1',
      keyFingerprint: 'fp-1',
      ...everyOptional,
      startedAt: at,
    });
  });

  test('when a movement starts with adopted false and an empty reference, then adopted is left out and the reference kept', () => {
    const movement = fold([started({ adopted: false, reference: '' })]).get('m1');
    assert.equal(movement?.reference, '');
    assert.equal('adopted' in (movement ?? {}), false);
  });

  test('when a reservation has a bonus, then the movement holds it; a bonus of 0 is left out', () => {
    const withBonus = fold([started(), everyLine().reserved]).get('m1');
    assert.deepEqual(withBonus?.reserved, { credits: 12, amount: '5.00', bonusCredits: 2, intent });
    const noBonus = fold([
      started(),
      { type: 'reserved', id: 'm1', credits: 10, amount: '5.00', bonusCredits: 0, intent, at },
    ]).get('m1');
    assert.deepEqual(noBonus?.reserved, { credits: 10, amount: '5.00', intent });
  });

  test('when the card line says learnt or decided by the ledger, then the movement says so, and a later card line without them takes them back; torn stays', () => {
    const movements = fold([started(), { ...everyLine().card, outcome: 'not-written', at }]);
    const movement = movements.get('m1') as Movement;
    assert.deepEqual(
      {
        card: movement.card,
        cardAt: movement.cardAt,
        torn: movement.torn,
        learnt: movement.learnt,
        byLedger: movement.byLedger,
      },
      { card: 'not-written', cardAt: at, torn: true, learnt: true, byLedger: true },
    );
    foldEntry(movements, { type: 'card', id: 'm1', outcome: 'committed', at: later });
    assert.deepEqual(
      {
        card: movement.card,
        cardAt: movement.cardAt,
        torn: movement.torn,
        learnt: 'learnt' in movement,
        byLedger: 'byLedger' in movement,
      },
      { card: 'committed', cardAt: later, torn: true, learnt: false, byLedger: false },
    );
  });

  test('when a card line has no flags, then the movement gets none', () => {
    const movement = fold([
      started(),
      { type: 'card', id: 'm1', outcome: 'committed', torn: false, at },
    ]).get('m1') as Movement;
    assert.deepEqual(
      ['torn', 'learnt', 'byLedger'].filter((flag) => flag in movement),
      [],
    );
  });

  test('when the ledger answers, the caller is answered, a conflict or an undecided report is journaled, then the movement holds each', () => {
    const line = everyLine();
    const movement = fold([
      started(),
      { ...line.resolved, state: 'voided' },
      line.answered,
      line.conflict,
      line.reported,
    ]).get('m1');
    assert.deepEqual(
      {
        resolved: movement?.resolved,
        answer: movement?.answer,
        conflict: movement?.conflict,
        reportedUndecided: movement?.reportedUndecided,
      },
      {
        resolved: 'voided',
        answer: { status: 200, body: { cardId: '04A1', credits: 30 }, at: later },
        conflict: 'refused',
        reportedUndecided: true,
      },
    );
  });

  test('when a line names a movement the journal does not hold, then it is dropped and nothing else changes', () => {
    const movements = fold([started()]);
    const before = structuredClone(movements.get('m1'));
    for (const entry of [
      { type: 'reserved', id: 'm9', credits: 1, amount: '1', at },
      { type: 'card', id: 'm9', outcome: 'committed', at },
      { type: 'resolved', id: 'm9', state: 'posted', at },
      { type: 'answered', id: 'm9', status: 200, body: {}, at },
      { type: 'conflict', id: 'm9', detail: 'x', at },
      { type: 'reported', id: 'm9', at },
    ] as MovementEntry[]) {
      foldEntry(movements, entry);
    }
    assert.deepEqual([...movements.keys()], ['m1']);
    assert.deepEqual(movements.get('m1'), before);
  });
});

describe('occurredAtOf', () => {
  test('when the card write was proven, then the movement happened then; a compensation (no write) when it started', () => {
    const movement = fold([started()]).get('m1') as Movement;
    assert.equal(occurredAtOf(movement), at);
    movement.cardAt = later;
    assert.equal(occurredAtOf(movement), later);
  });
});

describe('entriesOf', () => {
  test('when a movement holds every field, then compaction writes each line exactly, and they fold back the same movement', () => {
    const line = everyLine();
    const lines: MovementEntry[] = [
      line.started,
      line.reserved,
      line.card,
      line.resolved,
      line.reported,
      line.answered,
      line.conflict,
    ];
    const movement = fold(lines).get('m1') as Movement;
    const compacted = entriesOf(movement);
    assert.deepEqual(compacted, lines);
    assert.deepEqual(fold(compacted as MovementEntry[]).get('m1'), movement);
  });

  test('when a movement holds only its start, then compaction writes one started line without the fields it has not', () => {
    const movement = fold([started()]).get('m1') as Movement;
    assert.deepEqual(entriesOf(movement), [
      {
        type: 'started',
        id: 'm1',
        kind: 'recharge',
        cardId: '04A1',
        keyFingerprint: 'fp-1',
        idempotency: undefined,
        at,
      },
    ]);
  });

  test('when a card line has no flags, or its time is lost, then compaction writes it without flags, at the start', () => {
    const movement = fold([
      started(),
      { type: 'card', id: 'm1', outcome: 'not-written', at: later },
    ]).get('m1') as Movement;
    assert.deepEqual(entriesOf(movement)[1], {
      type: 'card',
      id: 'm1',
      outcome: 'not-written',
      at: later,
    });
    delete movement.cardAt;
    assert.deepEqual(entriesOf(movement)[1], {
      type: 'card',
      id: 'm1',
      outcome: 'not-written',
      at,
    });
  });

  test('when a compensation was refused with an empty detail, then its conflict line is kept', () => {
    const movement = fold([
      started({ compensates: 'm0', credits: 4 }),
      { type: 'conflict', id: 'm1', detail: '', at },
    ]).get('m1') as Movement;
    assert.deepEqual(entriesOf(movement).at(-1), { type: 'conflict', id: 'm1', detail: '', at });
  });
});
