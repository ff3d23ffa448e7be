import type {
  BonusQuote,
  CardBlockAnswer,
  CardChangeAnswer,
  CardList,
  HolderLabelAnswer,
} from '../../common/ledger-contract.ts';
import { actorText, appendAudit, type AuditAction, type AuditActor } from '../audit/audit-log.ts';
import type { Database, Queryable } from '../db/database.ts';
import { BlocklistFeeds, type BlocklistKey, type SignedBlocklist } from './blocklist-feed.ts';
import { blockCard, cardListSeq, readCardList, unblockCard } from './card-blocks.ts';
import { cancelCardChange, correctCard, replaceCard, type ByWhom } from './card-changes.ts';
import { deleteHolderLabel, setHolderLabel } from './card-holders.ts';
import { quoteRecharge } from './card-rules.ts';
import { ledgerErrors } from '../errors.ts';
import { findCustomer } from '../records.ts';

/** Who acts on a card (the audit log's actor: a key, the CLI's user, a console operator), and why. */
export interface CardActor {
  actor: AuditActor;
  reason: string;
}

/**
 * A shop's card rules as the ledger offers them (docs/cloud-api.md, "Lost cards, refunds and
 * bonuses"), for one customer each: blocks, the card list tills poll, replacements,
 * corrections, bonus quotes, and the signed blocklist feed for machines. The ledger's API, the
 * admin CLI and the console all act through these, so each block, replacement, correction and
 * cancel writes its audit log row (who and why) in its own transaction, once: a call that
 * changes nothing (the same request again) writes none.
 */
export class Cards {
  readonly feeds: BlocklistFeeds;

  constructor(private readonly db: Database) {
    this.feeds = new BlocklistFeeds(db);
  }

  block(customerId: string, cardId: string, by: CardActor): Promise<CardBlockAnswer> {
    return this.audited(customerId, by, 'card.block', async (tx, who) => {
      const answer = await blockCard(tx, customerId, cardId, who);
      return { answer, changed: answer.changed, subject: cardId, detail: { seq: answer.seq } };
    });
  }

  unblock(customerId: string, cardId: string, by: CardActor): Promise<CardBlockAnswer> {
    return this.audited(customerId, by, 'card.unblock', async (tx, who) => {
      const answer = await unblockCard(tx, customerId, cardId, who);
      return { answer, changed: answer.changed, subject: cardId, detail: { seq: answer.seq } };
    });
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
    input: { id: string; cardId: string; newCardId: string },
    by: CardActor,
  ): Promise<CardChangeAnswer> {
    return this.audited(customerId, by, 'card.replace', async (tx, who) =>
      changeAudited(await replaceCard(tx, customerId, { ...input, ...who })),
    );
  }

  correct(
    customerId: string,
    input: { id: string; cardId: string; recharge: string; credits: number },
    by: CardActor,
  ): Promise<CardChangeAnswer> {
    return this.audited(customerId, by, 'card.correct', async (tx, who) =>
      changeAudited(await correctCard(tx, customerId, { ...input, ...who })),
    );
  }

  cancelChange(customerId: string, id: string, by: CardActor): Promise<CardChangeAnswer> {
    return this.audited(customerId, by, 'card.cancel-change', async (tx, who) =>
      changeAudited(await cancelCardChange(tx, customerId, { id, ...who })),
    );
  }

  /**
   * Sets the card's holder label, or deletes it (`label` null). The audit row says which,
   * never the label: a label deleted on request is gone from the ledger.
   */
  holderLabel(
    customerId: string,
    cardId: string,
    label: string | null,
    by: { actor: AuditActor; reason?: string | null },
  ): Promise<HolderLabelAnswer> {
    return this.db.transaction(async (tx) => {
      if (!(await findCustomer(tx, customerId))) throw ledgerErrors.customerNotFound(customerId);
      const changed =
        label === null
          ? await deleteHolderLabel(tx, customerId, cardId)
          : await setHolderLabel(tx, customerId, cardId, label, actorText(by.actor));
      if (changed) {
        await appendAudit(tx, {
          actor: by.actor,
          reason: by.reason ?? null,
          customerId,
          action: 'card.holder-label',
          subject: cardId,
          detail: { label: label === null ? 'deleted' : 'set' },
        });
      }
      return { changed, cardId, holderLabel: label };
    });
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

  /** Runs a card action and, when it changed something, appends its audit row, in one transaction. */
  private audited<T>(
    customerId: string,
    by: CardActor,
    action: AuditAction,
    run: (
      tx: Queryable,
      who: ByWhom,
    ) => Promise<{ answer: T; changed: boolean; subject: string; detail: Record<string, unknown> }>,
  ): Promise<T> {
    return this.db.transaction(async (tx) => {
      const done = await run(tx, { by: actorText(by.actor), reason: by.reason });
      if (done.changed) {
        await appendAudit(tx, {
          actor: by.actor,
          reason: by.reason,
          customerId,
          action,
          subject: done.subject,
          detail: done.detail,
        });
      }
      return done.answer;
    });
  }
}

/** A card change's audit row: its id, the cards and the credits it moves. */
function changeAudited(answer: CardChangeAnswer) {
  const { change } = answer;
  return {
    answer,
    changed: answer.changed,
    subject: change.id,
    detail: {
      kind: change.kind,
      cardId: change.cardId,
      fromCard: change.fromCard,
      corrects: change.corrects,
      credits: change.credits,
      bonusCredits: change.bonusCredits,
      paidAmount: change.paidAmount,
      state: change.state,
    },
  };
}
