import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { LedgerClient, type Answer } from '../cloud/ledger-client.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { Rng } from './scheduler.ts';
import { SimLedger } from './sim-ledger.ts';
import { ledgerOverHttp } from './sim-network.ts';

// The simulated ledger, behind the simulation's HTTP routes (sim-network.ts), must answer every
// call the worker makes exactly as the real one does: the same seeded sequences of creates
// (new, replayed, conflicting, beyond the pool), posts, voids (of known, unknown and other
// shops' ids: tombstones), gets, pending lists and card accounts go to both, and every answer is
// compared (status, error code, state, credits, pool, amount). Card accounts are compared also
// through their effect: a discharge beyond one is CardAccountExceeded.
// Tills too: creates name one of two tills (or none), a card with another till's movement
// pending is refused, compensations name earlier movements, and posts and voids name a till
// and sometimes evidence. An operator's word without a till (evidence, no till) on a movement
// with a card state holds its card until a till confirms it or a compensation is made.

const SHOPS = [
  { id: '6f1c1c8e-0f5b-4c7e-9a52-1d4b2f7a00a1', key: 'contract-key-shop-a-012345', credits: 600 },
  { id: '6f1c1c8e-0f5b-4c7e-9a52-1d4b2f7a00b2', key: 'contract-key-shop-b-012345', credits: 300 },
] as const;
/** Each seed its own cards: a movement another seed left pending must not meet it. */
const cardsOf = (seed: number) =>
  ['04A1B2', '04A1B2C3D4E5'].flatMap((prefix) =>
    [0, 1].map((i) => `${prefix}${(seed * 2 + i).toString(16).toUpperCase().padStart(2, '0')}`),
  );
/** Two tills of each shop, and legacy workers that name none. */
const TILLS = [undefined, randomUUID(), randomUUID()];

let folder: string;
let server: LedgerServer;
before(async () => {
  folder = await freshPgliteFolder();
  server = await startLedgerServer({
    database: folder,
    seed: {
      customers: SHOPS.map((shop, i) => ({
        id: shop.id,
        name: `Contract shop ${i}`,
        credits: shop.credits,
        creditCost: '0.50',
        keys: [shop.key],
      })),
    },
    log: { error: () => undefined },
  });
});
after(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** What both must agree on in an answer (times differ by nature). */
function essence(answer: Answer): unknown {
  if (answer.status >= 400) return { status: answer.status, error: answer.body?.error };
  const view = (movement: Record<string, unknown>) => ({
    id: movement.id,
    kind: movement.kind,
    cardId: movement.cardId,
    state: movement.state,
    credits: movement.credits,
    amount: movement.amount,
    creditCost: movement.creditCost,
    customerCredits: movement.customerCredits,
    tillId: movement.tillId,
    cardBefore: movement.cardBefore,
    compensates: movement.compensates,
    resolvedByTill: movement.resolvedByTill,
    evidence: movement.evidence,
    awaitsCard: movement.awaitsCard,
    cardEvidence: movement.cardEvidence,
  });
  const body = answer.body as Record<string, unknown>;
  if (Array.isArray(body.movements)) {
    // Movements made in the same millisecond may come in either order.
    const sorted = [...body.movements].sort((x, y) => String(x.id).localeCompare(String(y.id)));
    return { status: answer.status, movements: sorted.map(view) };
  }
  if ('customerId' in body) return { status: answer.status, credits: body.credits };
  if ('firstSeenAt' in body) {
    const { firstSeenAt: _first, lastSeenAt: _last, ...till } = body;
    return { status: answer.status, till };
  }
  if ('importedCredits' in body) {
    const movements = body.movements as Record<string, unknown>[];
    return {
      status: answer.status,
      credits: body.credits,
      importedCredits: body.importedCredits,
      suspect: body.suspect,
      // Movements made in the same millisecond may come in either order.
      movements: movements
        .map(
          (movement) =>
            `${String(movement.id)} ${String(movement.state)}${movement.awaitsCard ? ' awaits its card' : ''}`,
        )
        .sort(),
    };
  }
  return { status: answer.status, movement: view(body) };
}

/** The simulated ledger's answer over the simulation's HTTP routes. */
function simAnswer(
  sim: SimLedger,
  method: 'GET' | 'POST',
  path: string,
  apiKey: string,
  body?: unknown,
): Answer {
  const answer = ledgerOverHttp(sim, method, path, apiKey, body);
  return { status: answer.status, body: answer.body, contentType: 'application/json' };
}

describe('the simulated ledger against the real one', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    test(`when seed ${seed}'s 150 calls go to both, then every answer is the same`, async () => {
      const rng = new Rng(seed);
      const CARDS = cardsOf(seed);
      const sim = new SimLedger(() => 0);
      const real = new LedgerClient(server.url);
      // Both start from the real one's pools (earlier seeds changed them).
      for (const [i, shop] of SHOPS.entries()) {
        const pool = (await real.withKey(shop.key).customer()).body.credits as number;
        sim.addShop(
          { id: shop.id, name: `Contract shop ${i}`, credits: pool, creditCost: '0.50' },
          [shop.key],
        );
        for (const card of CARDS) {
          const account = await real.withKey(shop.key).get(`/v1/cards/${card}`);
          assert.equal(account.status, 200, JSON.stringify(account.body));
          sim.importCard(shop.id, card, account.body.credits as number);
        }
      }
      const ids: string[] = Array.from({ length: 10 }, () => randomUUID());
      for (let step = 0; step < 150; step += 1) {
        const shop = rng.pick(SHOPS);
        const client = real.withKey(shop.key);
        const id = rng.pick(ids);
        const roll = rng.int(8);
        let what: string;
        let realAnswer: Answer;
        let simulated: Answer;
        if (roll <= 2) {
          const body: Record<string, unknown> = {
            id,
            kind: rng.chance(0.7) ? 'recharge' : 'discharge',
            cardId: rng.pick(CARDS),
          };
          if (body.kind === 'recharge' && rng.chance(0.3))
            body.amount = `${rng.between(0, 90)}.${rng.between(10, 99)}`;
          else body.credits = rng.between(1, 250);
          // What the card held, as a till says it: within or beyond the card's account.
          if (body.kind === 'recharge' && rng.chance(0.5)) {
            body.cardCredits = rng.between(0, 300);
            if (rng.chance(0.5)) body.refuseAboveAccount = true;
          }
          const till = rng.pick(TILLS);
          if (till !== undefined) body.tillId = till;
          if (rng.chance(0.3)) body.cardBefore = `test:${rng.between(0, 300)}`;
          if (rng.chance(0.15)) body.compensates = rng.pick(ids.filter((other) => other !== id));
          what = `create ${JSON.stringify(body)}`;
          realAnswer = await client.create(body);
          simulated = simAnswer(sim, 'POST', '/v1/movements', shop.key, body);
        } else if (roll <= 4) {
          const action = rng.chance(0.5) ? 'post' : 'void';
          const till = rng.pick(TILLS);
          const by = {
            ...(till === undefined ? {} : { tillId: till }),
            ...(rng.chance(0.4) ? { evidence: 'card read at another till' } : {}),
          };
          what = `${action} ${id} ${JSON.stringify(by)}`;
          realAnswer = await client.resolve(id, action, by);
          simulated = simAnswer(sim, 'POST', `/v1/movements/${id}/${action}`, shop.key, by);
        } else if (roll === 5) {
          what = `get ${id}`;
          realAnswer = await client.movement(id);
          simulated = simAnswer(sim, 'GET', `/v1/movements/${id}`, shop.key);
        } else if (roll === 6) {
          const card = rng.pick(CARDS);
          what = `card account ${card}`;
          realAnswer = await client.get(`/v1/cards/${card}`);
          simulated = simAnswer(sim, 'GET', `/v1/cards/${card}`, shop.key);
        } else {
          what = 'pending list';
          realAnswer = await client.get('/v1/movements?state=pending');
          simulated = simAnswer(sim, 'GET', '/v1/movements?state=pending', shop.key);
          simulated.body.movements = (simulated.body.movements as { id: string }[]).filter(
            (movement) => ids.includes(movement.id),
          );
          realAnswer.body.movements = (realAnswer.body.movements as { id: string }[]).filter(
            (movement) => ids.includes(movement.id),
          );
        }
        assert.deepEqual(
          essence(simulated),
          essence(realAnswer),
          `step ${step} (${shop.key.slice(13, 19)}): ${what}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
        );
      }
    });
  }
});

describe('the simulated ledger against the real one, on an operator deciding without the card', () => {
  test('when an operator voids or posts without a till and tills confirm, compensate twice or write the card, then every answer is the same', async () => {
    const [shop] = SHOPS;
    const client = new LedgerClient(server.url).withKey(shop.key);
    const pool = (await client.customer()).body.credits as number;
    const sim = new SimLedger(() => 0);
    sim.addShop({ id: shop.id, name: 'Contract shop 0', credits: pool, creditCost: '0.50' }, [
      shop.key,
    ]);
    const card = cardsOf(100)[0] as string;
    const [tillA, tillB] = [TILLS[1], TILLS[2]];
    let state = 0;
    const at = (tillId: string | undefined, kind: string, credits: number) => ({
      id: randomUUID(),
      kind,
      cardId: card,
      credits,
      tillId,
      cardBefore: `test:${(state += 1)}`,
    });
    const recharge = at(tillA, 'recharge', 40);
    const payout = at(tillA, 'discharge', 40);
    const bought = at(tillA, 'recharge', 5);
    const fix = { ...at(tillB, 'discharge', 40), compensates: payout.id };
    const evidence = { tillId: tillB, evidence: 'card read at till B' };
    const steps: [string, 'GET' | 'POST', string, unknown?][] = [
      ['create recharge', 'POST', '/v1/movements', recharge],
      ['post it', 'POST', `/v1/movements/${recharge.id}/post`, { tillId: tillA }],
      ['create payout', 'POST', '/v1/movements', payout],
      ['operator voids it', 'POST', `/v1/movements/${payout.id}/void`, { evidence: 'lost' }],
      ['B writes the card', 'POST', '/v1/movements', at(tillB, 'recharge', 1)],
      ['A writes the card', 'POST', '/v1/movements', at(tillA, 'recharge', 1)],
      ['B voids bare', 'POST', `/v1/movements/${payout.id}/void`, { tillId: tillB }],
      ['B posts on evidence', 'POST', `/v1/movements/${payout.id}/post`, evidence],
      ['card account', 'GET', `/v1/cards/${card}`],
      ['B compensates', 'POST', '/v1/movements', fix],
      ['A compensates too', 'POST', '/v1/movements', { ...fix, id: randomUUID(), tillId: tillA }],
      ['B compensates again', 'POST', '/v1/movements', fix],
      ['B posts it', 'POST', `/v1/movements/${fix.id}/post`, { tillId: tillB }],
      ['the payout', 'GET', `/v1/movements/${payout.id}`],
      ['A writes the card', 'POST', '/v1/movements', bought],
      ['A posts it', 'POST', `/v1/movements/${bought.id}/post`, { tillId: tillA }],
      ['operator posts it again', 'POST', `/v1/movements/${bought.id}/post`, { evidence: 'x' }],
      ['another one', 'POST', '/v1/movements', { ...at(tillA, 'recharge', 2), id: recharge.id }],
    ];
    // A second payout, decided by the operator, confirmed by its own till without evidence.
    const second = at(tillA, 'discharge', 5);
    steps.push(
      ['create payout', 'POST', '/v1/movements', second],
      ['operator posts it', 'POST', `/v1/movements/${second.id}/post`, { evidence: 'paid' }],
      ['B writes the card', 'POST', '/v1/movements', at(tillB, 'recharge', 3)],
      ['A says posted', 'POST', `/v1/movements/${second.id}/post`, { tillId: tillA }],
      ['B writes the card', 'POST', '/v1/movements', at(tillB, 'recharge', 3)],
      ['card account', 'GET', `/v1/cards/${card}`],
      // A create from the state the latest posted movement was planned from, that came late.
      [
        'late create',
        'POST',
        '/v1/movements',
        { ...at(tillB, 'recharge', 2), cardBefore: 'test:1' },
      ],
      ['late create', 'POST', '/v1/movements', { ...second, id: randomUUID(), tillId: tillB }],
    );
    for (const [what, method, path, body] of steps) {
      const realAnswer = await (method === 'GET' ? client.get(path) : client.post(path, body));
      const simulated = simAnswer(sim, method, path, shop.key, body);
      assert.deepEqual(
        essence(simulated),
        essence(realAnswer),
        `${what}: ${method} ${path} ${JSON.stringify(body)}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
      );
    }
  });
});

describe('the simulated ledger against the real one, on till heartbeats', () => {
  test('when tills of two shops send heartbeats (a new till, the same one again, another shop, a float), then every answer is the same', async () => {
    const sim = new SimLedger(() => 0);
    for (const [i, shop] of SHOPS.entries()) {
      sim.addShop({ id: shop.id, name: `Contract shop ${i}`, credits: 0, creditCost: '0.50' }, [
        shop.key,
      ]);
    }
    const till = randomUUID();
    const beat = (pending: number, extra: Record<string, unknown> = {}) => ({
      version: '2.1.0',
      reader: { state: pending > 0 ? 'ready' : 'no-reader', name: null, problem: null },
      pendingMovements: pending,
      waitingMovements: pending % 2,
      ...extra,
    });
    const float = {
      credits: 90,
      unreportedMovements: 1,
      unreportedCredits: 10,
      offlineSince: null,
    };
    for (const [shop, body] of [
      [SHOPS[0], beat(0)],
      [SHOPS[0], beat(3, { float })],
      [SHOPS[1], beat(1, { float: null })],
      [SHOPS[0], beat(2)],
    ] as const) {
      const path = `/v1/tills/${till}/heartbeat`;
      const realAnswer = await new LedgerClient(server.url).withKey(shop.key).post(path, body);
      const simulated = simAnswer(sim, 'POST', path, shop.key, body);
      assert.deepEqual(
        essence(simulated),
        essence(realAnswer),
        `${JSON.stringify(body)}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
      );
    }
  });
});
