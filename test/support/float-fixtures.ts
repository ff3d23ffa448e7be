import { floatMovementId } from '../../common/float-ids.ts';
import type { FloatSettings } from '../../common/ledger-contract.ts';
import type { LedgerCustomer } from '../../service/cloud/ledger-client.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';

/** The till, its float ids' prefix and the start of the clock the float unit tests share. */
export const TILL = '00000000-0000-4000-8000-00000000a001';
export const PREFIX = 'a1b2c3d4e5f6';
export const START = Date.parse('2026-11-26T10:00:00.000Z');

/** A float of 200 credits, topped up below 50; offline: 40 a recharge, for an hour. */
export const SETTINGS: FloatSettings = {
  size: 200,
  lowWater: 50,
  offlineCap: 40,
  offlineLimitSeconds: 3600,
  cardTypes: ['classic', 'desfire'],
};

/** The shop with that float, as the ledger's customer answer gives it. */
export const SHOP = {
  customerId: 'shop-1',
  name: 'A',
  credits: 1000,
  creditCost: '0.50',
  float: SETTINGS,
} as unknown as LedgerCustomer;

/**
 * Puts into `movements` a float sale of `float-1` (number `seq` of PREFIX's ids, `credits`
 * credits) whose card write is committed and not reported yet, as the journal folds it.
 */
export function floatSale(movements: Map<string, Movement>, seq: number, credits: number): void {
  const id = floatMovementId(PREFIX, seq);
  movements.set(id, {
    id,
    kind: 'recharge',
    cardId: '04A1',
    keyFingerprint: 'fp-1',
    float: { floatId: 'float-1', seq, credits, creditCost: '0.50', cardBefore: 'classic:v1:x' },
    reserved: { credits },
    card: 'committed',
  } as unknown as Movement);
}
