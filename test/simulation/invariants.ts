/**
 * What must hold at the end of every simulated run (world.ts), once the faults stopped:
 *
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
 *   payout; a replayed 200 only once the ledger counted its movement; an error comes with no
 *   write on the card, but for CardRemovedDuringWrite; a request whose worker stayed up was
 *   answered;
 * - liveness: a last recharge and payout of every card succeed.
 */
import type { DischargeAnswer, RechargeAnswer } from '../../service/wallet/movement-engine.ts';
import { balanceOf, truthOf, type LandedWrite, type SimCard } from './sim-cards.ts';
import type { SimLedger } from './sim-ledger.ts';
import type { RequestRecord, Till } from './world.ts';

export interface FinalWorld {
  ledger: SimLedger;
  shopIds: string[];
  cards: SimCard[];
  tills: Till[];
  requests: RequestRecord[];
  writes: LandedWrite[];
  /** The last recharge and payout of each card (undefined: its till was down). */
  probes: { card: SimCard; records: (RequestRecord | undefined)[] }[];
  totalAtStart: number;
  total: number;
  creditCostCents: number;
}

export function checkInvariants(world: FinalWorld): string[] {
  return [
    ...ledgerAgreesWithCards(world),
    ...cardsAgreeWithAccounts(world),
    ...journalsAreDone(world),
    ...callersWereToldTheTruth(world),
    ...probesSucceeded(world),
  ];
}

/** Whether the books count a movement: posted, or voided and set right by a compensation. */
export function counted(ledger: SimLedger, id: string): boolean {
  const movement = ledger.movements.get(id);
  const compensated = [...ledger.movements.values()].some(
    (other) => other.compensates === id && other.state === 'posted',
  );
  return (movement?.state === 'posted') !== compensated;
}

const landedWhole = (writes: LandedWrite[], id: string | undefined) =>
  writes.filter((write) => write.movementId === id && write.how === 'whole');

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
    if (accounts !== held + card.spentOffline) {
      problems.push(
        `card ${card.uid} holds ${held} (${card.spentOffline} spent offline) but its accounts add up to ${accounts}`,
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

function callersWereToldTheTruth(world: FinalWorld): string[] {
  const { ledger, requests, writes } = world;
  const problems: string[] = [];
  const firstAnswers = new Map<string, string>();
  for (const record of requests) {
    const what = `request ${record.n} at ${record.till} (${record.kind} ${JSON.stringify(record.request)})`;
    const outcome = record.outcome;
    if (!outcome) {
      if (record.life.alive) problems.push(`${what} was never answered`);
      continue;
    }
    if (outcome.status !== 200) {
      if (record.trace.writes.length > 0 && outcome.code !== 'CardRemovedDuringWrite') {
        problems.push(`${what} answered ${outcome.code}, but its card write landed`);
      }
      continue;
    }
    const body = outcome.body;
    const key = `${record.till} ${record.scope}`;
    if (record.scope !== undefined) {
      const first = firstAnswers.get(key);
      if (first !== undefined && first !== JSON.stringify(body)) {
        problems.push(
          `${what} answered ${JSON.stringify(body)}, the key's first answer was ${first}`,
        );
      }
      firstAnswers.set(key, first ?? JSON.stringify(body));
    }
    if ('dischargedCredits' in body && body.dischargedCredits === 0 && !record.replayed) {
      // A card holding nothing: nothing is written or recorded.
      if (record.trace.writes.length > 0) problems.push(`${what} paid out 0 but wrote the card`);
      continue;
    }
    const movementId = record.trace.movementId;
    if (record.replayed && record.trace.writes.length > 0) {
      problems.push(`${what} was a replay but wrote the card`);
    }
    // A stored answer is replayed only as the ledger's final word (docs/integrators.md).
    if (record.replayed && record.countedWhenAnswered !== true) {
      problems.push(`${what} replayed 200 before the ledger counted movement ${movementId}`);
    }
    const landed = landedWhole(writes, movementId);
    if (landed.length !== 1 || movementId === undefined) {
      problems.push(
        `${what} answered ${JSON.stringify(body)} with ${landed.length} writes of its movement on the card`,
      );
      continue;
    }
    if (!counted(ledger, movementId)) {
      problems.push(`${what} answered 200, but the ledger does not count movement ${movementId}`);
    }
    const credits = ledger.movements.get(movementId)?.credits;
    for (const problem of answerProblems(
      record,
      body,
      landed[0] as LandedWrite,
      credits,
      world.creditCostCents,
    )) {
      problems.push(`${what} answered ${JSON.stringify(body)}: ${problem}`);
    }
  }
  return problems;
}

/** What a 200 must say about the write its movement landed (and the ledger's credits). */
function answerProblems(
  record: RequestRecord,
  body: RechargeAnswer | DischargeAnswer,
  write: LandedWrite,
  ledgerCredits: number | undefined,
  costCents: number,
): string[] {
  const problems: string[] = [];
  const before = balanceOf(write.before);
  const after = balanceOf(write.after);
  const amountOf = (credits: number) => (credits * costCents) / 100;
  if (body.cardId !== write.cardId) problems.push(`the write was on card ${write.cardId}`);
  if ('credits' in body) {
    const granted = after - before;
    const asked =
      'credits' in record.request
        ? record.request.credits
        : 'amount' in record.request
          ? Math.floor((Number(record.request.amount) * 100 + 1e-6) / costCents)
          : undefined;
    if (body.credits !== after) problems.push(`the card holds ${after}`);
    if (granted !== asked) problems.push(`the card gained ${granted}, ${asked} were asked`);
    if (granted !== ledgerCredits) problems.push(`the ledger moved ${ledgerCredits}`);
    if (body.rechargeAmount !== amountOf(granted))
      problems.push(`${granted} credits cost ${amountOf(granted)}`);
  } else {
    if (body.dischargedCredits !== before) problems.push(`the card held ${before}`);
    if (after !== 0) problems.push(`the card holds ${after} after the payout`);
    if (body.dischargedCredits !== ledgerCredits)
      problems.push(`the ledger moved ${ledgerCredits}`);
    if (body.dischargedAmount !== amountOf(body.dischargedCredits)) {
      problems.push(
        `${body.dischargedCredits} credits are worth ${amountOf(body.dischargedCredits)}`,
      );
    }
  }
  return problems;
}

function probesSucceeded({ ledger, shopIds, probes }: FinalWorld): string[] {
  const problems: string[] = [];
  for (const { card, records } of probes) {
    const truth = truthOf(card);
    for (const record of records) {
      if (!record) {
        problems.push(`liveness: card ${card.uid}'s last requests found its till down`);
        continue;
      }
      const outcome = record.outcome;
      if (outcome?.status === 200) continue;
      const code = outcome?.code ?? 'no answer';
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
