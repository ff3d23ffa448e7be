import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { checkLedger } from '../../cloud/check.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import type { FaultMode } from '../support/fault-proxy.ts';
import { httpRequest, shown } from '../support/http-client.ts';
import { pendingMovements, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import {
  VirtualCard,
  type AnyVirtualCard,
  type FaultAction,
  type FaultTrigger,
} from '../support/virtual-card.ts';

// Random sequences of recharges and discharges on a MIFARE Classic and on a DESFire card, each
// maybe hit by a fault (the card pulled at any APDU, before or after it took effect; the ledger
// refusing, failing or dropping its answer at either call), against a model: credits only ever
// move between the card and the shop's pool, so their sum never changes; a 200 tells the truth
// about the card; after every step nothing stays pending at the ledger, the card holds exactly
// its account at the ledger, and the ledger's own check passes.
// Replay a failure with FC_SEED=<seed> (and FC_PATH=<path>) from the printed counterexample.

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardTimeoutMs: 1_500 })));
after(() => rig.close());

type CardFault = { where: 'card'; trigger: FaultTrigger; action: FaultAction };
type LedgerFault = { where: 'ledger'; call: 'pending' | 'post'; mode: FaultMode };
type Step = { op: 'recharge'; credits: number } | { op: 'discharge' };
type Command = Step & { fault?: CardFault | LedgerFault };

/** The APDUs a fault may hit, by card type: every one a movement sends. */
const cardTriggers: Record<'mifare-classic' | 'desfire', fc.Arbitrary<FaultTrigger>> = {
  'mifare-classic': fc.constantFrom<FaultTrigger>(
    { command: 'authenticate' },
    { command: 'read', nth: 1 },
    { command: 'read', nth: 2 },
    { command: 'getUid' },
    { command: 'write' },
    { command: 'read', nth: 3 },
  ),
  // The named commands of a movement, and any command by its place (the first recharge of a
  // factory-fresh card also makes its wallet application).
  desfire: fc.oneof(
    fc.constantFrom<FaultTrigger>(
      { command: 'getUid' },
      { command: 'selectApplication' },
      { command: 'authenticate' },
      { command: 'getValue' },
      { command: 'readRecords' },
      { command: 'credit' },
      { command: 'debit' },
      { command: 'writeRecord' },
      { command: 'commit' },
    ),
    fc.integer({ min: 1, max: 30 }).map((index): FaultTrigger => ({ index })),
  ),
};
const cardFault = (cardType: keyof typeof cardTriggers): fc.Arbitrary<CardFault> =>
  fc.record({
    where: fc.constant('card' as const),
    trigger: cardTriggers[cardType],
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
const command = (cardType: keyof typeof cardTriggers): fc.Arbitrary<Command> =>
  fc
    .tuple(
      fc.oneof(
        fc.record({
          op: fc.constant('recharge' as const),
          credits: fc.integer({ min: 1, max: 40 }),
        }),
        fc.record({ op: fc.constant('discharge' as const) }),
      ),
      fc.option(fc.oneof(cardFault(cardType), ledgerFault), { nil: undefined, freq: 2 }),
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

/** A blank MIFARE Classic card, or a DESFire card fresh from the factory. */
async function freshCard(cardType: keyof typeof cardTriggers): Promise<AnyVirtualCard> {
  if (cardType === 'desfire') return rig.desfireCardHolding(null);
  uid += 1;
  return new VirtualCard({ uid: Buffer.from([0x04, 0x77, (uid >> 8) & 0xff, uid & 0xff]) });
}

/** The property, on fresh cards of one type. */
async function creditsOnlyMove(cardType: keyof typeof cardTriggers): Promise<void> {
  const steps = fc.array(command(cardType), { minLength: 1, maxLength: 5 });
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31;
  console.log(`fast-check seed: ${seed} (replay with FC_SEED=${seed})`);
  await fc.assert(
    fc.asyncProperty(steps, async (commands) => {
      const card = await freshCard(cardType);
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
}

for (const cardType of ['mifare-classic', 'desfire'] as const) {
  test(`when random movements meet random faults on a ${cardType} card, then credits are only ever moved, never lost or made`, () =>
    creditsOnlyMove(cardType));
}
