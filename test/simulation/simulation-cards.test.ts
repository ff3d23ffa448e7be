import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './run-seeds.ts';

// The shop simulation with bonus tiers and the cashier's undo in CI (card-scenarios.ts,
// docs/testing.md, "Bonuses and undos"): a fixed range of seeds, the same every run, which must
// hold every invariant and reach every path below. SIMULATION_CARDS_FROM and
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

test(`when seeds ${fixed.from}..${fixed.from + fixed.count - 1} of the shop with bonus tiers and undos run, then every invariant holds and every undo path is reached`, async (t) => {
  const lines: string[] = [];
  const paths = new Map<string, number>();
  const failures = await runSeeds(fixed.from, fixed.count, {
    cards: true,
    print: (line) => lines.push(line),
    paths,
  });
  t.diagnostic(
    [...paths]
      .filter(([path]) => path.startsWith('undo-') || path.startsWith('bonus-'))
      .map(([path, n]) => `${path} ${n}`)
      .join(', '),
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
  const missed = MUST_REACH.filter((path) => !paths.has(path));
  assert.deepEqual(missed, [], `never reached: ${missed.join(', ')}`);
});
