/**
 * What a till's heartbeat tells the back office of its float: the float recharges this till
 * sold and has not reported, as a count and their credits that agree. A recharge of another
 * till's float found on a card is reported too, but was not sold here: it is in neither.
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { encodeFloatReference } from '../../service/card/float-reference.ts';
import type { MovementEngine } from '../../service/wallet/movement-engine.ts';
import { rechargeCard } from '../../service/wallet/recharge-card.ts';
import { floatRig } from '../support/float-rig.ts';
import { cardOnReader, eventually, fingerprint, KEY } from '../support/money-rig.ts';

const engines: MovementEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

test("when the ledger is down and a card shows another till's float recharge, then the heartbeat counts only this till's own sales, their count matching their credits", async () => {
  const rig = floatRig();
  engines.push(rig.engine);
  await rig.open();
  rig.customer();
  rig.engine.start();
  await rig.clock.advance(0);
  await eventually(() => rig.floats.status().state === 'online', 'the float online');
  const other = rig.sim.floats.open(KEY, {
    tillId: '00000000-0000-4000-8000-0000000000ff',
    requestId: '00000000-0000-4000-8000-0000000000fe',
    ids: 10,
  }).float;
  rig.ledger.down = true;
  const card = cardOnReader(30, '04E1E2E3', { spare: true });
  card.spareBlock = encodeFloatReference({
    generation: 1,
    movementId: floatMovementId(other.idPrefix, 3),
    credits: 30,
  });
  const sold = await rechargeCard(card.access, rig.engine, {
    request: { credits: 5 },
    customer: rig.customer(),
    keyFingerprint: fingerprint(KEY),
  });
  await rig.clock.advance(0);
  const report = rig.floats.heartbeatReport();
  assert.equal(rig.floats.status().toReport, 2, 'the till reports its sale and the found one');
  assert.deepEqual(
    report && { movements: report.unreportedMovements, credits: report.unreportedCredits },
    { movements: 1, credits: 5 },
    `${JSON.stringify(report)} after ${JSON.stringify(sold)}`,
  );
});
