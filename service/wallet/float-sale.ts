import type { CardWallet, WalletCard } from '../card/card-face.ts';
import { planWrite } from '../card/wallet-card.ts';
import type { Idempotency } from './journal-entries.ts';
import type { MovementBook } from './movement-book.ts';
import type { Reservation } from './movement-requests.ts';
import type { FloatPlan } from './till-floats.ts';

/** A recharge paid from the float (TillFloats.plan), on the card as read just before. */
export interface FloatSaleInput {
  keyFingerprint: string;
  idempotency: Idempotency | undefined;
  wallet: CardWallet;
  plan: FloatPlan;
  /** The balance the card gets (throws to refuse it). */
  balanceAfter: (credits: number) => number;
  /** The POS's reference of the sale (`Pos-Reference`), kept with the movement and reported. */
  reference?: string;
}

/**
 * Begins a recharge paid from the till's float (docs/integrators.md, "When the internet
 * drops"): journals it with its float movement id, plans the card write with its evidence (the
 * movement id and credits, docs/card-format.md), and journals that before the card is
 * touched. No ledger call: MovementRequests.commit() writes the card and answers, and the
 * recharge is reported afterwards. The request owns the movement from before its first line;
 * `release` ends that if it goes no further.
 */
export async function startFloatSale(
  book: MovementBook,
  card: WalletCard,
  input: FloatSaleInput,
  release: (id: string) => void,
): Promise<Reservation> {
  const { plan, wallet } = input;
  const id = plan.id;
  book.owned.set(id, input.keyFingerprint);
  try {
    const intent = planWrite(wallet.before, input.balanceAfter(plan.credits), id, { float: true });
    // Both lines in one fdatasync before the card is touched: a crash keeps both, the first
    // alone (as a crash between two appends would) or neither, and the card is untouched.
    await book.append(
      {
        type: 'started',
        id,
        kind: 'recharge',
        cardId: card.cardId,
        keyFingerprint: input.keyFingerprint,
        idempotency: input.idempotency,
        ...(input.reference === undefined ? {} : { reference: input.reference }),
        float: {
          floatId: plan.float.floatId,
          seq: plan.seq,
          credits: plan.credits,
          creditCost: plan.creditCost,
          cardBefore: wallet.before,
          ...(plan.bonusCredits > 0 ? { bonusCredits: plan.bonusCredits } : {}),
        },
      },
      {
        type: 'reserved',
        id,
        credits: plan.credits,
        amount: plan.amount,
        ...(plan.bonusCredits > 0 ? { bonusCredits: plan.bonusCredits } : {}),
        intent,
      },
    );
    return { movement: book.movement(id), intent };
  } catch (error) {
    release(id);
    throw error;
  }
}
