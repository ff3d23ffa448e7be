import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import type { CardRules } from '../../common/ledger-contract.ts';
import { LedgerClient, type Answer } from '../cloud/ledger-client.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { Rng } from './scheduler.ts';
import { SimLedger } from './sim-ledger.ts';
import { ledgerOverHttp } from './sim-network.ts';

// The simulated ledger must answer a card's own rules (blocks, replacements, corrections, the
// cashier's undo, block-clears, bonus tiers and how a payout spends the bonus) exactly as the
// real one does: seeded sequences of those calls, mixed with recharges (by amount, so with a
// bonus, and by credits), payouts, posts, voids and replays, go to both, and every answer is
// compared, card accounts (bonus and euros paid apart) and the card list included.

const START = Date.parse('2026-11-26T09:00:00.000Z');
const RULES: CardRules[] = [
  {
    undoWindowSeconds: 600,
    bonusTiers: [
      { minAmount: '10.00', bonusCredits: 2 },
      { minAmount: '25.00', bonusPercent: '10' },
    ],
    bonusSpend: 'bonus-first',
  },
  {
    undoWindowSeconds: 300,
    bonusTiers: [{ minAmount: '5.00', bonusCredits: 3 }],
    bonusSpend: 'bonus-last',
  },
];

let folder: string;
let server: LedgerServer;
before(async () => {
  folder = await freshPgliteFolder();
  server = await startLedgerServer({ database: folder, log: { error: () => undefined } });
});
after(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

type Body = Record<string, unknown>;

/**
 * A refusal's detail, in the real ledger's words, but for when a block was made: each side's
 * own clock (the simulation's twin runs compare it too, on one virtual clock).
 */
const detailOf = (detail: unknown) =>
  typeof detail === 'string'
    ? detail.replace(/blocked since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, 'blocked since (then)')
    : detail;

/** What both must agree on in an answer (times and key fingerprints aside). */
function essence(answer: Answer): unknown {
  const { status } = answer;
  if (status >= 400)
    return { status, error: answer.body?.error, detail: detailOf(answer.body?.detail) };
  const body = answer.body as Body;
  const movement = (view: Body) => ({
    id: view.id,
    kind: view.kind,
    cardId: view.cardId,
    state: view.state,
    credits: view.credits,
    bonusCredits: view.bonusCredits,
    amount: view.amount,
    creditCost: view.creditCost,
    customerCredits: view.customerCredits,
    tillId: view.tillId,
    cardBefore: view.cardBefore,
    refunds: view.refunds,
    applies: view.applies,
    awaitsCard: view.awaitsCard,
  });
  const change = (view: Body) => ({
    id: view.id,
    kind: view.kind,
    cardId: view.cardId,
    fromCard: view.fromCard,
    corrects: view.corrects,
    credits: view.credits,
    bonusCredits: view.bonusCredits,
    paidAmount: view.paidAmount,
    state: view.state,
    reason: view.reason,
    cancelReason: view.cancelReason,
    movementId: view.movementId,
  });
  const reasonOf = (block: unknown) => (block as Body | null)?.reason ?? null;
  if ('change' in body)
    return { status, changed: body.changed, change: change(body.change as Body) };
  if ('blocked' in body && 'changed' in body) {
    return { status, changed: body.changed, cardId: body.cardId, blocked: reasonOf(body.blocked) };
  }
  if ('waiting' in body) {
    return {
      status,
      seq: body.seq,
      blocked: (body.blocked as Body[]).map((entry) => entry.cardId).sort(),
      waiting: (body.waiting as Body[]).map((entry) => JSON.stringify(entry)).sort(),
    };
  }
  if ('importedCredits' in body) {
    return {
      status,
      credits: body.credits,
      bonusCredits: body.bonusCredits,
      paidAmount: body.paidAmount,
      blocked: reasonOf(body.blocked),
      changes: (body.changes as Body[])
        .map(change)
        .sort((x, y) => String(x.id).localeCompare(String(y.id))),
      // Movements made in the same millisecond may come in either order.
      movements: (body.movements as Body[]).map((view) => `${view.id} ${view.state}`).sort(),
    };
  }
  if ('customerId' in body) return { status, credits: body.credits };
  return { status, movement: movement(body) };
}

/** One shop on both ledgers, its key, and a client of the real one with that key. */
interface ShopOnBoth {
  apiKey: string;
  sim: SimLedger;
  real: LedgerClient;
}

/** A shop with `rules` on both ledgers: the real one's customer and key, the simulated one's. */
async function shopOnBoth(
  name: string,
  credits: number,
  rules: CardRules,
  now: () => number,
): Promise<ShopOnBoth> {
  const customer = await addCustomer(server.db, { name, credits, creditCost: 5000n });
  const { apiKey } = await issueKey(server.db, { customerId: customer.customerId });
  await setCardRules(server.db, customer.customerId, rules);
  const sim = new SimLedger(now);
  sim.addShop(
    { id: customer.customerId, name: customer.name, credits, creditCost: '0.50', cards: rules },
    [apiKey],
  );
  return { apiKey, sim, real: new LedgerClient(server.url).withKey(apiKey) };
}

/** Sends each step (a path, and a body for a POST) to both ledgers; their answers are alike. */
async function sameAnswers(
  steps: (readonly [string, Body?])[],
  { apiKey, sim, real }: ShopOnBoth,
): Promise<void> {
  for (const [path, body] of steps) {
    const method = body === undefined ? 'GET' : 'POST';
    const realAnswer = method === 'GET' ? await real.get(path) : await real.post(path, body);
    const simulated = ledgerOverHttp(sim, method, path, apiKey, body);
    assert.deepEqual(
      essence({ ...simulated, contentType: 'application/json' }),
      essence(realAnswer),
      `${method} ${path} ${JSON.stringify(body)}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
    );
  }
}

/** What the random calls reached: a path never reached is a path not compared. */
const reached = new Set<string>();
function outcomeOf(path: string, body: Body | undefined, answer: Answer): string {
  const parts = path.split('/');
  const what =
    path === '/v1/movements' ? String(body?.kind) : (parts[4] ?? `${parts[2] ?? ''} read`);
  if (answer.status >= 400) return `${what} ${String(answer.body?.error)}`;
  return `${what} ${answer.status}${(answer.body?.bonusCredits ?? 0) > 0 ? ' with bonus' : ''}`;
}
const MUST_REACH = [
  'recharge 201 with bonus',
  'refund 201',
  'refund AlreadyRefunded',
  'refund UndoNotNewest',
  'refund UndoWindowPassed',
  'refund MovementOfAnotherTill',
  'recharge CardBlocked',
  'discharge CardChangeWaiting',
  'block-clear 201',
  'block-clear CardNotBlocked',
  'replace 201',
  'replace CardNotBlocked',
  'replace NothingToReplace',
  'corrections 201',
  'corrections InvalidRefund',
  'correction 201',
  'correction CardChangeTaken',
  'cancel 200',
];

describe("the simulated ledger against the real one, on a card's own rules", () => {
  for (const seed of [21, 22, 23, 24]) {
    test(`when seed ${seed}'s 200 calls of blocks, replacements, undos, corrections and bonus recharges go to both, then every answer is the same`, async () => {
      const rng = new Rng(seed);
      const rules = RULES[seed % RULES.length] as CardRules;
      const { apiKey, sim, real } = await shopOnBoth(
        `Card rules contract shop ${seed}`,
        3000,
        rules,
        () => 0,
      );
      const cards = [0, 1, 2, 3].map((i) => `0C${seed.toString(16).padStart(2, '0')}${i}ABC`);
      const tills = [randomUUID(), randomUUID()];
      /** The movements made (by the real ledger's answer), with card, till and state. */
      type Made = { id: string; kind: string; cardId: string; tillId: string; state: string };
      const made: Made[] = [];
      /** The card changes made, with the card each waits for, as the answers said. */
      const changes: Made[] = [];
      /** The cards blocked, as the answers said. */
      const blocked = new Set<string>();
      // Mostly new ids; sometimes one sent before: a replay, or a conflict.
      const idOf = (list: { id: string }[]) =>
        list.length > 0 && rng.chance(0.12) ? rng.pick(list).id : randomUUID();
      const recent = <T>(list: T[], fallback: T) =>
        list.length > 0 ? (rng.pick(list.slice(-4)) as T) : fallback;
      let state = 0;
      for (let step = 0; step < 200; step += 1) {
        const at = (seconds = 0) => new Date(START + (step * 30 + seconds) * 1000).toISOString();
        const cardId = rng.pick(cards);
        const tillId = rng.pick(tills);
        const reason = `reason ${rng.int(3)}`;
        /** What a call names when nothing fits: a movement or change no ledger knows. */
        const stranger: Made = { id: randomUUID(), kind: 'block-clear', cardId, tillId, state: '' };
        const roll = rng.int(20);
        let method: 'GET' | 'POST' = 'POST';
        let path = '/v1/movements';
        let body: Body | undefined;
        let resolving: Made | undefined;
        let asked: Made | undefined;
        if (roll <= 6) {
          const kind = roll <= 4 ? 'recharge' : 'discharge';
          body = { id: idOf(made), kind, cardId, tillId };
          if (kind === 'recharge' && rng.chance(0.6)) {
            body.amount = rng.pick(['4.99', '5.00', '9.50', '10.00', '12.30', '25.00', '40.10']);
          } else body.credits = rng.between(1, kind === 'recharge' ? 60 : 25);
          if (kind === 'recharge' && rng.chance(0.3)) body.cardCredits = rng.between(0, 120);
          if (rng.chance(0.3)) body.cardBefore = `test:${(state += 1)}`;
        } else if (roll <= 10) {
          // Mostly a pending movement, by its own till.
          const pending = made.filter((movement) => movement.state === 'pending');
          const movement = rng.chance(0.85) ? recent(pending, stranger) : recent(made, stranger);
          const action = rng.chance(0.8) ? 'post' : 'void';
          path = `/v1/movements/${movement.id}/${action}`;
          resolving = movement;
          body = { tillId: rng.chance(0.9) ? movement.tillId : tillId };
          if (action === 'post') body.occurredAt = at();
          if (rng.chance(0.1)) body.evidence = 'card read at another till';
        } else if (roll === 11) {
          const unblock = blocked.size > 0 && rng.chance(0.5);
          path = unblock
            ? `/v1/cards/${rng.pick([...blocked])}/unblock`
            : `/v1/cards/${cardId}/block`;
          body = { reason };
        } else if (roll === 12) {
          // Mostly a blocked card onto one that is not.
          const old = blocked.size > 0 && rng.chance(0.85) ? rng.pick([...blocked]) : cardId;
          const free = cards.filter((other) => other !== old && !blocked.has(other));
          const others = cards.filter((other) => other !== old);
          const newCardId = rng.pick(free.length > 0 && rng.chance(0.85) ? free : others);
          body = { id: idOf(changes), newCardId, reason };
          path = `/v1/cards/${old}/replace`;
          asked = {
            id: body.id as string,
            kind: 'replacement',
            cardId: newCardId,
            tillId: '',
            state: 'waiting',
          };
        } else if (roll === 13) {
          const recharges = made.filter((movement) => movement.kind === 'recharge');
          const recharge = recent(recharges, stranger);
          // Mostly of the recharge's own card; else a card it may never have touched.
          const target = rng.chance(0.8) ? recharge.cardId : cardId;
          body = { id: idOf(changes), recharge: recharge.id, credits: rng.between(1, 30), reason };
          path = `/v1/cards/${target}/corrections`;
          asked = {
            id: body.id as string,
            kind: 'correction',
            cardId: target,
            tillId: '',
            state: 'waiting',
          };
        } else if (roll === 14 && rng.chance(0.5)) {
          path = `/v1/card-changes/${recent(changes, stranger).id}/cancel`;
          body = { reason };
        } else if (roll <= 16) {
          // The cashier's undo: mostly of the card's newest recharge, at its own till, in time.
          const posted = made.filter((m) => m.kind === 'recharge' && m.state === 'posted');
          const recharge = posted.at(rng.chance(0.8) ? -1 : -2) ?? stranger;
          body = {
            id: idOf(made),
            kind: 'refund',
            cardId: rng.chance(0.9) ? recharge.cardId : cardId,
            refunds: recharge.id,
            tillId: rng.chance(0.9) ? recharge.tillId : tillId,
            tillTime: at(rng.chance(0.8) ? rng.between(0, 200) : rng.between(-900, 900)),
            cardCredits: rng.between(0, 120),
          };
        } else if (roll <= 18) {
          // A till applying what waits for the card, or emptying a blocked card.
          const waiting = changes.filter((change) => change.state === 'waiting');
          const change = rng.chance(0.85) ? recent(waiting, stranger) : recent(changes, stranger);
          const kind = rng.chance(0.8) ? change.kind : rng.pick(['replacement', 'correction']);
          body = {
            id: idOf(made),
            kind: rng.chance(0.25) ? 'block-clear' : kind,
            cardId: rng.chance(0.9) ? change.cardId : cardId,
            tillId,
            cardCredits: rng.between(0, 120),
          };
          if (body.kind !== 'block-clear') body.applies = change.id;
          if (rng.chance(0.5)) body.cardBefore = `test:${(state += 1)}`;
        } else {
          method = 'GET';
          path = rng.pick([`/v1/cards/${cardId}`, '/v1/card-list', '/v1/customer']);
          if (rng.chance(0.3)) path = `/v1/movements/${recent(made, stranger).id}`;
        }
        const realAnswer = method === 'GET' ? await real.get(path) : await real.post(path, body);
        const simulated = ledgerOverHttp(sim, method, path, apiKey, body);
        reached.add(outcomeOf(path, body, realAnswer));
        if (path === '/v1/movements' && body && realAnswer.status === 201) {
          made.push({ ...(body as Omit<Made, 'state'>), state: 'pending' });
        }
        if (resolving && realAnswer.status === 200)
          resolving.state = realAnswer.body.state as string;
        if (asked && realAnswer.status === 201) changes.push(asked);
        const answered = realAnswer.body as Body;
        if (realAnswer.status === 200 && 'blocked' in answered && 'changed' in answered) {
          if (answered.blocked) blocked.add(answered.cardId as string);
          else blocked.delete(answered.cardId as string);
        }
        if (realAnswer.status === 200 && 'change' in answered) {
          const change = changes.find((known) => known.id === (answered.change as Body).id);
          if (change) change.state = (answered.change as Body).state as string;
        }
        if (realAnswer.status === 201 && typeof answered.applies === 'string') {
          const change = changes.find((known) => known.id === answered.applies);
          if (change) change.state = 'taken';
        }
        assert.deepEqual(
          essence({ ...simulated, contentType: 'application/json' }),
          essence(realAnswer),
          `step ${step}: ${method} ${path} ${JSON.stringify(body)}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
        );
      }
    });
  }

  test('when the seeds ran, then they reached every rule, granted and refused', () => {
    assert.deepEqual(
      MUST_REACH.filter((outcome) => !reached.has(outcome)),
      [],
      `reached: ${[...reached].sort().join(', ')}`,
    );
  });
});

describe("the simulated ledger against the real one, on a lost card's whole story", () => {
  test('when a bonus recharge is undone, a card blocked, emptied, replaced and picked up by two tills at once, corrected and paid out, then every answer is the same', async () => {
    const rules = RULES[0] as CardRules;
    const shop = await shopOnBoth('Lost card contract shop', 900, rules, () => 0);
    const [lost, fresh] = ['0D0000A1', '0D0000A2'];
    const [tillA, tillB] = [randomUUID(), randomUUID()];
    const at = (minutes: number) => new Date(START + minutes * 60_000).toISOString();
    const movement = (kind: string, cardId: string, tillId: string, more: Body = {}) => ({
      id: randomUUID(),
      kind,
      cardId,
      tillId,
      ...more,
    });
    const mistaken = movement('recharge', lost, tillA, { amount: '25.00' });
    const undo = (tillId: string, minutes: number) =>
      movement('refund', lost, tillId, {
        refunds: mistaken.id,
        tillTime: at(minutes),
        cardCredits: 55,
      });
    const undone = undo(tillA, 3);
    const kept = movement('recharge', lost, tillA, { amount: '12.30' });
    const more = movement('recharge', lost, tillB, { credits: 10 });
    const clear = movement('block-clear', lost, tillB, { cardCredits: 36, cardBefore: 'test:1' });
    const replace = { id: randomUUID(), newCardId: fresh, reason: 'lost at the laundromat' };
    const pickup = (tillId: string, state: string) =>
      movement('replacement', fresh, tillId, { applies: replace.id, cardBefore: state });
    const [pickupA, pickupB] = [pickup(tillA, 'test:2'), pickup(tillB, 'test:3')];
    const topUp = movement('recharge', fresh, tillA, { amount: '10.00' });
    const correct = {
      id: randomUUID(),
      recharge: topUp.id,
      credits: 4,
      reason: 'keyed 10, paid 8',
    };
    const apply = movement('correction', fresh, tillB, { applies: correct.id, cardCredits: 58 });
    const payout = movement('discharge', fresh, tillB, { credits: 30 });
    const post = (id: string, tillId: string, minutes: number) =>
      [`/v1/movements/${id}/post`, { tillId, occurredAt: at(minutes) }] as const;
    const steps: (readonly [string, Body?])[] = [
      // The cashier's undo of a mistaken bonus recharge: another till's, too late, once.
      ['/v1/movements', mistaken],
      post(mistaken.id, tillA, 1),
      ['/v1/movements', undo(tillB, 3)],
      ['/v1/movements', undo(tillA, 30)],
      ['/v1/movements', undone],
      post(undone.id, tillA, 3),
      ['/v1/movements', undone],
      ['/v1/movements', undo(tillA, 4)],
      ['/v1/movements', kept],
      post(kept.id, tillA, 4),
      ['/v1/movements', more],
      post(more.id, tillB, 5),
      [
        '/v1/movements',
        movement('refund', lost, tillA, { refunds: kept.id, tillTime: at(5), cardCredits: 36 }),
      ],
      [`/v1/cards/${lost}`],
      // Lost: blocked, refused, emptied at a till, replaced.
      [`/v1/cards/${lost}/replace`, replace],
      [`/v1/cards/${lost}/block`, { reason: 'lost at the laundromat' }],
      [`/v1/cards/${lost}/block`, { reason: 'lost again' }],
      ['/v1/movements', movement('recharge', lost, tillB, { credits: 5 })],
      ['/v1/movements', movement('discharge', lost, tillB, { credits: 5 })],
      ['/v1/movements', clear],
      post(clear.id, tillB, 6),
      [`/v1/cards/${lost}/replace`, replace],
      [`/v1/cards/${lost}/replace`, replace],
      [`/v1/cards/${lost}/replace`, { ...replace, id: randomUUID() }],
      ['/v1/card-list'],
      // Both tills read the new card at once: one picks the account up.
      ['/v1/movements', movement('recharge', fresh, tillA, { credits: 5 })],
      ['/v1/movements', pickupA],
      ['/v1/movements', pickupB],
      post(pickupA.id, tillA, 7),
      ['/v1/movements', pickupB],
      ['/v1/movements', { ...pickupB, id: randomUUID() }],
      [`/v1/cards/${fresh}`],
      ['/v1/card-list'],
      // An operator's correction, applied by the next till to see the card; then a payout.
      ['/v1/movements', topUp],
      post(topUp.id, tillA, 8),
      [`/v1/cards/${fresh}/corrections`, { ...correct, recharge: kept.id }],
      [`/v1/cards/${fresh}/corrections`, correct],
      ['/v1/movements', payout],
      ['/v1/movements', apply],
      post(apply.id, tillB, 9),
      ['/v1/movements', payout],
      post(payout.id, tillB, 10),
      [`/v1/cards/${fresh}`],
      [`/v1/cards/${lost}`],
      [`/v1/card-changes/${replace.id}/cancel`, { reason: 'too late' }],
      [`/v1/card-changes/${correct.id}/cancel`, { reason: 'too late' }],
      [`/v1/cards/${lost}/unblock`, { reason: 'found by its holder' }],
      ['/v1/card-list'],
      ['/v1/customer'],
    ];
    await sameAnswers(steps, shop);
  });
});

describe("the simulated ledger against the real one, on compensations of a card's own movements", () => {
  test('when an operator posts or voids a refund, correction, pickup or block-clear without the card and a till compensates each as the card shows, then every answer is the same', async () => {
    const rules = RULES[0] as CardRules;
    const shop = await shopOnBoth('Compensation contract shop', 900, rules, () => Date.now());
    const [tillA, tillB] = [randomUUID(), randomUUID()];
    const now = () => new Date().toISOString();
    const evidence = { evidence: 'operator: decided without the card' };
    const movement = (kind: string, cardId: string, tillId: string, more: Body = {}) => ({
      id: randomUUID(),
      kind,
      cardId,
      tillId,
      cardBefore: `test:${randomUUID()}`,
      ...more,
    });
    const fix = (of: { id: string; kind: string; cardId: string }, more: Body = {}) => ({
      id: randomUUID(),
      kind: of.kind,
      cardId: of.cardId,
      tillId: tillB,
      compensates: of.id,
      ...more,
    });
    const post = (id: string, tillId: string) =>
      [`/v1/movements/${id}/post`, { tillId, occurredAt: now() }] as const;
    const [c1, c2, c3, c4, c5, c5new] = [
      '0D0000B1',
      '0D0000B2',
      '0D0000B3',
      '0D0000B4',
      '0D0000B5',
      '0D0000B6',
    ];
    const r1 = movement('recharge', c1, tillA, { credits: 40 });
    const r2 = movement('recharge', c2, tillA, { amount: '25.00' });
    const r3 = movement('recharge', c3, tillA, { credits: 30 });
    const r4 = movement('recharge', c4, tillA, { credits: 20 });
    const r5 = movement('recharge', c5, tillA, { credits: 16 });
    const undo = (r: { id: string; cardId: string }, cardCredits: number) =>
      movement('refund', r.cardId, tillA, { refunds: r.id, tillTime: now(), cardCredits });
    const refund1 = undo(r1, 40);
    const refund2 = undo(r2, 55);
    const fix1 = fix(refund1);
    const fix2 = fix(refund2);
    const correct = { id: randomUUID(), recharge: r3.id, credits: 10, reason: 'keyed 30 for 20' };
    const apply = movement('correction', c3, tillA, { applies: correct.id, cardCredits: 30 });
    const fix3 = fix(apply);
    const clear = movement('block-clear', c4, tillA, { cardCredits: 20 });
    const fix4 = fix(clear);
    const replace = { id: randomUUID(), newCardId: c5new, reason: 'lost' };
    const pickup = movement('replacement', c5new, tillA, { applies: replace.id });
    const fix5 = fix(pickup);
    const again = movement('replacement', c5new, tillB, { applies: fix5.id });
    const steps: (readonly [string, Body?])[] = [
      ['/v1/movements', r1],
      post(r1.id, tillA),
      ['/v1/movements', r2],
      post(r2.id, tillA),
      ['/v1/movements', r3],
      post(r3.id, tillA),
      ['/v1/movements', r4],
      post(r4.id, tillA),
      ['/v1/movements', r5],
      post(r5.id, tillA),
      // A refund voided, its card holding it: redone.
      ['/v1/movements', refund1],
      ['/v1/movements', fix1],
      [`/v1/movements/${refund1.id}/void`, evidence],
      ['/v1/movements', movement('recharge', c1, tillB, { credits: 1 })],
      ['/v1/movements', fix(refund1, { kind: 'correction' })],
      ['/v1/movements', fix(refund1, { credits: 39 })],
      ['/v1/movements', fix1],
      ['/v1/movements', fix1],
      ['/v1/movements', fix(refund1)],
      post(fix1.id, tillB),
      [`/v1/cards/${c1}`],
      // A bonus recharge's refund posted, its card not holding it: undone.
      ['/v1/movements', refund2],
      [`/v1/movements/${refund2.id}/post`, evidence],
      ['/v1/movements', fix2],
      post(fix2.id, tillB),
      [`/v1/cards/${c2}`],
      // Undone, it took nothing back: the whole recharge may be corrected.
      [
        `/v1/cards/${c2}/corrections`,
        { id: randomUUID(), recharge: r2.id, credits: 55, reason: 'all of it' },
      ],
      [
        `/v1/cards/${c2}/corrections`,
        { id: randomUUID(), recharge: r2.id, credits: 1, reason: 'more' },
      ],
      // A correction posted without its card, which does not hold it: undone.
      [`/v1/cards/${c3}/corrections`, correct],
      ['/v1/movements', apply],
      [`/v1/movements/${apply.id}/post`, evidence],
      ['/v1/movements', fix3],
      post(fix3.id, tillB),
      [`/v1/cards/${c3}`],
      // A block-clear voided, the card emptied after all: recorded.
      [`/v1/cards/${c4}/block`, { reason: 'lost' }],
      ['/v1/movements', clear],
      [`/v1/movements/${clear.id}/void`, evidence],
      ['/v1/movements', fix4],
      post(fix4.id, tillB),
      // A pickup posted, its card without the credits: they wait again, and are picked up.
      [`/v1/cards/${c5}/block`, { reason: 'lost' }],
      [`/v1/cards/${c5}/replace`, replace],
      ['/v1/movements', pickup],
      [`/v1/movements/${pickup.id}/post`, evidence],
      ['/v1/movements', fix5],
      post(fix5.id, tillB),
      ['/v1/card-list'],
      [`/v1/cards/${c5new}`],
      ['/v1/movements', again],
      post(again.id, tillB),
      [`/v1/cards/${c5new}`],
      ['/v1/card-list'],
      ['/v1/customer'],
    ];
    await sameAnswers(steps, shop);
  });
});
