/**
 * What the shop simulation (world.ts) sees of a ledger besides the tills' HTTP calls: its
 * movements, pools, card accounts and flags as they stand, for the workload's choices and the
 * invariants; and what the provider does outside the tills (shops, card imports, revoked keys,
 * an operator's word). Two ledgers answer it: the in-memory model (sim-ledger.ts), and the
 * real one, cloud/ledger.ts on PGlite with the migrations' SQL (real-ledger.ts).
 */
import type {
  CardChange,
  CardFlagKind,
  FloatClosing,
  FloatMovementReport,
} from '../../common/ledger-contract.ts';
import type { SimFloat } from './sim-floats.ts';
import type { SimShop, StoredMovement } from './sim-ledger.ts';

/** A shop's till floats as the float scenarios (float-scenarios.ts) read and close them. */
export interface ShopFloats {
  /** Every float, by id: what it holds, was written off and drawn beyond it. */
  readonly floats: ReadonlyMap<string, SimFloat>;
  /** Top-ups asked again with an id answered before (a lost answer); the model counts them. */
  readonly topUpsAskedAgain: number;
  /** An operator closes a float its till cannot (`card-wallet-cloud float close`). */
  closeByOperator(
    shopId: string,
    floatId: string,
    input: { movements: FloatMovementReport[]; writeOff: number; reason: string | null },
  ): FloatClosing | Promise<FloatClosing>;
}

/** A card change as the block scenarios (block-scenarios.ts) read it. */
export type ShopCardChange = Pick<
  CardChange,
  'id' | 'kind' | 'cardId' | 'fromCard' | 'credits' | 'bonusCredits' | 'state'
> & { shop: string };

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
  readonly floats: ShopFloats;
  /** The card changes (replacements, corrections), by id, as the ledger holds them. */
  readonly cardChanges: ReadonlyMap<string, ShopCardChange>;
  /** What a discharge of this card at this shop may still take. */
  cardAccount(shopId: string, cardId: string): number;
  /** The bonus credits the shop's card accounts hold. */
  bonusHeld(shopId: string): number;
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
  /** What `card-wallet-cloud check` finds wrong in the books (the real ledger's SQL only). */
  check?(): Promise<string[]>;
}

/** Which ledger a run uses: the in-memory model, or the real one's SQL. */
export type LedgerKind = 'model' | 'sql';
