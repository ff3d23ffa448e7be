/**
 * What must hold at the end of every simulated run (world.ts), once the faults stopped:
 *
 * - the ledger kept its rules (docs/cloud-api.md, "Tills"): no till created a movement of a card
 *   while another till's movement of it was pending, no movement has two compensations, no two
 *   movements the books count were planned from the same card state;
 * - the ledger: nothing pending, no card held for an operator's word, nothing resolved twice,
 *   each movement resolved by its own till or on evidence (an operator's, or a card settled at
 *   another till), and every
 *   movement's final word (posted, or voided and set right by a posted compensating movement)
 *   is what its card write did: the card holds it exactly when the books count it;
 * - each card holds what its accounts at the shops add up to, minus what machines spent
 *   offline; credits are conserved across cards, machines, pools and pending recharges; a
 *   posted recharge flags no card only its own shop ever wrote; no card's newest movement record
 *   fails to explain it (no one alters the tills' exchanges with the cards here);
 * - each till's journal has every movement done, as the ledger has it (absent: never held),
 *   and every answer it keeps is the ledger's final word;
 * - every caller was told the truth: a 200 names the write its request (or, replayed, the
 *   earlier attempt) landed, the credits asked, the amount charged, what the card held for a
 *   payout, and the card that was on the reader; a replayed 200 only once the ledger counted
 *   its movement; an error comes with no write on the card, but for CardRemovedDuringWrite; a
 *   request whose worker stayed up was answered;
 * - an Idempotency-Key moves a card once, however often its caller sends it, across restarts
 *   of its worker and with other cards on the reader (unless its worker lost its journal);
 * - liveness: a last recharge and payout of every card succeed.
 */
import { parseFloatMovementId } from '../../common/float-ids.ts';
import type { DischargeAnswer, RechargeAnswer } from '../../service/wallet/movement-engine.ts';
import { ANSWER_RETENTION_MS } from '../../service/wallet/journal-entries.ts';
import { balanceOf, truthOf, type LandedWrite, type SimCard } from './sim-cards.ts';
import type { UndoBody } from './card-scenarios.ts';
import type { ShopLedger } from './shop-ledger.ts';
import type { StoredMovement } from './sim-ledger.ts';
import type { RequestRecord, Till } from './world.ts';

export interface FinalWorld {
  ledger: ShopLedger;
  shopIds: string[];
  cards: SimCard[];
  tills: Till[];
  requests: RequestRecord[];
  writes: LandedWrite[];
  /** The last recharge and payout of each card (undefined: its till was down). */
  probes: { card: SimCard; records: (RequestRecord | undefined)[] }[];
  totalAtStart: number;
  total: number;
  /**
   * Blocked cards (block-scenarios.ts): whether the card's own shop blocked it (its last
   * requests are refused, CardBlocked), and what its accounts miss of it: what its replacement
   * moved to a new card, less what its emptying took off it.
   */
  blocks?: { blockedAtHome(card: SimCard): boolean; accountGap(card: SimCard): number };
  /**
   * Float recharges no till can report any more, held by their closed float's write-off, not
   * by a movement (float-scenarios.ts, writtenOffUnseen): the credits their card got.
   */
  writtenOff?: ReadonlyMap<string, { cardId: string; credits: number }>;
  creditCostCents: number;
}

export function checkInvariants(world: FinalWorld): string[] {
  return [
    ...ledgerKeptItsRules(world),
    ...ledgerAgreesWithCards(world),
    ...cardsAgreeWithAccounts(world),
    ...journalsAreDone(world),
    ...callersWereToldTheTruth(world),
    ...keysMoveCardsOnce(world),
    ...probesSucceeded(world),
  ];
}

/** Whether the books count a movement: posted, or voided and set right by a compensation. */
export function counted(ledger: ShopLedger, id: string): boolean {
  const movement = ledger.movements.get(id);
  const compensated = [...ledger.movements.values()].some(
    (other) => other.compensates === id && other.state === 'posted',
  );
  return (movement?.state === 'posted') !== compensated;
}

const landedWhole = (writes: LandedWrite[], id: string | undefined) =>
  writes.filter((write) => write.movementId === id && write.how === 'whole');

/**
 * The rules the ledger enforces when a movement is created (its SQL: cloud/db/routines/), seen
 * in what it holds at the end: a card's movement is created only while no other till's movement
 * of it is pending at the shop (CardMovementPending); a movement is compensated at most once
 * (MovementCompensated); and the card states the books' movements were planned from are all
 * different, since a write that landed moved the card on from its state (CardStateMovedOn).
 */
function ledgerKeptItsRules({ ledger }: FinalWorld): string[] {
  const problems: string[] = [];
  const movements = [...ledger.movements.values()];
  const what = (movement: StoredMovement) =>
    `${movement.kind} ${movement.id} of till ${movement.tillId ?? '(none)'} on ${movement.cardId}`;
  for (const [index, movement] of movements.entries()) {
    if (movement.compensates !== null || movement.tillId === null) continue;
    // In creation order: a movement created in the same millisecond another was resolved may
    // have come after it.
    const pending = movements
      .slice(0, index)
      .find(
        (other) =>
          other.shop === movement.shop &&
          other.cardId === movement.cardId &&
          other.compensates === null &&
          other.tillId !== movement.tillId &&
          (other.resolvedAt === null || other.resolvedAt > movement.createdAt),
      );
    // A float recharge is sold without the ledger (float-scenarios.ts) and only reported.
    if (pending && movement.floatId === null) {
      problems.push(`${what(movement)} was created while ${what(pending)} was pending`);
    }
  }
  const compensations = new Map<string, StoredMovement>();
  const plannedFrom = new Map<string, StoredMovement>();
  for (const movement of movements) {
    if (movement.compensates !== null) {
      const first = compensations.get(movement.compensates);
      if (first) {
        problems.push(
          `movement ${movement.compensates} is compensated twice: by ${first.id} and ${movement.id}`,
        );
      }
      compensations.set(movement.compensates, first ?? movement);
    }
  }
  for (const movement of movements) {
    const compensated = compensations.get(movement.id)?.state === 'posted';
    if (movement.state !== 'posted' || compensated || movement.cardBefore === null) continue;
    const key = `${movement.shop} ${movement.cardId} ${movement.cardBefore}`;
    const earlier = plannedFrom.get(key);
    if (earlier) {
      problems.push(
        `${what(movement)} and ${what(earlier)} are both posted, planned from the same card state ${movement.cardBefore}`,
      );
    }
    plannedFrom.set(key, earlier ?? movement);
  }
  return problems;
}

function ledgerAgreesWithCards({ ledger, writes }: FinalWorld): string[] {
  const problems: string[] = [];
  for (const movement of ledger.movements.values()) {
    const what = `movement ${movement.id} (${movement.kind} ${movement.credits} on ${movement.cardId}${movement.compensates ? `, compensating ${movement.compensates}` : ''})`;
    if (movement.state === 'pending') problems.push(`${what} is still pending`);
    if (movement.awaitsCard) problems.push(`${what} still holds its card for an operator's word`);
    if (movement.transitions > 1) problems.push(`${what} resolved ${movement.transitions} times`);
    // Only its till knows what its card write did (docs/cloud-api.md, "Tills").
    const by = movement.resolvedByTill;
    if (movement.state !== 'pending' && by !== movement.tillId && movement.evidence === null) {
      problems.push(
        `${what} was ${movement.state} by ${by === null ? 'a call naming no till' : `till ${by}`}, not its own, without evidence`,
      );
    }
    if (movement.compensates !== null || movement.state === 'pending') continue;
    const landed = landedWhole(writes, movement.id).length > 0;
    if (landed !== counted(ledger, movement.id)) {
      problems.push(
        `${what} is ${movement.state}${counted(ledger, movement.id) === (movement.state === 'posted') ? '' : ' and compensated'}, but its card write ${landed ? 'landed' : 'never landed'}`,
      );
    }
  }
  return problems;
}

function cardsAgreeWithAccounts(world: FinalWorld): string[] {
  const { ledger, cards, shopIds } = world;
  const problems: string[] = [];
  for (const card of cards) {
    const pending = [...ledger.movements.values()].some(
      (movement) => movement.cardId === card.uid && movement.state === 'pending',
    );
    if (pending) continue;
    const accounts = shopIds.reduce((sum, shop) => sum + ledger.cardAccount(shop, card.uid), 0);
    const held = balanceOf(truthOf(card));
    const gap = world.blocks?.accountGap(card) ?? 0;
    // What a float's write-off holds of the card: its account never got it.
    let writtenOff = 0;
    for (const entry of world.writtenOff?.values() ?? []) {
      if (entry.cardId === card.uid) writtenOff += entry.credits;
    }
    if (accounts + gap + writtenOff !== held + card.spentOffline) {
      problems.push(
        `card ${card.uid} holds ${held} (${card.spentOffline} spent offline) but its accounts add up to ${accounts}${gap === 0 ? '' : ` (${gap} moved to a new card, less what its emptying took off it)`}${writtenOff === 0 ? '' : ` (and ${writtenOff} a float's write-off holds)`}`,
      );
    }
  }
  if (world.total !== world.totalAtStart) {
    problems.push(
      `credits not conserved: cards + offline spending + pools + pending recharges were ${world.totalAtStart}, now ${world.total}`,
    );
  }
  // A card only its own shop's tills wrote is never above its account there.
  for (const flag of ledger.flags) {
    const card = cards.find((candidate) => candidate.uid === flag.cardId);
    if (flag.kind !== 'card-above-account' || !card) continue;
    const own =
      shopIds[card.home] === flag.shopId && [...card.writtenAt].every((s) => s === card.home);
    if (own && ledger.movements.get(flag.movementId)?.state === 'posted') {
      problems.push(
        `card ${card.uid} flagged card-above-account by recharge ${flag.movementId}, posted`,
      );
    }
  }
  // Nobody sits between a till and a card here: every value a till raises comes with its record,
  // and a record naming a voided movement is set right by a compensation, or flagged already
  // because the ledger refused that compensation.
  for (const flag of ledger.flags) {
    const refused = ledger.flags.some(
      (other) =>
        other.kind === 'compensation-refused' &&
        other.cardId === flag.cardId &&
        other.shopId === flag.shopId,
    );
    if (
      flag.kind === 'card-above-record' ||
      (flag.kind === 'record-of-voided-movement' && !refused)
    ) {
      problems.push(`card ${flag.cardId} flagged ${flag.kind} by movement ${flag.movementId}`);
    }
  }
  return problems;
}

function journalsAreDone({ ledger, tills }: FinalWorld): string[] {
  const problems: string[] = [];
  for (const till of tills) {
    if (!till.journal) {
      problems.push(`${till.name} is not running at the end`);
      continue;
    }
    for (const movement of till.journal.movements.values()) {
      if (movement.resolved === undefined) {
        problems.push(`${till.name}'s journal: movement ${movement.id} is not done`);
      }
      // What the journal took as the ledger's final word is the ledger's ('absent': it never
      // held the movement).
      const atLedger = ledger.movements.get(movement.id)?.state ?? 'absent';
      if (movement.resolved !== undefined && movement.resolved !== atLedger) {
        problems.push(
          `${till.name}'s journal has movement ${movement.id} ${movement.resolved}, the ledger ${atLedger}`,
        );
      }
      if (movement.answer && !counted(ledger, movement.id)) {
        problems.push(
          `${till.name}'s journal answered movement ${movement.id}, which the ledger has ${ledger.movements.get(movement.id)?.state ?? 'absent'}`,
        );
      }
    }
  }
  return problems;
}

/**
 * Whether a worker forgot a key between two of its requests: it lost its journal (its disk)
 * meanwhile, or the first answer is past its 24 h.
 */
function forgotten(tills: Till[], first: RequestRecord, later: RequestRecord): boolean {
  const till = tills.find((candidate) => candidate.name === first.till);
  return (
    later.at - first.at >= ANSWER_RETENTION_MS ||
    till?.disksLost.some((at) => at >= first.at && at <= later.at) === true
  );
}

function callersWereToldTheTruth(world: FinalWorld): string[] {
  const { ledger, requests, writes, tills } = world;
  const problems: string[] = [];
  const firstAnswers = new Map<string, { body: string; record: RequestRecord }>();
  for (const record of requests) {
    const what = `request ${record.n} at ${record.till} (${record.kind} ${JSON.stringify(record.request)})`;
    const outcome = record.outcome;
    if (!outcome) {
      if (record.life.alive) problems.push(`${what} was never answered`);
      continue;
    }
    if (outcome.status !== 200) {
      // The emptying of a blocked card and a replacement's pickup are movements of their own,
      // written in the request before it failed (its own movement wrote nothing).
      const own = record.trace.writes.filter((write) => !ofTheirOwn(ledger, write.movementId));
      if (own.length > 0 && outcome.code !== 'CardRemovedDuringWrite') {
        problems.push(`${what} answered ${outcome.code}, but its card write landed`);
      }
      continue;
    }
    const body = outcome.body;
    const key = `${record.till} ${record.scope}`;
    // A card holding nothing is answered with zeros, and nothing is recorded, the key neither
    // (docs/integrators.md): its key's next request runs again, as after a failure.
    const nothingRecorded = 'dischargedCredits' in body && body.dischargedCredits === 0;
    if (record.scope !== undefined) {
      const first = firstAnswers.get(key);
      const known = first && !forgotten(tills, first.record, record) ? first : undefined;
      if (known && known.body !== JSON.stringify(body)) {
        problems.push(
          `${what} answered ${JSON.stringify(body)}, the key's first answer was ${known.body}`,
        );
      }
      if (!known && !nothingRecorded) firstAnswers.set(key, { body: JSON.stringify(body), record });
    }
    if (nothingRecorded && !record.replayed) {
      // A card holding nothing: nothing is written or recorded.
      if (record.trace.writes.length > 0) problems.push(`${what} paid out 0 but wrote the card`);
      continue;
    }
    const movementId = record.trace.movementId;
    // A replayed answer is its card's (IdempotencyKeyOtherCard for any other).
    if (body.cardId !== record.trace.cardSeen) {
      problems.push(
        `${what} answered${record.replayed ? ' (replayed)' : ''} for card ${body.cardId}, with card ${record.trace.cardSeen ?? '(none)'} on the reader`,
      );
    }
    if (record.replayed && record.trace.writes.length > 0) {
      problems.push(`${what} was a replay but wrote the card`);
    }
    // A stored answer is replayed only as the ledger's final word (docs/integrators.md); a
    // float recharge's from the journal, reported or not (float-scenarios.ts checks its count).
    const float = movementId !== undefined && parseFloatMovementId(movementId) !== undefined;
    if (record.replayed && record.countedWhenAnswered !== true && !float) {
      problems.push(`${what} replayed 200 before the ledger counted movement ${movementId}`);
    }
    const landed = landedWhole(writes, movementId);
    if (landed.length !== 1 || movementId === undefined) {
      problems.push(
        `${what} answered ${JSON.stringify(body)} with ${landed.length} writes of its movement on the card`,
      );
      continue;
    }
    // A float recharge its float's write-off holds: the ledger has no movement to compare.
    const writtenOff = world.writtenOff?.has(movementId) === true;
    if (!writtenOff && !counted(ledger, movementId)) {
      problems.push(`${what} answered 200, but the ledger does not count movement ${movementId}`);
    }
    for (const problem of answerProblems(
      record,
      body,
      landed[0] as LandedWrite,
      writtenOff ? 'written-off' : ledger.movements.get(movementId),
      world.creditCostCents,
    )) {
      problems.push(`${what} answered ${JSON.stringify(body)}: ${problem}`);
    }
  }
  return problems;
}

/**
 * However often a caller sends an Idempotency-Key (its worker restarted meanwhile, its answer
 * was lost, another card was on the reader), at most one movement of the key lands on a card:
 * the others replay, settle or refuse. Only a worker that lost its journal (its disk) forgets a
 * key, and a key is remembered 24 h.
 */
function keysMoveCardsOnce({ requests, writes, tills, ledger }: FinalWorld): string[] {
  const problems: string[] = [];
  /** Per key, the request whose movement landed first (since its worker last forgot it). */
  const moved = new Map<string, { id: string; record: RequestRecord }>();
  for (const record of requests) {
    const id = record.trace.movementId;
    if (record.scope === undefined || record.replayed || id === undefined) continue;
    // A pickup or emptying the request made before its own movement is no movement of its key.
    if (ofTheirOwn(ledger, id)) continue;
    if (landedWhole(writes, id).length === 0) continue;
    const key = `${record.till} ${record.scope}`;
    const first = moved.get(key);
    if (first?.id === id) continue;
    if (first && !forgotten(tills, first.record, record)) {
      const restarted = record.life !== first.record.life ? ', its worker restarted between' : '';
      problems.push(
        `key ${record.idempotencyKey} at ${record.till} moved a card twice: movement ${first.id} (request ${first.record.n}) and ${id} (request ${record.n})${restarted}`,
      );
    } else moved.set(key, { id, record });
  }
  return problems;
}

/** What a 200 must say about the write its movement landed (and the ledger's credits). */
function answerProblems(
  record: RequestRecord,
  body: RechargeAnswer | DischargeAnswer | UndoBody,
  write: LandedWrite,
  ledgerWord: { credits: number; bonusCredits: number; amount: bigint } | undefined | 'written-off',
  costCents: number,
): string[] {
  const problems: string[] = [];
  // Written off (a float recharge nobody can report): only what the card and the answer say.
  const byLedger = ledgerWord !== 'written-off';
  const movement = byLedger ? ledgerWord : undefined;
  const before = balanceOf(write.before);
  const after = balanceOf(write.after);
  const ledgerCredits = movement?.credits;
  const amountOf = (credits: number) => (credits * costCents) / 100;
  // The ledger's euros (ten-thousandths), as the answer carries them.
  const ledgerAmount = movement === undefined ? undefined : Number(movement.amount) / 10_000;
  if (body.cardId !== write.cardId) problems.push(`the write was on card ${write.cardId}`);
  if ('refundedCredits' in body) {
    // A cashier's undo (card-scenarios.ts): what the card lost is what the ledger took back.
    if (body.credits !== after) problems.push(`the card holds ${after}`);
    if (before - after !== body.refundedCredits) problems.push(`the card lost ${before - after}`);
    if (body.refundedCredits !== ledgerCredits) problems.push(`the ledger moved ${ledgerCredits}`);
    if (body.refundedAmount !== ledgerAmount) problems.push(`the ledger refunded ${ledgerAmount}`);
  } else if ('credits' in body) {
    // With bonus tiers, a recharge by amount gets the bonus besides what was paid for.
    const bonus = body.bonusCredits ?? 0;
    if (byLedger && bonus !== (movement?.bonusCredits ?? 0))
      problems.push(`the ledger gave a bonus of ${movement?.bonusCredits}`);
    const granted = after - before - bonus;
    const asked =
      'credits' in record.request
        ? record.request.credits
        : 'amount' in record.request
          ? Math.floor((Number(record.request.amount) * 100 + 1e-6) / costCents)
          : undefined;
    if (body.credits !== after) problems.push(`the card holds ${after}`);
    if (granted !== asked) problems.push(`the card gained ${granted}, ${asked} were asked`);
    if (byLedger && granted + bonus !== ledgerCredits)
      problems.push(`the ledger moved ${ledgerCredits}`);
    if (body.rechargeAmount !== amountOf(granted))
      problems.push(`${granted} credits cost ${amountOf(granted)}`);
  } else {
    if (body.dischargedCredits !== before) problems.push(`the card held ${before}`);
    if (after !== 0) problems.push(`the card holds ${after} after the payout`);
    if (body.dischargedCredits !== ledgerCredits)
      problems.push(`the ledger moved ${ledgerCredits}`);
    // Bonus credits are paid out at nothing: the euros are what the ledger's split says, never
    // more than the credits' price.
    const paysBonus = (movement?.bonusCredits ?? 0) > 0;
    if (paysBonus && body.dischargedAmount !== ledgerAmount)
      problems.push(`the ledger paid out ${ledgerAmount}`);
    if (
      body.dischargedAmount > amountOf(body.dischargedCredits) ||
      (!paysBonus && body.dischargedAmount !== amountOf(body.dischargedCredits))
    ) {
      problems.push(
        `${body.dischargedCredits} credits are worth ${amountOf(body.dischargedCredits)}`,
      );
    }
  }
  return problems;
}

function probesSucceeded({ ledger, shopIds, probes, blocks }: FinalWorld): string[] {
  const problems: string[] = [];
  for (const { card, records } of probes) {
    const truth = truthOf(card);
    for (const record of records) {
      if (!record) {
        problems.push(`liveness: card ${card.uid}'s last requests found its till down`);
        continue;
      }
      const outcome = record.outcome;
      // A card its shop blocked is refused at every till (and emptied: block-scenarios.ts).
      const blocked = blocks?.blockedAtHome(card) === true;
      if (outcome?.status === 200 && !blocked) continue;
      const code = outcome?.status === 200 ? '200' : (outcome?.code ?? 'no answer');
      if (blocked && code === 'CardBlocked') continue;
      // Documented refusals: a corrupt card is never taken for 0; a card holding more than
      // the shop put on it is not paid out.
      if (code === 'CorruptCard' && truth.kind === 'corrupt') continue;
      const account = ledger.cardAccount(shopIds[card.home] as string, card.uid);
      if (code === 'CardAccountExceeded' && balanceOf(truth) > account) continue;
      problems.push(
        `liveness: with the faults gone, ${record.kind} of card ${card.uid} at ${record.till} answered ${code}`,
      );
    }
  }
  return problems;
}

/** A movement a request makes before its own: a blocked card's emptying, a replacement's pickup. */
function ofTheirOwn(ledger: ShopLedger, movementId: string | undefined): boolean {
  const kind = movementId === undefined ? undefined : ledger.movements.get(movementId)?.kind;
  return kind === 'block-clear' || kind === 'replacement';
}
