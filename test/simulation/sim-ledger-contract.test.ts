import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { addCustomer, issueKey } from '../../cloud/admin.ts';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { setFloatSettings } from '../../cloud/float-admin.ts';
import { floatMovementId, parseFloatMovementId } from '../../common/float-ids.ts';
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
// with a card state holds its card until a till confirms it or a compensation is made. Creates
// carry a card's newest record (cardRecord) that explains the card or not: the flags it raises
// show in `suspect`, and a discharge it does not explain is CardRecordMismatch.

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

/**
 * An error's code and its detail, in the real ledger's words (`named`: ids that differ by
 * nature), but for when the ledger's clock said something happened (a float opened or closed):
 * each side's own clock here (the simulation's twin runs share one virtual clock).
 */
function refusal(answer: Answer, named = (detail: string) => detail): unknown {
  const error = answer.body?.error;
  const detail = answer.body?.detail;
  return {
    status: answer.status,
    error,
    detail:
      typeof detail === 'string'
        ? named(detail).replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00/g, '(then)')
        : detail,
  };
}

/** What both must agree on in an answer (times differ by nature). */
function essence(answer: Answer): unknown {
  if (answer.status >= 400) return refusal(answer);
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
  // The card list: its seq counts every earlier test's changes at the real one.
  if ('waiting' in body) return { status: answer.status, held: body.held };
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

/** POS references the seeds' creates carry (a few, so that a lookup finds several). */
const REFERENCES = ['sale 1', 'sale-2', 'R#3/2026'];

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
          // The card's newest record: above or below what it holds, naming a movement of the
          // run (voided, posted, pending or unknown).
          if (rng.chance(0.35)) {
            body.cardRecord = {
              counter: rng.between(1, 50),
              movementId: rng.pick(ids),
              valueAfter: rng.between(0, 300),
            };
          }
          if (rng.chance(0.15)) body.compensates = rng.pick(ids.filter((other) => other !== id));
          if (rng.chance(0.5)) body.reference = rng.pick(REFERENCES);
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
        } else if (rng.chance(0.3)) {
          const reference = rng.pick(REFERENCES);
          const path = `/v1/movements?reference=${encodeURIComponent(reference)}`;
          what = `movements of reference ${reference}`;
          realAnswer = await client.get(path);
          simulated = simAnswer(sim, 'GET', path, shop.key);
          simulated.body.movements = (simulated.body.movements as { id: string }[]).filter(
            (movement) => ids.includes(movement.id),
          );
          realAnswer.body.movements = (realAnswer.body.movements as { id: string }[]).filter(
            (movement) => ids.includes(movement.id),
          );
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
      ['the card list', 'GET', '/v1/card-list'],
      ['B writes the card', 'POST', '/v1/movements', at(tillB, 'recharge', 1)],
      ['A writes the card', 'POST', '/v1/movements', at(tillA, 'recharge', 1)],
      ['B voids bare', 'POST', `/v1/movements/${payout.id}/void`, { tillId: tillB }],
      ['B posts on evidence', 'POST', `/v1/movements/${payout.id}/post`, evidence],
      ['the card list', 'GET', '/v1/card-list'],
      ['card account', 'GET', `/v1/cards/${card}`],
      ['B compensates', 'POST', '/v1/movements', fix],
      ['the card list', 'GET', '/v1/card-list'],
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
      ['the card list', 'GET', '/v1/card-list'],
      ['B writes the card', 'POST', '/v1/movements', at(tillB, 'recharge', 3)],
      ['A says posted', 'POST', `/v1/movements/${second.id}/post`, { tillId: tillA }],
      ['the card list', 'GET', '/v1/card-list'],
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
    // The card list's held cards of this card: the real shop's other tests leave others held.
    const ofCard = (path: string, answer: Answer): Answer =>
      path === '/v1/card-list' && answer.status === 200
        ? {
            ...answer,
            body: {
              ...answer.body,
              held: (answer.body.held as { cardId: string }[]).filter((h) => h.cardId === card),
            },
          }
        : answer;
    for (const [what, method, path, body] of steps) {
      const realAnswer = await (method === 'GET' ? client.get(path) : client.post(path, body));
      const simulated = simAnswer(sim, method, path, shop.key, body);
      assert.deepEqual(
        essence(ofCard(path, simulated)),
        essence(ofCard(path, realAnswer)),
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

/**
 * What both must agree on in a float call's answer (ids and times differ by nature: `prefixes`
 * names each side's floats, by id prefix and by id, alike).
 */
function floatEssence(answer: Answer, prefixes: Map<string, string>): unknown {
  if (answer.status >= 400) {
    return refusal(answer, (detail) =>
      [...prefixes].reduce((text, [of, name]) => text.replaceAll(of, name), detail),
    );
  }
  const seq = (id: string) => {
    const parsed = parseFloatMovementId(id);
    return parsed ? `${prefixes.get(parsed.prefix) ?? '?'}#${parsed.seq}` : id;
  };
  const float = (view: Record<string, unknown> | null) =>
    view && {
      till: view.tillId,
      state: view.state,
      credits: view.credits,
      granted: view.granted,
      idsIssued: view.idsIssued,
      closedBy: view.closedBy,
      returned: view.returned,
      writtenOff: view.writtenOff,
      overdrawn: view.overdrawn,
      reported: view.reported,
      found: view.found,
      undecided: view.undecided,
      notWritten: view.notWritten,
      unaccountedIds: view.unaccountedIds,
    };
  const body = answer.body as Record<string, unknown>;
  const results = (list: unknown) =>
    (list as Record<string, unknown>[]).map((result) => ({
      id: seq(String(result.id)),
      outcome: result.outcome,
      state: result.state,
      flags: result.flags,
    }));
  if (Array.isArray(body.results) && !('float' in body)) {
    return { status: answer.status, results: results(body.results) };
  }
  if ('closed' in body) {
    return {
      status: answer.status,
      closed: body.closed,
      results: results(body.results),
      float: float(body.float as Record<string, unknown>),
    };
  }
  if ('topUp' in body) {
    const { granted, requested, ids } = body.topUp as Record<string, unknown>;
    return { status: answer.status, granted, requested, ids, float: float(body.float as never) };
  }
  if (Array.isArray(body.tills)) {
    return {
      status: answer.status,
      tills: (body.tills as Record<string, unknown>[]).map((till) => ({
        till: till.tillId,
        float: float(till.float as never),
      })),
    };
  }
  if ('floatCredits' in body) {
    return { status: answer.status, credits: body.credits, floatCredits: body.floatCredits };
  }
  if ('idPrefix' in body) return { status: answer.status, float: float(body) };
  if ('kind' in body) {
    // A movement: a float movement's id named by its float and sequence number.
    return essence({ ...answer, body: { ...body, id: seq(String(body.id)) } });
  }
  return essence(answer);
}

describe('the simulated ledger against the real one, on till floats', () => {
  for (const seed of [11, 12, 13]) {
    test(`when seed ${seed}'s 120 float calls go to both, then every answer is the same`, async () => {
      const rng = new Rng(seed);
      const settings = { size: 200, lowWater: 50, offlineCap: null, offlineLimitSeconds: 86_400 };
      const customer = await addCustomer(server.db, {
        name: `Float contract shop ${seed}`,
        credits: 700,
        creditCost: 5000n,
      });
      const { apiKey } = await issueKey(server.db, { customerId: customer.customerId });
      await setFloatSettings(server.db, customer.customerId, settings);
      const sim = new SimLedger(() => 0);
      sim.addShop(
        {
          id: customer.customerId,
          name: customer.name,
          credits: 700,
          creditCost: '0.50',
          float: { ...settings, cardTypes: ['classic', 'desfire'] },
        },
        [apiKey],
      );
      const real = new LedgerClient(server.url).withKey(apiKey);
      const tills = [randomUUID(), randomUUID()];
      const cards = cardsOf(seed + 40);
      /** Each side's float of each till (ids and prefixes differ), named alike. */
      const sides = {
        real: {
          floats: new Map<string, { id: string; prefix: string }>(),
          prefixes: new Map<string, string>(),
        },
        sim: {
          floats: new Map<string, { id: string; prefix: string }>(),
          prefixes: new Map<string, string>(),
        },
      };
      const openRequests: { till: string; requestId: string }[] = [];
      const topUps: { till: string; body: Record<string, unknown> }[] = [];
      for (let step = 0; step < 120; step += 1) {
        const till = rng.pick(tills);
        const roll = rng.int(10);
        /** The call each side makes, from its own float of `till`. */
        let make: (
          side: 'real' | 'sim',
        ) => { method: 'GET' | 'POST'; path: string; body?: unknown } | undefined;
        const floatOf = (side: 'real' | 'sim') => sides[side].floats.get(till);
        const idOf = (side: 'real' | 'sim', seq: number) => {
          const float = floatOf(side);
          return float ? floatMovementId(float.prefix, seq) : randomUUID();
        };
        if (roll === 0) {
          const earlier = openRequests.find((request) => request.till === till);
          const requestId = earlier && rng.chance(0.4) ? earlier.requestId : randomUUID();
          if (!earlier || earlier.requestId !== requestId) openRequests.push({ till, requestId });
          const body = {
            tillId: rng.chance(0.1) ? rng.pick(tills) : till,
            requestId,
            ids: rng.between(3, 12),
          };
          make = () => ({ method: 'POST', path: '/v1/floats', body });
        } else if (roll === 1) {
          const earlier = topUps.filter((topUp) => topUp.till === till);
          const body =
            earlier.length > 0 && rng.chance(0.3)
              ? rng.pick(earlier).body
              : {
                  id: randomUUID(),
                  credits: rng.between(0, 250),
                  ids: rng.between(0, 5),
                  tillId: till,
                };
          topUps.push({ till, body });
          make = (side) => {
            const float = floatOf(side);
            return float && { method: 'POST', path: `/v1/floats/${float.id}/topups`, body };
          };
        } else if (roll <= 5) {
          const reporter = rng.chance(0.2) ? randomUUID() : till;
          const items = Array.from({ length: rng.between(1, 4) }, () => {
            const found = reporter !== till && rng.chance(0.8);
            const card = found
              ? 'written'
              : rng.pick(['written', 'written', 'undecided', 'not-written']);
            return {
              seq: rng.between(1, 16),
              cardId: rng.pick(cards),
              credits: rng.between(1, 60),
              card,
              ...(found ? { found: true } : { creditCost: '0.50' }),
            };
          });
          const unique = [...new Map(items.map((item) => [item.seq, item])).values()];
          make = (side) =>
            floatOf(side) && {
              method: 'POST',
              path: '/v1/float-reports',
              body: {
                tillId: reporter,
                movements: unique.map(({ seq, ...item }) => ({ id: idOf(side, seq), ...item })),
              },
            };
        } else if (roll === 6) {
          const body = {
            id: randomUUID(),
            kind: rng.chance(0.5) ? 'recharge' : 'discharge',
            cardId: rng.pick(cards),
            credits: rng.between(1, 40),
            tillId: rng.pick(tills),
          };
          make = () => ({ method: 'POST', path: '/v1/movements', body });
        } else if (roll === 7) {
          const seq = rng.between(1, 12);
          const action = rng.chance(0.5) ? 'post' : 'void';
          make = (side) =>
            floatOf(side) && {
              method: 'POST',
              path: `/v1/movements/${idOf(side, seq)}/${action}`,
              body: { tillId: till },
            };
        } else if (roll === 8) {
          if (rng.chance(0.3)) {
            make = (side) => {
              const float = floatOf(side);
              return (
                float && {
                  method: 'POST',
                  path: `/v1/floats/${float.id}/close`,
                  body: { tillId: till },
                }
              );
            };
          } else {
            make = () => ({ method: 'GET', path: '/v1/tills' });
          }
        } else {
          make = () => ({ method: 'GET', path: '/v1/customer' });
        }
        const realCall = make('real');
        const simCall = make('sim');
        if (!realCall || !simCall) {
          assert.equal(
            Boolean(realCall),
            Boolean(simCall),
            `step ${step}: both have a float of the till`,
          );
          continue;
        }
        const realAnswer = await (realCall.method === 'GET'
          ? real.get(realCall.path)
          : real.post(realCall.path, realCall.body));
        const simulated = simAnswer(sim, simCall.method, simCall.path, apiKey, simCall.body);
        for (const [side, answer] of [
          ['real', realAnswer],
          ['sim', simulated],
        ] as const) {
          const body = answer.body as Record<string, unknown>;
          const view = (body &&
            ('idPrefix' in body ? body : 'float' in body ? body.float : undefined)) as
            { id: string; idPrefix: string; tillId: string; state: string } | undefined;
          if (view && answer.status < 300) {
            // The float's prefix, its id and its movements' ids' head (the prefix as 8 and 4
            // hex digits, as a detail shows them): each side's, named alike.
            const { id = '', idPrefix = '' } = view;
            for (const of of [idPrefix, id, `${idPrefix.slice(0, 8)}-${idPrefix.slice(8)}`]) {
              if (of.length > 1) sides[side].prefixes.set(of, `float of ${view.tillId}`);
            }
            if (view.state === 'open')
              sides[side].floats.set(view.tillId, { id: view.id, prefix: view.idPrefix });
          }
        }
        assert.deepEqual(
          floatEssence(simulated, sides.sim.prefixes),
          floatEssence(realAnswer, sides.real.prefixes),
          `step ${step}: ${realCall.method} ${realCall.path} ${JSON.stringify(realCall.body)}: real ${realAnswer.status} ${JSON.stringify(realAnswer.body)}, simulated ${simulated.status} ${JSON.stringify(simulated.body)}`,
        );
      }
    });
  }
});
