import type {
  BonusQuote,
  CardBlockAnswer,
  CardChangeAnswer,
  CardList,
} from '../../common/ledger-contract.ts';
import type { Database } from '../db/database.ts';
import { BlocklistFeeds, type BlocklistKey, type SignedBlocklist } from './blocklist-feed.ts';
import { blockCard, cardListSeq, readCardList, unblockCard } from './card-blocks.ts';
import { cancelCardChange, correctCard, replaceCard, type ByWhom } from './card-changes.ts';
import { quoteRecharge } from './card-rules.ts';

/**
 * A shop's card rules as the ledger's API offers them (docs/cloud-api.md, "Lost cards,
 * refunds and bonuses"), for one customer each: blocks, the card list tills poll, replacements,
 * corrections, bonus quotes, and the signed blocklist feed for machines.
 */
export class Cards {
  readonly feeds: BlocklistFeeds;

  constructor(private readonly db: Database) {
    this.feeds = new BlocklistFeeds(db);
  }

  block(customerId: string, cardId: string, by: ByWhom): Promise<CardBlockAnswer> {
    return blockCard(this.db, customerId, cardId, by);
  }

  unblock(customerId: string, cardId: string, by: ByWhom): Promise<CardBlockAnswer> {
    return unblockCard(this.db, customerId, cardId, by);
  }

  /** The card list, or undefined when its sequence number is `unlessSeq` (nothing changed). */
  async list(customerId: string, unlessSeq?: number): Promise<CardList | undefined> {
    if (unlessSeq !== undefined && (await cardListSeq(this.db, customerId)) === unlessSeq) {
      return undefined;
    }
    return readCardList(this.db, customerId);
  }

  replace(
    customerId: string,
    input: { id: string; cardId: string; newCardId: string } & ByWhom,
  ): Promise<CardChangeAnswer> {
    return replaceCard(this.db, customerId, input);
  }

  correct(
    customerId: string,
    input: { id: string; cardId: string; recharge: string; credits: number } & ByWhom,
  ): Promise<CardChangeAnswer> {
    return correctCard(this.db, customerId, input);
  }

  cancelChange(customerId: string, input: { id: string } & ByWhom): Promise<CardChangeAnswer> {
    return cancelCardChange(this.db, customerId, input);
  }

  quote(customerId: string, amount: string): Promise<BonusQuote> {
    return quoteRecharge(this.db, customerId, amount);
  }

  blocklist(customerId: string): Promise<SignedBlocklist> {
    return this.feeds.signed(customerId);
  }

  blocklistKey(customerId: string): Promise<BlocklistKey> {
    return this.feeds.publicKey(customerId);
  }
}
