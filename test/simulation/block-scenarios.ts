/**
 * Blocked cards and replacements in the shop simulation (docs/testing.md, "Blocks and
 * replacements"), with `--cards`: at random moments an operator blocks a card its customer
 * reported lost, at the ledger (the admin's call); every till runs the production card-list
 * watcher (service/cloud/card-list-watcher.ts) over the simulated network and clock, polling
 * the shop's list with its ETag every 30 s; the lost card is found and presented at tills (a
 * till that knows the block refuses it, CardBlocked, and empties it in the POST; one that does
 * not know yet is refused by the ledger, which refuses reservations and payouts of a blocked card
 * at once, and empties it then); the operator moves the blocked card's account to a new card,
 * and the new card is presented at two tills at once, under all of world.ts's faults. Its draws
 * come from a stream of its own.
 *
 * Invariants (checked at the end, with the world's, which count the emptyings and pickups in the
 * conservation of credits and in each card's account):
 * - the ledger never created a movement that sells to or pays out a blocked card after its
 *   block (only the emptying, and compensations of earlier movements);
 * - a till whose watcher had an answer to a poll sent after the block refused the card from its
 *   list (a watcher that ignores a block is seen at its next request);
 * - the found card holds nothing once it reached a till online with the faults gone, and every
 *   request with it there answered CardBlocked;
 * - every replacement is picked up, once: one posted movement applies it, and its card
 *   gained it once (the world's card-against-ledger invariant).
 */
import type { CardChange, CardChangeAnswer } from '../../common/ledger-contract.ts';
import { balanceOf, truthOf, type SimCard } from './sim-cards.ts';
import { Rng, type Scheduler } from './scheduler.ts';
import type { ShopLedger } from './shop-ledger.ts';
import { then, type HttpAnswer } from './sim-network.ts';
import type { RequestRecord, Till } from './world.ts';

/** How often a till polls the card list (the service's default: a block known within a minute). */
export const CARD_LIST_EVERY_MS = 30_000;

/** The world as the blocks see it (world.ts). */
export interface BlockWorld {
  sched: Scheduler;
  ledger: ShopLedger;
  cards: SimCard[];
  tillsOf: (shop: number) => Till[];
  /**
   * The tills a customer may take the card to (world.ts: with shared card keys, only its
   * shop's while a movement of it is pending there).
   */
  tillsFor: (card: SimCard) => Till[];
  note: (line: string) => void;
  reached: (path: string) => void;
  present: (card: SimCard, till: Till) => void;
  ask: (till: Till, kind: 'recharge' | 'discharge', request: object) => void;
  /** A new card of the shop, holding nothing, never seen by the ledger. */
  newCard: (shop: number, draw: Rng) => SimCard;
  /**
   * The shop's operator POSTs to the ledger's v1 API (as the back office or a script does):
   * the model answers at once, the real ledger once its work is done.
   */
  operatorCall: (shop: number, url: string, body: object) => HttpAnswer | Promise<HttpAnswer>;
  newId: (draw: Rng) => string;
}

interface Block {
  card: SimCard;
  shop: number;
  /** Virtual ms since 1970 when the ledger took it. */
  at: number;
  change?: CardChange;
  newCard?: SimCard;
  /** The operator found nothing to move (the card's account was empty). */
  nothingToReplace?: boolean;
}

/** A refused call's error code. */
function codeOf(answer: HttpAnswer): string {
  return String((answer.body as { error?: string } | undefined)?.error);
}

export class BlockScenario {
  readonly rng: Rng;
  readonly blocks: Block[] = [];
  /** What the world saw go wrong while it ran (a till selling a card it knew blocked). */
  readonly problems: string[] = [];
  /** Each shop's book when the run began (bookOf). */
  #booksAtStart: number[] = [];

  constructor(seed: number) {
    this.rng = new Rng((seed ^ 0x0b10c4ed) >>> 0);
  }

  /** The block of the card at the shop, if the operator blocked it. */
  blockOf(cardId: string, shop: number): Block | undefined {
    return this.blocks.find((block) => block.card.uid === cardId && block.shop === shop);
  }

  /** Whether the card is blocked at its own shop (its last requests are refused). */
  blockedAtHome(card: SimCard): boolean {
    return this.blockOf(card.uid, card.home) !== undefined;
  }

  /** The operator's blocks, the found cards and the replacements, at random moments. */
  schedule(world: BlockWorld, until: number): void {
    const draw = this.rng;
    if (!draw.chance(0.85)) return;
    for (let i = draw.between(1, 2); i > 0; i -= 1) {
      world.sched.at(draw.between(3_000, until - 12_000), () => this.#block(world), null, draw);
    }
  }

  #block(world: BlockWorld): void | Promise<void> {
    const draw = this.rng;
    const free = world.cards.filter(
      (card) =>
        !card.lost &&
        card.at === null &&
        !this.blocks.some((block) => block.card === card || block.newCard === card),
    );
    if (free.length === 0) return;
    const card = draw.pick(free);
    const shop = card.home;
    // Its customer reported it lost: no one presents it until it is found.
    card.lost = true;
    const blocked = world.operatorCall(shop, `/v1/cards/${card.uid}/block`, {
      reason: 'reported lost',
    });
    return then(blocked, (answer) => {
      if (answer.status !== 200) {
        world.note(`operator: block of ${card.uid} refused (${answer.status} ${codeOf(answer)})`);
        card.lost = false;
        return;
      }
      const block: Block = { card, shop, at: world.sched.now() };
      this.blocks.push(block);
      world.note(`operator: card ${card.uid} blocked at shop ${shop} (reported lost)`);
      world.reached('card-blocked');
      world.sched.at(draw.between(500, 8_000), () => this.#replace(world, block), null, draw);
      world.sched.at(draw.between(2_000, 20_000), () => this.#found(world, block), null, draw);
    });
  }

  /**
   * The operator moves the blocked card's account to a new card, once no movement of it is
   * pending (tried again every few seconds), and its customer presents the new card at two
   * tills of the shop at the same step: the first till's request is on its way when the card
   * reaches the second, and the card often comes back to the first.
   */
  #replace(world: BlockWorld, block: Block): void | Promise<void> {
    const draw = this.rng;
    return then(this.replaceNow(world, block), (waiting) => {
      if (!waiting) {
        if (block.change === undefined && !block.nothingToReplace) {
          world.sched.at(draw.between(2_000, 6_000), () => this.#replace(world, block), null, draw);
        }
        return;
      }
      world.sched.at(draw.between(200, 5_000), () => this.presentAtTwo(world, block), null, draw);
    });
  }

  /** The replacement at the ledger: whether the change waits for the new card now. */
  replaceNow(world: BlockWorld, block: Block): boolean | Promise<boolean> {
    if (block.change !== undefined) return block.change.state === 'waiting';
    if (block.nothingToReplace) return false;
    const draw = this.rng;
    const newCard = world.newCard(block.shop, draw);
    const replaced = world.operatorCall(block.shop, `/v1/cards/${block.card.uid}/replace`, {
      id: world.newId(draw),
      newCardId: newCard.uid,
      reason: 'lost card replaced',
    });
    return then(replaced, (answer) => {
      if (answer.status >= 300) {
        const code = codeOf(answer);
        world.note(`operator: replacement of ${block.card.uid} refused (${code})`);
        if (code === 'NothingToReplace') block.nothingToReplace = true;
        return false;
      }
      const { change } = answer.body as CardChangeAnswer;
      block.change = change;
      block.newCard = newCard;
      world.cards.push(newCard);
      world.note(
        `operator: the account of ${block.card.uid} (${change.credits} credits) waits for new card ${newCard.uid}`,
      );
      world.reached('card-replaced');
      return true;
    });
  }

  /** The new card at two tills of its shop at the same step (one till: once). */
  presentAtTwo(world: BlockWorld, block: Block): void {
    const draw = this.rng;
    const card = block.newCard;
    const open = world
      .tillsFor(card ?? block.card)
      .filter((till) => till.shop === block.shop && till.engine);
    if (!card || open.length === 0) return;
    const first = draw.pick(open);
    const second = open.length > 1 ? draw.pick(open.filter((till) => till !== first)) : undefined;
    const use = (till: Till) => {
      world.present(card, till);
      if (draw.chance(0.7)) world.ask(till, 'recharge', { credits: draw.between(1, 10) });
      else world.ask(till, 'discharge', {});
    };
    use(first);
    if (!second) return;
    world.reached('new-card-at-two-tills');
    world.sched.at(draw.between(0, 300), () => use(second), null, draw);
    // Often brought back to the first till, whose request may have lost it.
    if (draw.chance(0.5)) {
      world.sched.at(draw.between(500, 4_000), () => world.present(card, first), null, draw);
    }
  }

  /**
   * The lost card is found: spent at a machine sometimes, and presented at one or two tills of
   * its shop (now and then of the other shop), each asked to recharge or pay it out.
   */
  #found(world: BlockWorld, block: Block): void {
    const draw = this.rng;
    const { card } = block;
    card.lost = false;
    world.note(`card ${card.uid}, blocked, is found`);
    world.reached('blocked-card-found');
    const shop = draw.chance(0.85) ? block.shop : 1 - block.shop;
    let at = 0;
    for (let i = draw.between(1, 2); i > 0; i -= 1) {
      world.sched.at(
        at,
        () => {
          const open = world.tillsFor(card).filter((till) => till.shop === shop);
          if (open.length === 0) return;
          const till = draw.pick(open);
          world.present(card, till);
          if (draw.chance(0.6)) world.ask(till, 'recharge', { credits: draw.between(1, 20) });
          else world.ask(till, 'discharge', {});
        },
        null,
        draw,
      );
      at += draw.between(300, 8_000);
    }
  }

  /**
   * With the faults gone: the replacements not made yet are made (nothing of the card is
   * pending now), and each new card still waited for is presented at two tills at once.
   */
  settle(world: BlockWorld, from = 0): void | Promise<void> {
    const block = this.blocks[from];
    if (!block) return;
    const waiting =
      block.change === undefined ? this.replaceNow(world, block) : this.#waiting(world, block);
    return then(waiting, (now) => {
      if (now) this.presentAtTwo(world, block);
      return this.settle(world, from + 1);
    });
  }

  #waiting(world: BlockWorld, block: Block): boolean {
    const change = block.change && world.ledger.cardChanges.get(block.change.id);
    return change?.state === 'waiting';
  }

  /**
   * A request with a card the till's shop blocked: a till whose watcher had an answer to a
   * poll sent after the block knows it (the product's promise: one poll), and refuses the card.
   */
  asked(record: RequestRecord, till: Till, knows: boolean, polledAfter: number | undefined): void {
    const card = record.card;
    const block = card && this.blockOf(card.uid, till.shop);
    if (!block) return;
    if (polledAfter !== undefined && polledAfter >= block.at && !knows) {
      this.problems.push(
        `request ${record.n} at ${till.name}: its card list, polled after the block of ${block.card.uid}, does not name it`,
      );
    }
    record.knewBlock = knows;
  }

  /** Each credit the ledger's emptyings took off cards, less what replacements put on. */
  bookDelta(ledger: ShopLedger): number {
    let delta = 0;
    for (const movement of ledger.movements.values()) {
      if (movement.state !== 'posted') continue;
      if (movement.kind === 'block-clear') delta += movement.credits;
      if (movement.kind === 'replacement') delta -= movement.credits;
    }
    return delta;
  }

  /**
   * What a card's accounts miss of what it holds and machines spent from it: what left them
   * for a new card, less what its emptying took off the card (the account stays for a
   * replacement).
   */
  accountGap(ledger: ShopLedger, card: SimCard): number {
    let gap = 0;
    for (const movement of ledger.movements.values()) {
      if (movement.cardId !== card.uid || movement.state !== 'posted') continue;
      if (movement.kind === 'block-clear') gap -= movement.credits;
    }
    for (const change of ledger.cardChanges.values()) {
      if (change.fromCard === card.uid && change.state !== 'cancelled') gap += change.credits;
    }
    return gap;
  }

  /**
   * A shop's book at the ledger, with nothing pending: its pool, its card accounts and the
   * replacements waiting for new cards. Credits move between them and never leave: a recharge
   * (bonus included) from the pool to an account, a payout or refund back, an emptying nowhere
   * (the account stays), a replacement from one card's account to the change and on to the
   * new card's.
   */
  bookOf(ledger: ShopLedger, shopId: string, cards: readonly SimCard[]): number {
    const accounts = cards.reduce((sum, card) => sum + ledger.cardAccount(shopId, card.uid), 0);
    const waiting = [...ledger.cardChanges.values()]
      .filter((c) => c.shop === shopId && c.kind === 'replacement' && c.state === 'waiting')
      .reduce((sum, c) => sum + c.credits, 0);
    return (ledger.shops.get(shopId)?.credits ?? 0) + accounts + waiting;
  }

  /** The books when the run begins (the cards imported). */
  openBooks(ledger: ShopLedger, shopIds: readonly string[], cards: readonly SimCard[]): void {
    this.#booksAtStart = shopIds.map((shopId) => this.bookOf(ledger, shopId, cards));
  }

  check(
    ledger: ShopLedger,
    shopIds: readonly string[],
    cards: readonly SimCard[],
    requests: RequestRecord[],
  ): string[] {
    const problems = [...this.problems];
    for (const [shop, shopId] of shopIds.entries()) {
      const book = this.bookOf(ledger, shopId, cards);
      if (book !== this.#booksAtStart[shop]) {
        problems.push(
          `shop ${shop}'s book (pool, card accounts, replacements waiting) was ${this.#booksAtStart[shop]}, now ${book}`,
        );
      }
    }
    for (const block of this.blocks) {
      const { card } = block;
      const shopId = shopIds[block.shop];
      for (const movement of ledger.movements.values()) {
        if (movement.shop !== shopId || movement.cardId !== card.uid) continue;
        if (movement.kind === 'block-clear' || movement.compensates !== null) continue;
        if (Date.parse(movement.createdAt) < block.at) continue;
        problems.push(
          `the ledger created ${movement.kind} ${movement.id} (${movement.state}) of card ${card.uid} after its block`,
        );
      }
      // The found card reached a till of its shop online with the faults gone (its liveness
      // probes): emptied, and refused.
      const truth = truthOf(card);
      if (truth.kind !== 'corrupt' && balanceOf(truth) !== 0) {
        problems.push(`blocked card ${card.uid} still holds ${balanceOf(truth)} at the end`);
      }
      for (const record of requests) {
        if (record.card !== card || record.trace.shop !== block.shop) continue;
        const status = record.outcome?.status;
        // (The request may have taken another card: it waits for the reader.)
        const took = record.trace.cardSeen === card.uid;
        if (record.knewBlock === true && took && status === 200 && !record.replayed) {
          problems.push(
            `request ${record.n} at ${record.till} answered 200, its till knowing ${card.uid} blocked`,
          );
        }
      }
      const change = block.change && ledger.cardChanges.get(block.change.id);
      if (!change) continue;
      const pickups = [...ledger.movements.values()].filter(
        (movement) => movement.applies === change.id && movement.state === 'posted',
      );
      if (change.state !== 'applied' || pickups.length !== 1) {
        problems.push(
          `replacement ${change.id} onto ${change.cardId} is ${change.state}, picked up by ${pickups.length} posted movements`,
        );
      }
    }
    return problems;
  }
}
