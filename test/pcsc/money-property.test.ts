import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { checkLedger } from '../../cloud/check.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import type { FaultMode } from '../support/fault-proxy.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard, type FaultAction, type FaultTrigger } from '../support/virtual-card.ts';

// Random sequences of recharges and discharges, each maybe hit by a fault (the card pulled at
// any APDU, before or after it took effect; the ledger refusing, failing or dropping its answer
// at either call), against a model: credits only ever move between the card and the shop's
// pool, so their sum never changes; a 200 tells the truth about the card; after every step
// nothing stays pending at the ledger, the card holds exactly its account at the ledger, and
// the ledger's own check passes.
// Replay a failure with FC_SEED=<seed> (and FC_PATH=<path>) from the printed counterexample.

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardTimeoutMs: 1_500 })));
after(() => rig.close());

type CardFault = { where: 'card'; trigger: FaultTrigger; action: FaultAction };
type LedgerFault = { where: 'ledger'; call: 'pending' | 'post'; mode: FaultMode };
type Step = { op: 'recharge'; credits: number } | { op: 'discharge' };
type Command = Step & { fault?: CardFault | LedgerFault };

const cardFault: fc.Arbitrary<CardFault> = fc.record({
  where: fc.constant('card' as const),
  trigger: fc.constantFrom<FaultTrigger>(
    { command: 'authenticate' },
    { command: 'read', nth: 1 },
    { command: 'read', nth: 2 },
    { command: 'getUid' },
    { command: 'write' },
    { command: 'read', nth: 3 },
  ),
  action: fc.constantFrom<FaultAction>('pull-before', 'pull-after'),
});
const ledgerFault: fc.Arbitrary<LedgerFault> = fc.record({
  where: fc.constant('ledger' as const),
  call: fc.constantFrom('pending' as const, 'post' as const),
  mode: fc.constantFrom<FaultMode>(
    { kind: 'refuse' },
    { kind: 'error500' },
    { kind: 'drop-response' },
  ),
});
const command: fc.Arbitrary<Command> = fc
  .tuple(
    fc.oneof(
      fc.record({ op: fc.constant('recharge' as const), credits: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ op: fc.constant('discharge' as const) }),
    ),
    fc.option(fc.oneof(cardFault, ledgerFault), { nil: undefined, freq: 2 }),
  )
  .map(([step, fault]) => ({ ...step, fault }));

const balanceOf = walletBalance;

const pool = () => shopCredits(rig.ledger.url);
const pendingAtLedger = () => pendingMovements(rig.ledger.url);
/** What the ledger lets this card pay out (GET /v1/cards/{cardId}, docs/cloud-api.md). */
async function cardAccount(cardId: string): Promise<number> {
  const res = await httpRequest(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
    contract: false,
  });
  assert.equal(res.status, 200, res.text);
  return (res.json as { credits: number }).credits;
}

let uid = 0;

test('when random movements meet random faults, then credits are only ever moved, never lost or made', async () => {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31;
  console.log(`fast-check seed: ${seed} (replay with FC_SEED=${seed})`);
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 5 }), async (commands) => {
      uid += 1;
      const card = new VirtualCard({
        uid: Buffer.from([0x04, 0x77, (uid >> 8) & 0xff, uid & 0xff]),
      });
      await rig.present(card);
      try {
        const total = balanceOf(card) + (await pool());
        for (const { fault, ...step } of commands) {
          if (fault?.where === 'card') card.failAt(fault.trigger, fault.action);
          if (fault?.where === 'ledger') {
            rig.ledgerProxy.setMode(
              fault.mode,
              (method, path) =>
                method === 'POST' &&
                (fault.call === 'pending' ? path === '/v1/movements' : path.endsWith('/post')),
            );
          }
          const before = balanceOf(card);
          const res = await httpRequest(
            `${rig.service.url}/${step.op === 'recharge' ? 'writecard' : 'dischargecard'}`,
            {
              method: 'POST',
              headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
              body: step.op === 'recharge' ? JSON.stringify({ credits: step.credits }) : undefined,
            },
          );
          rig.ledgerProxy.setMode({ kind: 'pass' });
          card.clearFaults();
          if (res.status === 200) {
            const expected = step.op === 'recharge' ? before + step.credits : 0;
            assert.equal(balanceOf(card), expected, `a 200 tells the truth: ${shown(res)}`);
          }
          if (rig.reader.card !== card) {
            await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
            await rig.present(card);
          }
          await waitUntil(() => rig.service.unconfirmedMovements === 0, 20_000, 'settled');
          assert.equal(await pendingAtLedger(), 0, 'nothing pending at the ledger');
          assert.equal(
            balanceOf(card) + (await pool()),
            total,
            `credits only moved (last answer ${shown(res)})`,
          );
          assert.equal(
            balanceOf(card),
            await cardAccount(card.id),
            'the card holds exactly its account at the ledger',
          );
        }
        const report = await checkLedger(rig.ledger.db);
        assert.ok(report.ok, report.problems.join('; '));
      } finally {
        await rig.takeAway();
      }
    }),
    { numRuns: 12, seed, path: process.env.FC_PATH, endOnFailure: true },
  );
});
