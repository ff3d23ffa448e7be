import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rangeCommand, runSeeds } from './run-seeds.ts';

// The shop simulation in CI (world.ts): a fixed range of seeds, the same every run, which must
// also reach every path listed below; and a fresh range, new every run, whose start is printed
// with the command that replays it. SIMULATION_FROM and SIMULATION_SEEDS move the fixed range;
// SIMULATION_FRESH_FROM, SIMULATION_FRESH_SEEDS and SIMULATION_FRESH_SECONDS (its time budget:
// it stops early, saying how far it got) the fresh one. More on demand: npm run simulate.
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const fixed = { from: env('SIMULATION_FROM', 1), count: env('SIMULATION_SEEDS', 1_500) };
const fresh = {
  from: env('SIMULATION_FRESH_FROM', 1_000_000 + Math.floor(Math.random() * 1_000_000_000)),
  count: env('SIMULATION_FRESH_SEEDS', 500),
  seconds: env('SIMULATION_FRESH_SECONDS', 60),
};

/**
 * Paths a run that never reaches does not test (world.ts counts them): the card decisions, the
 * torn-first-write proof, corrupt cards, the wrap-around, writes landing after a crash, DESFire
 * cards' commits (torn before and after, landing after a crash), their decisions, cards leaving
 * them at any command, another shop's keys refused, machines debiting them, torn
 * journal lines, lost disks and adopted movements, compensations, replays, operators, offline
 * spending, key changes, creates refused after an unanswered try (one of them landing after the
 * refusal), and every fate of a ledger call. Then the callers' retries: Idempotency-Keys sent
 * again across restarts (replayed after one), with another card on the reader (refused), after
 * the card was carried to another till; restarts that compact the journal, and a night that
 * ages its answers past retention; cards carried away while a till works on them, a lost card
 * found at two tills; and the ledger's rules that refuse a create, each at least once.
 */
const MUST_REACH = [
  'decided-committed',
  'decided-not-written',
  'decided-torn-first-write',
  'decided-unknown',
  'read-corrupt',
  'read-torn-proof-as-blank',
  'wrote-generation-wrap',
  'landed-after-crash',
  'journal-torn-tail',
  'disk-lost',
  'adopted',
  'compensation-posted',
  'replayed-answer',
  'voided-card-lost',
  'settled-at-another-till',
  'operator-word-decided-by-card',
  'operator-decided',
  'spent-offline',
  'desfire-committed',
  'desfire-commit-pulled-before',
  'desfire-commit-pulled-after',
  'desfire-landed-after-crash',
  'desfire-decided-committed',
  'desfire-decided-not-written',
  'desfire-pulled-at-command',
  'desfire-refused-other-keys',
  'desfire-spent-offline',
  'desfire-machine-pulled',
  'key-replaced',
  'key-to-other-shop',
  'create-refused-after-unanswered-try',
  'create-landed-after-its-refusal',
  'forced-restart',
  'compaction-dropped',
  'night',
  'retried-after-restart',
  'replayed-after-restart',
  'retried-with-other-card',
  'refused-other-card',
  'retried-after-card-moved',
  'card-hopped-back',
  'lost-card-found-at-two-tills',
  ...['CardStateMovedOn', 'MovementCompensated', 'CardMovementPending', 'CardAccountExceeded'].map(
    (code) => `ledger-refused-${code}`,
  ),
  ...[
    'refused',
    'lostRequest',
    'lostAnswer',
    'late',
    'duplicate',
    'slow',
    'unavailable',
    'badGateway',
    'throttled',
  ].map((fate) => `network-${fate}`),
];

test(`when seeds ${fixed.from}..${fixed.from + fixed.count - 1} of the whole shop run, then every invariant holds and every path is reached`, async (t) => {
  const lines: string[] = [];
  const paths = new Map<string, number>();
  const failures = await runSeeds(fixed.from, fixed.count, {
    print: (line) => lines.push(line),
    paths,
  });
  t.diagnostic(
    [...paths]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, n]) => `${path} ${n}`)
      .join(', '),
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
  const missed = MUST_REACH.filter((path) => !paths.has(path));
  assert.deepEqual(missed, [], `never reached: ${missed.join(', ')}`);
});

/**
 * Seeds run every time besides the ranges, each for what it catches (docs/testing.md, "In CI"
 * and "Defects put back"): seeds a fresh range once found failing, kept once the cause was
 * fixed, and the first seed to catch a defect put back that the fixed range misses.
 */
const KEPT_SEEDS = [
  // Found by a fresh range: a till that lost its journal posted a recharge whose write never
  // landed (same-write-counted-twice).
  262652687,
  // Found by a fresh range, a defect of the simulation: a request made with one shop's key, its
  // card write landing after the till got another shop's, counted as that other shop's.
  94258181,
  // A DESFire write decided without checking the movement its record names.
  2154,
  // An Idempotency-Key replay answered 200 before the ledger posted the movement.
  2554,
  // An adopted movement (its till's journal lost) that a crash left without its planned write,
  // voided unseen.
  8594,
  // Found by fresh ranges: an operator voided a payout without its card, which held the payout;
  // its till then lost its disk (4174), or moved to another shop whose keys do not open the
  // card (849029437). No till could compensate it: the card is now held until one reads it.
  4174, 849029437,
  // Found while measuring: a till's create reached the ledger late, after another till had read
  // the card in the same state and written it: the same block on the card, both were counted.
  9472,
  // Found while measuring, a defect of the simulation: its operator left a movement to its own
  // till, which had lost its disk and moved to another shop (so it never listed it again),
  // instead of settling it at a till of the shop.
  16307,
  // A movement its lost journal held, adopted with a key the till released meanwhile (found by
  // the callers' retries; adopted-with-released-key).
  5525,
  // Found by a fresh range: a lost card found holding a recharge an operator voided; its till
  // crashed between journaling what the card showed and the compensation, and a machine spent
  // from the card before another till could tell (compensation-after-card-line).
  815678990,
  // Found by fresh ranges, the same event: a machine spent from the found Classic card before
  // any till read it, so no card could tell the write any more (a documented blind spot); the
  // simulation's customers now present such a card at a till first.
  900000773, 901000382,
  // Found by a fresh range in CI: a till learnt an operator's void of its recharge; another till
  // read the found card, settled it, and recharged the same credits from the same balance; the
  // first till, seeing the card, took that write for its own and compensated a write that never
  // landed (learnt-decided-after-card-moved-on).
  28794162,
  // Found by a fresh range: a compensation created, never posted, its till's disk (and id)
  // lost; no till settled it (settle passed compensations by).
  642407481,
  // Found by a fresh range in CI: a till's payout tore and an operator voided it (the card
  // reported lost); another till, finding the card without it, paid it out from the same state;
  // the first till, seeing the card before it learnt the void, took that write for its own
  // (uncertain-decided-after-card-moved-on).
  689714656,
  // Found by a fresh range in CI: a key's recharge landed, an operator voided it (the card
  // reported lost), and its till, seeing the card spent from since, took the void; the key sent
  // again ran again before another till's compensation of the void reached the ledger
  // (key-runs-after-void-unseen).
  959995826,
  // Found by a fresh range in CI, a defect of the simulation: with shops sharing keys, a card
  // held for an operator's void without it (awaitsCard) was recharged at the other shop, which
  // the ledger cannot hold it for; the simulation now keeps it at its shop, as a pending one.
  800750774,
];

test('when the kept seeds run again, then every invariant holds', async () => {
  const lines: string[] = [];
  const failures = [];
  for (const seed of KEPT_SEEDS) {
    failures.push(...(await runSeeds(seed, 1, { print: (line) => lines.push(line) })));
  }
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});

test(`when ${fresh.count} fresh seeds from ${fresh.from} run, then every invariant holds`, async (t) => {
  const lines: string[] = [];
  const deadline = Date.now() + fresh.seconds * 1000;
  let ran = 0;
  const failures = [];
  // In slices, so that the time budget can end it between seeds.
  while (ran < fresh.count && Date.now() < deadline) {
    const slice = Math.min(25, fresh.count - ran);
    failures.push(
      ...(await runSeeds(fresh.from + ran, slice, { print: (line) => lines.push(line) })),
    );
    ran += slice;
  }
  t.diagnostic(
    `fresh seeds ${fresh.from}..${fresh.from + ran - 1}: ${rangeCommand(fresh.from, ran)}`,
  );
  assert.equal(failures.length, 0, lines.slice(0, 60).join('\n'));
});
