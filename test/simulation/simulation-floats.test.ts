import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './run-seeds.ts';

// The shop simulation with till floats in CI (float-scenarios.ts, docs/testing.md, "The till
// float"): a fixed range of seeds, the same every run, which must hold every invariant and
// reach every path below. A seed takes about a second (the tills' float timing slows with the
// seed's longest outage, so a day-long outage costs a few hundred probes). SIMULATION_FLOAT_FROM
// and SIMULATION_FLOAT_SEEDS move the range; more on demand: npm run simulate -- --floats.
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const fixed = { from: env('SIMULATION_FLOAT_FROM', 1), count: env('SIMULATION_FLOAT_SEEDS', 60) };

/**
 * Item 8 of the float's issue, each at least once: outages (seconds to days), sales from the
 * float online and offline, a till dying with unreported float recharges or losing its disk
 * (then selling nothing from its old float until an operator closes it), cards carried to
 * another till while their float recharge is unreported, a top-up asked again (its answer lost
 * or its till restarted), an operator closing a lost float, and each offline bound refusing:
 * the offline time limit expired, the cap per recharge, the card types, a payout offline.
 * MIFARE Classic cards sold from the float (their spare block, docs/card-format.md section 6a):
 * a float reference landed, one torn, one cleared by a later write of its generation, one read
 * back at another till (found there), and a landed recharge nobody can report any more (its
 * till lost its journal, a later write replaced its reference) counted by its closed float's
 * write-off (seed 23).
 */
const MUST_REACH = [
  'float-outage',
  'float-sold-online',
  'float-sold-offline',
  'float-till-died',
  'float-till-lost-disk',
  'float-refused-awaits-close',
  'float-card-carried',
  'float-top-up-asked-again',
  'float-closed-by-operator',
  'float-refused-limit',
  'float-refused-cap',
  'float-refused-card-type',
  'float-payout-refused-offline',
  'classic-reference-landed',
  'classic-reference-torn',
  'classic-reference-cleared',
  'float-classic-reference-read-elsewhere',
  'float-written-off-unseen',
];

test(`when seeds ${fixed.from}..${fixed.from + fixed.count - 1} of the shop with till floats run, then every invariant holds and every float path is reached`, async (t) => {
  const lines: string[] = [];
  const paths = new Map<string, number>();
  const failures = await runSeeds(fixed.from, fixed.count, {
    floats: true,
    print: (line) => lines.push(line),
    paths,
  });
  t.diagnostic(
    [...paths]
      .filter(([path]) => path.startsWith('float-') || path.startsWith('classic-reference'))
      .map(([path, n]) => `${path} ${n}`)
      .join(', '),
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
  const missed = MUST_REACH.filter((path) => !paths.has(path));
  assert.deepEqual(missed, [], `never reached: ${missed.join(', ')}`);
});

/**
 * Float seeds beyond the range run every time, each for what it caught (docs/testing.md, "What
 * the float seeds found").
 */
const KEPT_FLOAT_SEEDS = [
  // A float recharge voided without its card, which held it, compensated when the card was
  // read: counted as credits no book counts (defects of the simulation).
  70, 115,
  // The book off by a compensation created and not yet posted (a defect of the simulation).
  90,
  // Found by a fresh range: an offline till noted "the ledger answered" whenever a sync
  // resolved the shop from what it knew, and sold past the offline time limit.
  389428875,
  // A DESFire float recharge voided without its card, which held it, taken as not shown because
  // another till's float sale followed it: never set right.
  769750810,
  // A float sale undecided at its till (the card left mid-write), found on the card by another
  // till; its own report answered posted was journaled done without its card's word, and its
  // Idempotency-Key, sent again after a restart with the card back, sold a second time.
  389428887,
  // A float recharge sold onto another shop's card by a till that then lost its disk: that
  // shop's tills may not count it (other-shop), the write-off of the float must hold it, and
  // the card brought back to the float's shop is found there (a defect of the simulation).
  635123118,
  // Found by a fresh range: a recharge (917000181) or payout (917000521) an operator posted
  // without its card, which held it, corrected in the book as if voided while the card was
  // awaited (a defect of the simulation).
  917000181, 917000521,
  // Classic cards sold from floats: an undecided float sale, another till's write at the
  // generation it planned (96: a till of its shop, from its float; 116: a till of another
  // shop), voided by the operator without the card, and the card held until the operator
  // settles it at a till (a request there is sold from a float, past the ledger).
  96, 116,
  // A pool recharge's create that reached the ledger after a payout, flagging the card above
  // its account with the credits read before, then voided: no float recharge's fault.
  150,
  // Found by a fresh range: a Classic payout voided by an operator (the card reported lost),
  // whose write had landed, and another till's float sale over it; the payout's till took the
  // void, as another write followed. That sale's cardBefore, the state only the payout leaves,
  // is the card's word that it landed.
  918000141,
];

test('when the kept float seeds run again, then every invariant holds', async () => {
  const lines: string[] = [];
  const failures = [];
  for (const seed of KEPT_FLOAT_SEEDS) {
    failures.push(
      ...(await runSeeds(seed, 1, { floats: true, print: (line) => lines.push(line) })),
    );
  }
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});
