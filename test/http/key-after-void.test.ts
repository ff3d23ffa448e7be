// An Idempotency-Key whose write an operator voided, the card unable to tell (docs/integrators.md,
// "Idempotency-Key: retrying safely"; found by the shop simulation's seed 959995826): till A's
// recharge under a key lands on the card but its answer is lost (the card leaves right after the
// write), the shop owner voids it as "card reported lost", and the card turns up at till B, which
// sees the write on it and journals a compensation of the void; B's link to the ledger holds
// it. Meanwhile a machine spends from the card, so back at A it shows neither the balance before
// the write nor the one after. Asked again, the key must not run again (the write may have
// landed: a second one would move the card twice): `500 MovementUnsettled`, nothing written.
// Once B's compensation is posted, the key answers the 200 of its write. Over real HTTP: two
// tills on the card simulator, the reference ledger, B behind a fault proxy.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { VirtualCard } from '../../service/card/simulator/virtual-card.ts';
import { decodeWallet, encodeValueBlock, sectorBlocks } from '../../service/card/wallet-format.ts';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { apiCaller, shown, withoutReceipt } from '../support/http-client.ts';
import { callLedger, callTill, creditsOnCard, placeCard } from '../support/shop-tills.ts';
import { startTestLedger, TEST_API_KEY, type TestLedger } from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
/** Between till B and the ledger: holds B's compensation. */
let proxyB: FaultProxy;
/** Till A's data folder (journal, till id, simulated cards), kept across its restart. */
let dataDirA: string;
let tillA: TestService;
let tillB: TestService;

const startTillA = () =>
  startTestService(
    { cloudUrl: ledger.url, simulator: true, dataDir: dataDirA },
    { limits: ROOMY_LIMITS },
  );

before(async () => {
  ledger = await startTestLedger();
  proxyB = await startFaultProxy(ledger.url);
  dataDirA = mkdtempSync(join(tmpdir(), 'cww-till-a-'));
  tillA = await startTillA();
  tillB = await startTestService(
    // Reconciling every second: B posts its compensation soon after the proxy lets it go.
    { cloudUrl: proxyB.url, simulator: true, reconcileEveryMs: 1_000 },
    { limits: ROOMY_LIMITS },
  );
});
after(async () => {
  await tillA?.close();
  await tillB?.close();
  await proxyB?.close();
  await ledger?.close();
  rmSync(dataDirA, { recursive: true, force: true });
});

const KEY = 'recharge-voided-unseen-1';
const rechargeUnderKey = () =>
  apiCaller(() => tillA.url, TEST_API_KEY)(
    'POST',
    '/writecard',
    { credits: 10 },
    { 'Idempotency-Key': KEY },
  );

interface LedgerMovement {
  id: string;
  cardId: string;
  kind: string;
  credits: number;
  state: string;
  compensates: string | null;
}

async function movementsOf(cardId: string): Promise<LedgerMovement[]> {
  const listed = await callLedger(ledger, 'GET', '/v1/movements');
  assert.equal(listed.status, 200, shown(listed));
  return (listed.json as { movements: LedgerMovement[] }).movements.filter(
    (movement) => movement.cardId === cardId,
  );
}

/**
 * A vending machine spends `credits` from the card in till A's simulator while A is stopped:
 * DECREMENT in place on the active slot (docs/card-format.md), so the value drops and the
 * generation stays.
 */
function machineSpendsAtA(cardId: string, credits: number): void {
  const file = join(dataDirA, 'simulator', 'cards.json');
  const stored = JSON.parse(readFileSync(file, 'utf8')) as { cards: Record<string, string> };
  const memory = stored.cards[cardId];
  assert.ok(memory, `till A's simulator knows card ${cardId}`);
  const card = VirtualCard.fromMemory(Buffer.from(cardId, 'hex'), Buffer.from(memory, 'hex'));
  const { slots } = sectorBlocks(1);
  const wallet = decodeWallet(card.block(slots[0]), card.block(slots[1]));
  assert.equal(wallet.kind, 'valid');
  if (wallet.kind !== 'valid') return;
  card.setBlock(
    slots[wallet.activeSlot],
    encodeValueBlock(wallet.balance - credits, wallet.generation),
  );
  stored.cards[cardId] = card.dump().toString('hex');
  writeFileSync(file, JSON.stringify(stored));
}

test("when a key's recharge an operator voided is unseen on its card, then the key answers 500 MovementUnsettled and writes nothing until the other till's compensation is posted, then the 200 of that write", async () => {
  // A blank card: the recharge writes slot 0 at generation 1, the very block a card placed
  // holding 10 has, so till B's simulator can show B the card as the write left it.
  const uid = '04E10F01';
  const cardId = await placeCard(tillA, uid);
  const armed = await callTill(tillA, 'POST', '/simulator/fault', { fault: 'tear-after-commit' });
  assert.equal(armed.status, 200, shown(armed));
  const torn = await rechargeUnderKey();
  assert.equal(torn.status, 500, shown(torn));
  assert.equal((torn.json as { error: string }).error, 'CardRemovedDuringWrite', shown(torn));
  await waitUntil(() => tillA.readers.status.card === null, 5_000, 'the card left till A');

  // The customer reports the card lost; the shop owner voids the recharge without the card.
  const [recharge] = await movementsOf(cardId);
  assert.ok(recharge && recharge.state === 'pending', JSON.stringify(recharge));
  const voided = await callLedger(ledger, 'POST', `/v1/movements/${recharge.id}/void`, {
    evidence: 'the customer reported the card lost',
  });
  assert.equal((voided.json as { awaitsCard?: boolean }).awaitsCard, true, shown(voided));

  // Found, at till B: the card shows the write landed, B compensates the void; B's link to the
  // ledger holds the compensation (its only movement create) until let go.
  let letGo!: () => void;
  const released = new Promise<void>((resolve) => (letGo = resolve));
  let held = 0;
  proxyB.setMode(
    {
      kind: 'intercept',
      before: async () => {
        held += 1;
        await released;
        return true;
      },
    },
    (method, path) => method === 'POST' && path === '/v1/movements',
  );
  await placeCard(tillB, uid, 10);
  const settleAtB = callTill(tillB, 'POST', '/cards/settle');
  await waitUntil(() => held > 0, 10_000, "till B's compensation at the proxy");
  // B answers the operator at once: the void set right from the card, by a compensation B
  // journaled and will post once the ledger takes it.
  const settled = await settleAtB;
  assert.equal(settled.status, 200, shown(settled));
  const [decided] = (settled.json as { settled: { id: string; compensatedBy?: string }[] }).settled;
  assert.equal(decided?.id, recharge.id, shown(settled));
  const compensationId = decided?.compensatedBy;
  assert.ok(compensationId, shown(settled));
  assert.equal(await creditsOnCard(tillB), 10, 'a compensation never writes the card');

  // A machine spends 3 from the card; till A (restarted meanwhile) sees it holding 7.
  await tillA.close();
  machineSpendsAtA(cardId, 3);
  tillA = await startTillA();
  const back = await callTill(tillA, 'POST', '/simulator/put-back', { cardId });
  assert.equal(back.status, 200, shown(back));
  await waitUntil(() => tillA.readers.status.card?.cardId === cardId, 5_000, 'card at till A');

  for (let attempt = 0; attempt < 2; attempt += 1) {
    const unsettled = await rechargeUnderKey();
    assert.equal(unsettled.status, 500, shown(unsettled));
    // The documented body: the code alone (docs/integrators.md, "Errors and what to do next").
    assert.deepEqual(unsettled.json, { error: 'MovementUnsettled' }, shown(unsettled));
    assert.equal(await creditsOnCard(tillA), 7, 'the key did not run again');
  }

  // B's compensation reaches the ledger and is posted: the write landed, the key says so.
  proxyB.setMode({ kind: 'pass' });
  letGo();
  await waitUntil(
    async () =>
      (await movementsOf(cardId)).some(
        (movement) => movement.id === compensationId && movement.state === 'posted',
      ),
    30_000,
    "till B's compensation posted",
  );
  const answered = await rechargeUnderKey();
  assert.equal(answered.status, 200, shown(answered));
  assert.deepEqual(withoutReceipt(answered.json), { cardId, credits: 10, rechargeAmount: 5 });
  assert.equal((answered.json as { movementId: string }).movementId, recharge.id);
  assert.equal(await creditsOnCard(tillA), 7, 'the card is not written again');
  assert.deepEqual(
    (await movementsOf(cardId)).map(({ kind, credits, state, compensates }) => ({
      kind,
      credits,
      state,
      compensates,
    })),
    [
      { kind: 'recharge', credits: 10, state: 'posted', compensates: recharge.id },
      { kind: 'recharge', credits: 10, state: 'voided', compensates: null },
    ],
  );
});
