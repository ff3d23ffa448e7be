/**
 * Bonus tiers and the cashier's undo in the shop simulation (docs/testing.md, "Bonuses and
 * undos"): seeds run with `--cards` give each shop card rules drawn from the seed (bonus tiers,
 * an undo window, bonus spent first or last); tills recharge by amount, the ledger giving the
 * bonus, and cashiers undo this till's newest recharge of the card on the reader (POST
 * /cards/undo, the production `undoRecharge`), inside the window or past it, with the card
 * recharged or spent from meanwhile, or another card on the reader, under all of world.ts's
 * faults. Its draws come from a stream of their own, and seeds run without `--cards` are the
 * runs they were.
 *
 * Invariants (checked at the end, with the world's: invariants.ts checks every answer against
 * its card write and the ledger, bonus included):
 * - the shop's bonus book: the bonus credits its card accounts hold are the bonus its posted
 *   recharges gave, less what posted refunds took back and payouts spent or forfeited;
 * - an undo takes back at most what its recharge put on (its bonus at most the recharge's
 *   bonus, its euros at most what the recharge was paid), and a recharge is undone at most once
 *   at the ledger;
 * - every answered undo's refund is what the ledger records for its movement (credits and
 *   euros, and the recharge it undoes).
 */
import type { BonusTier, CardRules } from '../../common/ledger-contract.ts';
import { Rng } from './scheduler.ts';
import type { ShopLedger } from './shop-ledger.ts';

export class CardScenario {
  readonly rng: Rng;
  readonly rules: CardRules[];

  constructor(seed: number) {
    this.rng = new Rng((seed ^ 0x0ca4d5b0) >>> 0);
    const rng = this.rng;
    this.rules = [0, 1].map(() => ({
      // Often short, so that undos come both inside and past it.
      undoWindowSeconds: rng.pick([5, 15, 30, 600]),
      bonusTiers: rng.chance(0.85) ? tiers(rng) : [],
      bonusSpend: rng.chance(0.7) ? 'bonus-first' : 'bonus-last',
    }));
  }

  /** A recharge by amount, often reaching a tier (credits cost 0.50). */
  amount(): string {
    const { rng } = this;
    return `${rng.between(1, 30)}.${rng.pick(['00', '50', '25', '99'])}`;
  }

  /** The bonus book, the undos' bounds, and each answered undo against the ledger. */
  check(
    ledger: ShopLedger,
    shopIds: string[],
    undos: { n: number; body: UndoBody; movementId: string | undefined }[],
  ): string[] {
    const problems: string[] = [];
    const movements = [...ledger.movements.values()];
    for (const shopId of shopIds) {
      const posted = movements.filter((m) => m.shop === shopId && m.state === 'posted');
      const given = posted
        .filter((m) => m.kind === 'recharge')
        .reduce((sum, m) => sum + m.bonusCredits, 0);
      // A replacement moves a blocked card's bonus to a new card (block-scenarios.ts): out of
      // the accounts while it waits, back in when picked up.
      const out = posted
        .filter((m) => m.kind !== 'recharge' && m.kind !== 'replacement')
        .reduce((sum, m) => sum + m.bonusCredits, 0);
      const waiting = [...ledger.cardChanges.values()]
        .filter((c) => c.shop === shopId && c.kind === 'replacement' && c.state === 'waiting')
        .reduce((sum, c) => sum + c.bonusCredits, 0);
      const held = ledger.bonusHeld(shopId);
      if (held !== given - out - waiting) {
        problems.push(
          `shop ${shopId}: its card accounts hold ${held} bonus credits, its recharges gave ${given}, ${out} went back and ${waiting} wait for new cards`,
        );
      }
    }
    const refunds = new Map<string, number>();
    for (const refund of movements) {
      if (refund.kind !== 'refund' || refund.refunds === null) continue;
      const recharge = ledger.movements.get(refund.refunds);
      const what = `refund ${refund.id} of ${refund.refunds}`;
      if (!recharge || recharge.kind !== 'recharge') {
        problems.push(`${what}: no such recharge`);
        continue;
      }
      if (refund.cardId !== recharge.cardId) problems.push(`${what}: on another card`);
      if (refund.state !== 'posted') continue;
      refunds.set(recharge.id, (refunds.get(recharge.id) ?? 0) + 1);
      if (refund.credits > recharge.credits)
        problems.push(`${what} took ${refund.credits} credits, it put on ${recharge.credits}`);
      if (refund.bonusCredits > recharge.bonusCredits)
        problems.push(
          `${what} took ${refund.bonusCredits} bonus, it gave ${recharge.bonusCredits}`,
        );
      if (refund.amount > recharge.amount)
        problems.push(`${what} refunded ${refund.amount}, it was paid ${recharge.amount}`);
    }
    for (const [id, count] of refunds) {
      if (count > 1) problems.push(`recharge ${id} undone ${count} times at the ledger`);
    }
    for (const { n, body, movementId } of undos) {
      const refund = movementId === undefined ? undefined : ledger.movements.get(movementId);
      const what = `undo request ${n} answered ${JSON.stringify(body)}`;
      if (!refund || refund.kind !== 'refund') {
        problems.push(`${what}: the ledger has no refund ${movementId ?? '(none)'}`);
        continue;
      }
      if (refund.state !== 'posted')
        problems.push(`${what}: the ledger's refund is ${refund.state}`);
      if (refund.refunds !== body.refunds)
        problems.push(`${what}: the ledger's refund undoes ${refund.refunds ?? '(none)'}`);
      if (refund.credits !== body.refundedCredits)
        problems.push(`${what}: the ledger took back ${refund.credits}`);
      if (Number(refund.amount) / 10_000 !== body.refundedAmount)
        problems.push(`${what}: the ledger refunded ${Number(refund.amount) / 10_000}`);
    }
    return problems;
  }
}

export interface UndoBody {
  cardId: string;
  credits: number;
  refundedCredits: number;
  refundedAmount: number;
  refunds: string;
}

/** One to three tiers, of credits or a percentage, from 2.00 to 25.00. */
function tiers(rng: Rng): BonusTier[] {
  const mins = [...new Set(Array.from({ length: rng.between(1, 3) }, () => rng.between(2, 25)))];
  return mins
    .sort((a, b) => a - b)
    .map((min) =>
      rng.chance(0.6)
        ? { minAmount: `${min}.00`, bonusCredits: rng.between(1, 8) }
        : { minAmount: `${min}.00`, bonusPercent: `${rng.between(5, 30)}` },
    );
}
