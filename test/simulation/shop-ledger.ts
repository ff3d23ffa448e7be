/**
 * What the shop simulation (world.ts) sees of a ledger besides the tills' HTTP calls: its
 * movements, pools, card accounts and flags as they stand, for the workload's choices and the
 * invariants; and what the provider does outside the tills (shops, card imports, revoked keys,
 * an operator's word). Two ledgers answer it: the in-memory model (sim-ledger.ts), and the
 * real one, cloud/ledger.ts on PGlite with the migrations' SQL (real-ledger.ts).
 */
import type { CardFlagKind } from '../../common/ledger-contract.ts';
import type { SimShop, StoredMovement } from './sim-ledger.ts';

export interface ShopLedger {
  readonly shops: ReadonlyMap<string, SimShop>;
  /** Every movement, in the order they were created. */
  readonly movements: ReadonlyMap<string, StoredMovement>;
  /** Every flag raised on a card, in order. */
  readonly flags: readonly {
    kind: CardFlagKind;
    movementId: string;
    cardId: string;
    shopId: string;
  }[];
  /** What a discharge of this card at this shop may still take. */
  cardAccount(shopId: string, cardId: string): number;
  addShop(shop: SimShop, keys: string[]): void | Promise<void>;
  /** Gives a card an account at a shop, as `card-wallet-cloud card import` does. */
  importCard(shopId: string, cardId: string, credits: number): void | Promise<void>;
  /** Revokes an API key, as the provider does once a till no longer needs it. */
  revokeKey(apiKey: string): void | Promise<void>;
  /**
   * The provider's admin command: an operator posts or voids a movement with evidence, naming
   * no till (so without the card: docs/cloud-api.md, "Tills").
   */
  decide(id: string, state: 'posted' | 'voided', evidence: string): void | Promise<void>;
}

/** Which ledger a run uses: the in-memory model, or the real one's SQL. */
export type LedgerKind = 'model' | 'sql';
