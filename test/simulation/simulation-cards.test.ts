import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './run-seeds.ts';

// The shop simulation with bonus tiers, the cashier's undo, blocked cards and replacements in CI
// (card-scenarios.ts, block-scenarios.ts; docs/testing.md, "Bonuses and undos", "Blocks and
// replacements"): a fixed range of seeds, the same every run, which must hold every invariant
// and reach every path below. SIMULATION_CARDS_FROM and
// SIMULATION_CARDS_SEEDS move the range; more on demand: npm run simulate -- --cards.
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const fixed = { from: env('SIMULATION_CARDS_FROM', 1), count: env('SIMULATION_CARDS_SEEDS', 150) };

/**
 * A bonus given by the ledger's tiers; undos answered, replayed by their Idempotency-Key, and
 * refused: undone already, no longer the card's newest write, past the shop's window, another
 * card on the reader, another till's recharge, the card pulled during the write, the ledger
 * out of reach.
 */
const MUST_REACH = [
  'bonus-given',
  'undo-refunded',
  // Blocks and replacements: a block, its found card refused by a till's list and by the
  // ledger, emptied; a replacement picked up, at two tills at once, one refused as taken.
  'card-blocked',
  'blocked-card-found',
  'blocked-refused-by-list',
  'blocked-refused-by-ledger',
  'blocked-card-emptied',
  'card-replaced',
  'new-card-at-two-tills',
  'replacement-picked-up',
  'ledger-refused-CardChangeTaken',
  'ledger-refused-CardBlocked',
  'undo-replayed',
  ...[
    'AlreadyUndone',
    'UndoNotNewest',
    'UndoWindowPassed',
    'UndoOfAnotherCard',
    'UndoOfAnotherTill',
    'CardRemovedDuringWrite',
    'LedgerUnavailable',
  ].map((code) => `undo-refused-${code}`),
];

test(`when seeds ${fixed.from}..${fixed.from + fixed.count - 1} of the shop with bonus tiers, undos, blocks and replacements run, then every invariant holds and every path is reached`, async (t) => {
  const lines: string[] = [];
  const paths = new Map<string, number>();
  const failures = await runSeeds(fixed.from, fixed.count, {
    cards: true,
    print: (line) => lines.push(line),
    paths,
  });
  t.diagnostic(
    [...paths]
      .filter(([path]) => MUST_REACH.includes(path) || path.startsWith('undo-'))
      .map(([path, n]) => `${path} ${n}`)
      .join(', '),
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
  const missed = MUST_REACH.filter((path) => !paths.has(path));
  assert.deepEqual(missed, [], `never reached: ${missed.join(', ')}`);
});

/**
 * Seeds found by fresh ranges, kept as they failed (each with what it found); they run with the
 * fixed range's settings.
 */
const KEPT = [
  // A pickup the replacements' last round left pending (the new card pulled from its till
  // mid-write at two tills at once) was never decided: the liveness probe took the card to
  // another till, which answered MovementPendingAtOtherTill. The probe now takes a card to the
  // till its movement is pending at, as that answer tells the cashier (a simulation defect).
  389428842,
];

test('when the kept card seeds run, then every invariant holds', async () => {
  const lines: string[] = [];
  let failed = 0;
  for (const seed of KEPT) {
    failed += (await runSeeds(seed, 1, { cards: true, print: (line) => lines.push(line) })).length;
  }
  assert.equal(failed, 0, lines.slice(0, 60).join('\n'));
});
