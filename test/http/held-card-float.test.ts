// A card the ledger holds for an operator's word given without it, at two tills of one shop
// over real HTTP (the card simulator, the reference ledger): till A's payout tears, the shop
// owner voids it as "card reported lost", and till B, which learnt from its card list that the
// card is held and then lost the ledger, must not sell a float recharge over it (the card is
// the only evidence of what A's write did): 500 CardHeldAtLedger, and nothing moves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CARD_LIST_FILE } from '../../service/cloud/card-list-watcher.ts';
import { waitUntil } from '../support/card-rig.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { shown } from '../support/http-client.ts';
import { callLedger, callTill, creditsOnCard, placeCard } from '../support/shop-tills.ts';
import { startSimulatorShop, type SimulatorShop } from '../support/simulator-shop.ts';
import type { TestLedger } from '../support/test-ledger.ts';
import type { TestService } from '../support/test-service.ts';

/** The movements a till's card list (kept in its data folder) holds cards for. */
function heldInListOf(till: TestService): string[] {
  try {
    const { list } = JSON.parse(readFileSync(join(till.dataDir, CARD_LIST_FILE), 'utf8')) as {
      list: { held?: { movementId: string }[] };
    };
    return (list.held ?? []).map((movement) => movement.movementId);
  } catch {
    return [];
  }
}

let shop: SimulatorShop<'tillA' | 'tillB'>;
let ledger: TestLedger;
/** Between till B and the ledger, to take the ledger away from B alone. */
let proxyB: FaultProxy;
let tillA: TestService;
let tillB: TestService;

before(async () => {
  shop = await startSimulatorShop({
    float: { size: 200, lowWater: 50 },
    tills: {
      tillA: { config: { cardListEveryMs: 1_000 } },
      tillB: {
        proxied: true,
        config: { cardListEveryMs: 1_000, cardTimeoutMs: 1_000, ledgerTimeoutMs: 300 },
      },
    },
  });
  ledger = shop.ledger;
  ({ tillA, tillB } = shop.tills);
  proxyB = shop.proxy('tillB');
});
after(() => shop?.close());

test("when an offline till's card list names the card held for an operator's void, then a recharge of it is 500 CardHeldAtLedger naming the movement, and neither the card, the float nor the ledger moves", async () => {
  const uid = '04D10E01';
  const cardId = await placeCard(tillA, uid);
  const sold = await callTill(tillA, 'POST', '/writecard', { credits: 40 });
  assert.equal(sold.status, 200, shown(sold));
  const armed = await callTill(tillA, 'POST', '/simulator/fault', { fault: 'tear-after-commit' });
  assert.equal(armed.status, 200, shown(armed));
  const torn = await callTill(tillA, 'POST', '/dischargecard');
  assert.equal((torn.json as { error?: string }).error, 'CardRemovedDuringWrite', shown(torn));

  // The customer reports the card lost; the shop owner voids the payout without the card.
  const pending = await callLedger(ledger, 'GET', '/v1/movements?state=pending');
  const payout = (
    pending.json as { movements: { id: string; cardId: string; kind: string }[] }
  ).movements.find((movement) => movement.cardId === cardId && movement.kind === 'discharge');
  assert.ok(payout, shown(pending));
  const voided = await callLedger(ledger, 'POST', `/v1/movements/${payout.id}/void`, {
    evidence: 'the customer reported the card lost',
  });
  assert.equal((voided.json as { awaitsCard?: boolean }).awaitsCard, true, shown(voided));

  // Till B reads the shop's card list after the void (it names the card held), then loses the
  // ledger. Known from the list B keeps in its data folder, not from the proxy having answered
  // a poll: B may have given that poll up (its 300 ms ledger timeout on a busy machine) and
  // kept the list before the void.
  await waitUntil(
    () => heldInListOf(tillB).includes(payout.id),
    30_000,
    "till B's card list naming the payout held",
  );
  await waitUntil(() => tillB.float.state === 'online', 30_000, "till B's float is open");
  const floatBefore = { left: tillB.float.left, toReport: tillB.float.toReport };
  proxyB.setMode({ kind: 'refuse' });
  await callTill(tillB, 'GET', '/info');
  await waitUntil(() => !tillB.float.online, 30_000, 'till B sees the ledger down');

  await placeCard(tillB, uid, 5);
  const refused = await callTill(tillB, 'POST', '/writecard', { credits: 10 });
  assert.equal(refused.status, 500, shown(refused));
  const body = refused.json as { error: string; detail: string };
  assert.equal(body.error, 'CardHeldAtLedger', shown(refused));
  assert.match(body.detail, new RegExp(payout.id), shown(refused));
  assert.equal(await creditsOnCard(tillB), 5, 'the card is not written');
  assert.deepEqual(
    { left: tillB.float.left, toReport: tillB.float.toReport },
    floatBefore,
    'nothing is drawn from the float, nothing waits to be reported',
  );

  proxyB.setMode({ kind: 'pass' });
  const atLedger = await callLedger(ledger, 'GET', '/v1/movements');
  const movements = (
    atLedger.json as { movements: { cardId: string; kind: string; state: string }[] }
  ).movements.filter((movement) => movement.cardId === cardId);
  assert.deepEqual(
    movements.map(({ kind, state }) => [kind, state]).sort(),
    [
      ['discharge', 'voided'],
      ['recharge', 'posted'],
    ],
    shown(atLedger),
  );
});
