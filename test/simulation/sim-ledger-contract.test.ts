import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startLedgerServer, type LedgerServer } from '../../cloud/create-ledger-server.ts';
import { LedgerClient, type Answer } from '../cloud/ledger-client.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { SimLedger, SimLedgerError } from './sim-ledger.ts';
import { Rng } from './world.ts';

// The simulated ledger must answer every call the worker makes exactly as the real one does:
// the same seeded sequences of creates (new, replayed, conflicting, beyond the pool), posts,
// voids (of known, unknown and other shops' ids: tombstones), gets and pending lists go to
// both, and every answer is compared (status, error code, state, credits, pool, amount). Card
// accounts are compared through their effect: a discharge beyond one is CardAccountExceeded.
// Tills too: creates name one of two tills (or none), a card with another till's movement
// pending is refused, compensations name earlier movements, and posts and voids name a till
// and sometimes evidence.

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
  });
  const body = answer.body as Record<string, unknown>;
  if (Array.isArray(body.movements)) {
    // Movements made in the same millisecond may come in either order.
    const sorted = [...body.movements].sort((x, y) => String(x.id).localeCompare(String(y.id)));
    return { status: answer.status, movements: sorted.map(view) };
  }
  if ('customerId' in body) return { status: answer.status, credits: body.credits };
  return { status: answer.status, movement: view(body) };
}

function simAnswer(act: () => unknown, status = 200): Answer {
  try {
    const body = act();
    return { status, body, contentType: 'application/json' };
  } catch (error) {
    if (!(error instanceof SimLedgerError)) throw error;
    return { status: error.status, body: { error: error.code }, contentType: 'application/json' };
  }
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
        const roll = rng.int(7);
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
          let replayed = false;
          simulated = simAnswer(() => {
            const created = sim.create(shop.key, body as never);
            replayed = created.replayed;
            return created.movement;
          });
          // A replay is 200, a new movement 201.
          if (simulated.status === 200 && !replayed) simulated.status = 201;
        } else if (roll <= 4) {
          const action = rng.chance(0.5) ? 'post' : 'void';
          const till = rng.pick(TILLS);
          const by = {
            ...(till === undefined ? {} : { tillId: till }),
            ...(rng.chance(0.4) ? { evidence: 'card read at another till' } : {}),
          };
          what = `${action} ${id} ${JSON.stringify(by)}`;
          realAnswer = await client.resolve(id, action, by);
          simulated = simAnswer(() =>
            sim.resolve(shop.key, id, action === 'post' ? 'posted' : 'voided', by),
          );
        } else if (roll === 5) {
          what = `get ${id}`;
          realAnswer = await client.movement(id);
          simulated = simAnswer(() => sim.get(shop.key, id));
        } else {
          what = 'pending list';
          realAnswer = await client.get('/v1/movements?state=pending');
          simulated = simAnswer(() => ({
            movements: sim.listPending(shop.key).filter((movement) => ids.includes(movement.id)),
          }));
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
