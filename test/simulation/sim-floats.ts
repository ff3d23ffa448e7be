/**
 * The till floats of contract v1 (docs/cloud-api.md, "Till floats") in the simulated ledger:
 * what cloud/db/routines/ledger_*float* do, as an in-memory state machine over SimLedger's
 * shops, movements and card accounts. sim-ledger-contract.test.ts compares its answers with the
 * real ledger's.
 */
import { parseStoredDecimal } from '../../common/decimal.ts';
import { MAX_FLOAT_SEQ, parseFloatMovementId } from '../../common/float-ids.ts';
import type {
  Float,
  FloatClosing,
  FloatMovementReport,
  FloatReportFlag,
  FloatReportResult,
  FloatSettings,
  FloatTopUpAnswer,
  OpenFloatRequest,
  FloatTopUpRequest,
  Till,
} from '../../common/ledger-contract.ts';
import { pgTimestamptz } from './pg-text.ts';
import type { SimLedger, SimShop, StoredMovement } from './sim-ledger.ts';
import { SimLedgerError } from './sim-ledger.ts';

export const NO_FLOAT: FloatSettings = {
  size: 0,
  lowWater: 0,
  offlineCap: null,
  offlineLimitSeconds: 86_400,
  cardTypes: ['classic', 'desfire'],
};

export interface SimFloat {
  id: string;
  shop: string;
  tillId: string;
  prefix: string;
  state: 'open' | 'closed';
  credits: number;
  granted: number;
  idsIssued: number;
  openRequest: string;
  openedAt: string;
  closedAt: string | null;
  closedBy: 'till' | 'operator' | null;
  returned: number;
  writtenOff: number;
  writeOffReason: string | null;
  overdrawn: number;
}

interface TopUp {
  id: string;
  floatId: string;
  requested: number;
  granted: number;
  ids: number;
  at: string;
}

/** A refusal, with the real ledger's `detail` in its words (where its SQL gives one). */
const refuse = (code: string, status: number, detail?: string) =>
  new SimLedgerError(status, code, detail);

/** FloatOfAnotherTill: a till topping up or closing another till's float. */
const anotherTills = (float: SimFloat) =>
  refuse('FloatOfAnotherTill', 409, `float ${float.id} is till ${float.tillId}'s`);

/**
 * The n-th uuid (from 1) the ledger draws where the real one calls gen_random_uuid() (a float's
 * id prefix and id): a series, so a seed replays, and the same on both ledgers (real-ledger.ts
 * puts the same series in place of gen_random_uuid). Its first 12 hex digits differ for each n.
 */
export function ledgerUuid(n: number): string {
  const head = n.toString(16).padStart(12, 'f');
  const tail = n.toString(16).padStart(12, '0');
  return `${head.slice(0, 8)}-${head.slice(8)}-4000-8000-${tail}`;
}

export class SimFloats {
  readonly floats = new Map<string, SimFloat>();
  readonly #topUps = new Map<string, TopUp>();
  /** Top-ups asked again with their id (the first answer lost, or the till restarted). */
  topUpsAskedAgain = 0;
  /** Per shop and till: when it was first heard from and last reported. */
  readonly tills = new Map<string, { firstSeenAt: string; lastReportAt: string | null }>();
  readonly #ledger: SimLedger;
  readonly #now: () => number;
  /** How many uuids this ledger drew (ledgerUuid). */
  #drawn = 0;

  constructor(ledger: SimLedger, now: () => number) {
    this.#ledger = ledger;
    this.#now = now;
  }

  /** The ledger's next random uuid: the next of the series (ledgerUuid). */
  #uuid(): string {
    return ledgerUuid((this.#drawn += 1));
  }

  settings(shop: SimShop): FloatSettings {
    return shop.float ?? NO_FLOAT;
  }

  /** What the shop's open floats hold. */
  floatCredits(shopId: string): number {
    let sum = 0;
    for (const float of this.floats.values()) {
      if (float.shop === shopId && float.state === 'open') sum += float.credits;
    }
    return sum;
  }

  open(apiKey: string, request: OpenFloatRequest): { float: Float; created: boolean } {
    const shop = this.#ledger.authenticate(apiKey);
    const tillId = request.tillId.toLowerCase();
    const requestId = request.requestId.toLowerCase();
    const earlier = [...this.floats.values()].find(
      (float) => float.shop === shop.id && float.openRequest === requestId,
    );
    if (earlier) {
      if (earlier.tillId !== tillId) {
        throw refuse(
          'FloatRequestConflict',
          409,
          `open request ${requestId} opened float ${earlier.id} of till ${earlier.tillId}`,
        );
      }
      return { float: this.view(earlier), created: false };
    }
    const open = this.openFloatOf(shop.id, tillId);
    if (open) {
      throw refuse(
        'FloatOpen',
        409,
        `till ${tillId} holds float ${open.id}, open since ${pgTimestamptz(open.openedAt)}: close it first`,
      );
    }
    if (this.settings(shop).size === 0) {
      throw refuse('FloatsOff', 409, 'this shop gives its tills no float (its float size is 0)');
    }
    this.heardFrom(shop.id, tillId);
    // Drawn as ledger_open_float draws them: a prefix unique among all floats, then the id.
    const prefixOf = (uuid: string) => uuid.replaceAll('-', '').slice(0, 12);
    let prefix = prefixOf(this.#uuid());
    while ([...this.floats.values()].some((float) => float.prefix === prefix))
      prefix = prefixOf(this.#uuid());
    const float: SimFloat = {
      id: this.#uuid(),
      shop: shop.id,
      tillId,
      prefix,
      state: 'open',
      credits: 0,
      granted: 0,
      idsIssued: Math.min(request.ids ?? 100, MAX_FLOAT_SEQ),
      openRequest: requestId,
      openedAt: this.#iso(),
      closedAt: null,
      closedBy: null,
      returned: 0,
      writtenOff: 0,
      writeOffReason: null,
      overdrawn: 0,
    };
    this.floats.set(float.id, float);
    this.#grant(shop, float, Math.min(this.settings(shop).size, shop.credits));
    return { float: this.view(float), created: true };
  }

  topUp(apiKey: string, floatId: string, request: FloatTopUpRequest): FloatTopUpAnswer {
    const shop = this.#ledger.authenticate(apiKey);
    const key = `${shop.id} ${request.id.toLowerCase()}`;
    let topUp = this.#topUps.get(key);
    const ids = request.ids ?? 0;
    if (topUp) {
      this.topUpsAskedAgain += 1;
      if (
        topUp.floatId !== floatId.toLowerCase() ||
        topUp.requested !== request.credits ||
        topUp.ids !== ids
      ) {
        throw refuse(
          'TopUpConflict',
          409,
          `top-up ${topUp.id} was asked for ${topUp.requested} credits and ${topUp.ids} ids of float ${topUp.floatId}`,
        );
      }
    } else {
      const float = this.#float(shop.id, floatId);
      if (request.tillId !== undefined && request.tillId.toLowerCase() !== float.tillId) {
        throw anotherTills(float);
      }
      if (float.state === 'closed') {
        throw refuse(
          'FloatClosed',
          409,
          `float ${float.id} was closed ${pgTimestamptz(float.closedAt ?? '')}`,
        );
      }
      const granted = Math.max(
        0,
        Math.min(request.credits, this.settings(shop).size - float.credits, shop.credits),
      );
      topUp = {
        id: request.id.toLowerCase(),
        floatId: float.id,
        requested: request.credits,
        granted,
        ids,
        at: this.#iso(),
      };
      this.#topUps.set(key, topUp);
      this.#grant(shop, float, granted);
      float.idsIssued = Math.min(MAX_FLOAT_SEQ, float.idsIssued + ids);
    }
    const { floatId: of, ...shown } = topUp;
    return { topUp: shown, float: this.view(this.#float(shop.id, of)) };
  }

  report(
    apiKey: string,
    reporter: string,
    movements: FloatMovementReport[],
  ): { results: FloatReportResult[] } {
    const { shop, revoked } = this.#ledger.authenticateReport(apiKey);
    return { results: this.#report(shop, reporter.toLowerCase(), movements, revoked) };
  }

  close(
    apiKey: string,
    floatId: string,
    tillId: string,
    movements: FloatMovementReport[],
  ): FloatClosing {
    const { shop, revoked } = this.#ledger.authenticateReport(apiKey);
    return this.#close(shop, floatId, tillId.toLowerCase(), movements, 0, null, revoked);
  }

  /** An operator closes a float (the admin CLI): final report, write-off, the rest returned. */
  closeByOperator(
    shopId: string,
    floatId: string,
    input: { movements: FloatMovementReport[]; writeOff: number; reason: string | null },
  ): FloatClosing {
    const shop = this.#ledger.shops.get(shopId) as SimShop;
    return this.#close(shop, floatId, null, input.movements, input.writeOff, input.reason, false);
  }

  get(apiKey: string, floatId: string): Float {
    const shop = this.#ledger.authenticate(apiKey);
    return this.view(this.#float(shop.id, floatId));
  }

  tillsOf(apiKey: string): Till[] {
    const shop = this.#ledger.authenticate(apiKey);
    return [...this.tills.entries()]
      .filter(([key]) => key.startsWith(`${shop.id} `))
      .map(([key, till]) => this.#till(shop.id, key.split(' ')[1] as string, till));
  }

  openFloatOfTill(apiKey: string, tillId: string): Float {
    const shop = this.#ledger.authenticate(apiKey);
    const float = this.openFloatOf(shop.id, tillId.toLowerCase());
    if (!float) throw refuse('FloatNotFound', 404);
    return this.view(float);
  }

  openFloatOf(shopId: string, tillId: string): SimFloat | undefined {
    return [...this.floats.values()].find(
      (float) => float.shop === shopId && float.tillId === tillId && float.state === 'open',
    );
  }

  /**
   * Whether a card may carry float recharges not all reported (ledger_float_report_pending):
   * an open float with a movement on the card at s, and an id below s nothing names. What is in
   * the way (of the float opened first), in the real ledger's words, or undefined.
   */
  reportPending(shopId: string, cardId: string): string | undefined {
    const tops = new Map<string, number>();
    for (const movement of this.#ledger.movements.values()) {
      if (movement.shop !== shopId || movement.cardId !== cardId || movement.floatId === null)
        continue;
      tops.set(movement.floatId, Math.max(tops.get(movement.floatId) ?? 0, movement.floatSeq ?? 0));
    }
    for (const float of this.floats.values()) {
      const top = tops.get(float.id);
      if (top === undefined || float.state !== 'open') continue;
      const below = [...this.#ledger.movements.values()].filter(
        (movement) => movement.floatId === float.id && (movement.floatSeq ?? 0) < top,
      ).length;
      if (below < top - 1) {
        return `card ${cardId} holds float recharges of till ${float.tillId} (float ${float.id}) that are not all reported: ids below ${top} are missing`;
      }
    }
    return undefined;
  }

  /** A pending float movement voided: back to its open float, or to the pool. */
  release(shop: SimShop, movement: StoredMovement): void {
    const float = movement.floatId === null ? undefined : this.floats.get(movement.floatId);
    if (float?.state === 'open') float.credits += movement.credits;
    else shop.credits += movement.credits;
  }

  view(float: SimFloat): Float {
    const ofFloat = [...this.#ledger.movements.values()].filter(
      (movement) => movement.floatId === float.id,
    );
    const tally = (keep: (movement: StoredMovement) => boolean) => {
      const kept = ofFloat.filter(keep);
      return {
        count: kept.length,
        credits: kept.reduce((sum, movement) => sum + movement.credits, 0),
      };
    };
    return {
      id: float.id,
      tillId: float.tillId,
      state: float.state,
      credits: float.credits,
      granted: float.granted,
      idPrefix: float.prefix,
      idsIssued: float.idsIssued,
      openedAt: float.openedAt,
      closedAt: float.closedAt,
      closedBy: float.closedBy,
      returned: float.returned,
      writtenOff: float.writtenOff,
      writeOffReason: float.writeOffReason,
      overdrawn: float.overdrawn,
      lastReportAt: this.tills.get(`${float.shop} ${float.tillId}`)?.lastReportAt ?? null,
      reported: tally((movement) => movement.state === 'posted' && movement.reportedAs !== 'found'),
      found: tally((movement) => movement.state === 'posted' && movement.reportedAs === 'found'),
      undecided: tally((movement) => movement.state === 'pending'),
      notWritten: ofFloat.filter((movement) => movement.state === 'voided').length,
      unaccountedIds: float.idsIssued - ofFloat.length,
    };
  }

  #till(
    shopId: string,
    tillId: string,
    till: { firstSeenAt: string; lastReportAt: string | null },
  ): Till {
    const float = this.openFloatOf(shopId, tillId);
    return { tillId, ...till, float: float ? this.view(float) : null };
  }

  /** A till the shop heard from (a movement or float naming it). */
  heardFrom(shopId: string, tillId: string): void {
    if (!this.tills.has(`${shopId} ${tillId}`)) {
      this.tills.set(`${shopId} ${tillId}`, { firstSeenAt: this.#iso(), lastReportAt: null });
    }
  }

  #float(shopId: string, floatId: string): SimFloat {
    const float = this.floats.get(floatId.toLowerCase());
    if (!float || float.shop !== shopId) throw refuse('FloatNotFound', 404);
    return float;
  }

  #grant(shop: SimShop, float: SimFloat, credits: number): void {
    if (credits <= 0) return;
    shop.credits -= credits;
    float.credits += credits;
    float.granted += credits;
  }

  #close(
    shop: SimShop,
    floatId: string,
    tillId: string | null,
    movements: FloatMovementReport[],
    writeOff: number,
    reason: string | null,
    revoked: boolean,
  ): FloatClosing {
    const float = this.#float(shop.id, floatId);
    if (tillId !== null && tillId !== float.tillId) throw anotherTills(float);
    if (float.state === 'closed') return { closed: false, results: [], float: this.view(float) };
    const undo = this.#ledger.snapshot();
    const results = this.#report(shop, tillId, movements, revoked);
    if (writeOff > float.credits) {
      // Nothing of the call stays.
      this.#ledger.restore(undo);
      throw refuse(
        'WriteOffBeyondFloat',
        422,
        `float ${float.id} holds ${float.credits} credits after the final report; ${writeOff} cannot be written off`,
      );
    }
    float.credits -= writeOff;
    float.writtenOff += writeOff;
    shop.credits += float.credits;
    float.returned += float.credits;
    float.credits = 0;
    float.state = 'closed';
    float.closedAt = this.#iso();
    float.closedBy = tillId === null ? 'operator' : 'till';
    float.writeOffReason = writeOff > 0 ? reason : null;
    return { closed: true, results, float: this.view(float) };
  }

  #report(
    shop: SimShop,
    reporter: string | null,
    movements: FloatMovementReport[],
    revoked: boolean,
  ): FloatReportResult[] {
    if (reporter !== null) {
      this.heardFrom(shop.id, reporter);
      (this.tills.get(`${shop.id} ${reporter}`) as { lastReportAt: string | null }).lastReportAt =
        this.#iso();
    }
    return movements.map((movement) => this.#reportOne(shop, reporter, movement, revoked));
  }

  #reportOne(
    shop: SimShop,
    reporter: string | null,
    item: FloatMovementReport,
    revoked: boolean,
  ): FloatReportResult {
    const id = item.id.toLowerCase();
    const parsed = parseFloatMovementId(id);
    const float =
      parsed &&
      [...this.floats.values()].find(
        (candidate) => candidate.shop === shop.id && candidate.prefix === parsed.prefix,
      );
    if (
      parsed &&
      !float &&
      [...this.floats.values()].some((other) => other.prefix === parsed.prefix)
    ) {
      return { id, outcome: 'refused', flags: ['other-shop'] };
    }
    if (!parsed || !float || parsed.seq > float.idsIssued) {
      this.#ledger.flagCard(shop.id, item.cardId, 'forged-float-movement', id);
      return { id, outcome: 'refused', flags: ['forged-id'] };
    }
    const found = item.found === true;
    const as = found
      ? 'found'
      : reporter === null
        ? 'operator'
        : reporter === float.tillId
          ? 'till'
          : undefined;
    if (as === undefined) return { id, outcome: 'refused', flags: ['other-till'] };
    const flags: FloatReportFlag[] = revoked ? ['key-revoked'] : [];
    if (this.#ledger.cardRules.blocked(shop.id, item.cardId)) flags.push('card-blocked');
    const bonus = item.bonusCredits ?? 0;
    const existing = this.#ledger.movements.get(id);
    if (existing) {
      if (
        existing.shop !== shop.id ||
        existing.floatId !== float.id ||
        existing.cardId !== item.cardId ||
        existing.credits !== item.credits ||
        (!found && existing.reportedAs !== 'found' && existing.bonusCredits !== bonus) ||
        (existing.state === 'posted' && item.card === 'not-written') ||
        (existing.state === 'voided' && item.card === 'written')
      ) {
        return { id, outcome: 'refused', state: existing.state, flags: ['conflict'] };
      }
      if (existing.state === 'pending' && item.card !== 'undecided') {
        const posted = item.card === 'written';
        existing.state = posted ? 'posted' : 'voided';
        existing.resolvedAt = this.#iso();
        existing.transitions += 1;
        existing.resolvedByTill = reporter;
        existing.reportFlags = [...existing.reportFlags, ...flags];
        if (posted) {
          existing.occurredAt = new Date(item.occurredAt ?? existing.resolvedAt).toISOString();
          if (found) {
            existing.reportedAs = 'found';
            existing.evidence = `found on card ${item.cardId} at till ${reporter}`;
          }
          this.#ledger.changeCardAccount(
            shop.id,
            item.cardId,
            item.credits,
            existing.bonusCredits,
            existing.paidAmount,
          );
        } else {
          this.release(shop, existing);
        }
        return { id, outcome: 'recorded', state: existing.state, flags };
      }
      return {
        id,
        outcome: 'known',
        state: existing.state,
        flags: existing.reportFlags as FloatReportFlag[],
      };
    }
    const cost = item.creditCost ?? shop.creditCost;
    if (item.creditCost === undefined) flags.push('cost-estimated');
    else if (bonus > this.#ledger.cardRules.bonusFor(shop, item.credits - bonus, cost)) {
      flags.push('bonus-above-tiers');
    }
    const paid = BigInt(item.credits - bonus) * parseStoredDecimal(cost);
    const state =
      item.card === 'written' ? 'posted' : item.card === 'not-written' ? 'voided' : 'pending';
    const now = this.#iso();
    const stored = this.#ledger.store({
      id,
      shop: shop.id,
      kind: 'recharge',
      cardId: item.cardId,
      credits: item.credits,
      requestedAmount: null,
      creditCost: cost,
      state,
      createdAt: now,
      resolvedAt: state === 'pending' ? null : now,
      transitions: 0,
      tillId: float.tillId,
      cardBefore: item.cardBefore ?? null,
      compensates: null,
      resolvedByTill: state === 'pending' ? null : reporter,
      evidence: found ? `found on card ${item.cardId} at till ${reporter}` : null,
      awaitsCard: false,
      cardEvidence: null,
      occurredAt: state === 'posted' ? new Date(item.occurredAt ?? now).toISOString() : null,
      floatId: float.id,
      floatSeq: parsed.seq,
      reportedAs: as,
      reportFlags: [],
      bonusCredits: bonus,
      amount: paid,
      paidAmount: paid,
      refunds: null,
      applies: null,
      tillTime: null,
      reference: item.reference ?? null,
    });
    if (state !== 'voided') flags.push(...this.#draw(float, item.credits));
    if (state === 'posted') {
      this.#ledger.changeCardAccount(shop.id, item.cardId, item.credits, bonus, paid);
    }
    stored.reportFlags = [...flags];
    return { id, outcome: 'recorded', state, flags };
  }

  /** ledger_float_draw: a float movement's credits, from its float whatever happened since. */
  #draw(float: SimFloat, credits: number): FloatReportFlag[] {
    const flags: FloatReportFlag[] = [];
    let over: number;
    if (float.state === 'closed') {
      flags.push('float-closed');
      const back = Math.min(credits, float.writtenOff);
      float.writtenOff -= back;
      float.credits += back;
      over = credits - back;
    } else {
      over = Math.max(0, credits - float.credits);
    }
    if (over > 0) {
      flags.push('beyond-float');
      float.overdrawn += over;
      float.credits += over;
    }
    float.credits -= credits;
    return flags;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}
