/**
 * Planning a write for any card type (the card face, card-face.ts): a write is planned from
 * `before`, the text a card's wallet reads as, so that any till can redo the plan from the
 * ledger's record. Each card type's own rules are in classic-wallet.ts and
 * desfire/desfire-wallet-format.ts.
 */
import type { WriteIntent } from './card-face.ts';
import {
  classicBalanceBefore,
  classicStateAfter,
  isClassicBefore,
  planClassicWrite,
} from './classic-wallet.ts';
import {
  desfireBalanceBefore,
  isDesfireBefore,
  planDesfireWrite,
} from './desfire/desfire-wallet-format.ts';

/**
 * The write that takes a card holding `before` to `balance`; a float recharge's (`float`)
 * carries its evidence on the card (its movement id and credits: docs/card-format.md). Pure:
 * the same movement planned again from the ledger's record is the same write. RangeError for
 * a `before` no card type here reads (a programmer's error, or a movement from a till with
 * another card format).
 */
export function planWrite(
  before: string,
  balance: number,
  movementId: string,
  { float = false }: { float?: boolean } = {},
): WriteIntent {
  if (isClassicBefore(before)) return planClassicWrite(before, balance, movementId, float);
  if (isDesfireBefore(before)) return planDesfireWrite(before, balance, movementId, float);
  throw new RangeError(`no card type reads the wallet state "${before}"`);
}

/** What a card held when `before` was read. */
export function balanceBefore(before: string): number {
  if (isClassicBefore(before)) return classicBalanceBefore(before);
  if (isDesfireBefore(before)) return desfireBalanceBefore(before);
  throw new RangeError(`no card type reads the wallet state "${before}"`);
}

/** Whether some card type here reads `before` (a movement's `cardBefore` from the ledger). */
export function isKnownBefore(before: string): boolean {
  return isClassicBefore(before) || isDesfireBefore(before);
}

/**
 * The text a card's wallet reads as once `intent` landed, as a later movement planned from it
 * carries it (`cardBefore`); undefined for a DESFire write, whose record names its movement.
 */
export function stateAfter(intent: WriteIntent): string | undefined {
  return intent.type === 'desfire' ? undefined : classicStateAfter(intent);
}
