import { ledgerAnswer } from './ledger-answer.ts';
import { ledgerAnswerOf } from './ledger-answer-of.ts';
import { ledgerChangeBalance } from './ledger-change-balance.ts';
import { ledgerCloseFloat } from './ledger-close-float.ts';
import { ledgerCountPosted } from './ledger-count-posted.ts';
import { ledgerCountPostedRows } from './ledger-count-posted-rows.ts';
import { ledgerCreateMovement } from './ledger-create-movement.ts';
import { ledgerFlagCard } from './ledger-flag-card.ts';
import { ledgerFlagCardRecord } from './ledger-flag-card-record.ts';
import { ledgerFloatChange } from './ledger-float-change.ts';
import { ledgerFloatDraw } from './ledger-float-draw.ts';
import { ledgerFloatReportPending } from './ledger-float-report-pending.ts';
import { ledgerFloatTransfer } from './ledger-float-transfer.ts';
import { ledgerFloatView } from './ledger-float-view.ts';
import { ledgerKeyHolds } from './ledger-key-holds.ts';
import { ledgerLocalDayStart } from './ledger-local-day-start.ts';
import { ledgerOpenFloat } from './ledger-open-float.ts';
import { ledgerRebuildDailyTakings } from './ledger-rebuild-daily-takings.ts';
import { ledgerRefusal } from './ledger-refusal.ts';
import { ledgerReplay } from './ledger-replay.ts';
import { ledgerReportFloatMovement } from './ledger-report-float-movement.ts';
import { ledgerReportFloatMovements } from './ledger-report-float-movements.ts';
import { ledgerReportFloatRun } from './ledger-report-float-run.ts';
import { ledgerResolveMovement } from './ledger-resolve-movement.ts';
import { ledgerTillHeartbeat } from './ledger-till-heartbeat.ts';
import { ledgerTombstoneRefusal } from './ledger-tombstone-refusal.ts';
import { ledgerTopUpFloat } from './ledger-top-up-float.ts';
import { ledgerBlockCard } from './ledger-block-card.ts';
import { ledgerBonusFor } from './ledger-bonus-for.ts';
import { ledgerCancelCardChange } from './ledger-cancel-card-change.ts';
import { ledgerCardAccountChange } from './ledger-card-account-change.ts';
import { ledgerCardBlockView } from './ledger-card-block-view.ts';
import { ledgerCardChangeView } from './ledger-card-change-view.ts';
import { ledgerCardHeldByRules } from './ledger-card-held-by-rules.ts';
import { ledgerCardListChanged } from './ledger-card-list-changed.ts';
import { ledgerCardReadFor } from './ledger-card-read-for.ts';
import { ledgerCorrectCard } from './ledger-correct-card.ts';
import { ledgerCreateCardMovement } from './ledger-create-card-movement.ts';
import { ledgerCompensateCardMovement } from './ledger-compensate-card-movement.ts';
import { ledgerUndone } from './ledger-undone.ts';
import { ledgerPayoutSplit } from './ledger-payout-split.ts';
import { ledgerReplaceCard } from './ledger-replace-card.ts';
import { ledgerTakeBackSplit } from './ledger-take-back-split.ts';

/**
 * A type or function of the ledger's SQL, kept whole in a file of its own and made anew on
 * every migrate where any of them changed (like Flyway's repeatable migrations): a change to a
 * function is a diff of that function, never a copy of its body in a new migration.
 */
export interface Routine {
  name: string;
  /** Default 'function'. */
  kind?: 'function' | 'type';
  sql: string;
}

/**
 * Every routine, in the order they are made: types first, then a function after those whose
 * names its SQL-language body uses (PostgreSQL checks those at creation; PL/pgSQL bodies are
 * checked when they run). The schema migrations (migrations/) must have run before.
 */
export const routines: readonly Routine[] = [
  ledgerAnswer,
  ledgerRefusal,
  ledgerAnswerOf,
  ledgerReplay,
  ledgerTombstoneRefusal,
  ledgerChangeBalance,
  ledgerFlagCard,
  ledgerFlagCardRecord,
  ledgerKeyHolds,
  ledgerCardAccountChange,
  ledgerBonusFor,
  ledgerPayoutSplit,
  ledgerTakeBackSplit,
  ledgerCardListChanged,
  ledgerCardReadFor,
  ledgerCardHeldByRules,
  ledgerCardBlockView,
  ledgerCardChangeView,
  ledgerFloatChange,
  ledgerFloatTransfer,
  ledgerFloatDraw,
  ledgerFloatView,
  ledgerFloatReportPending,
  ledgerCreateMovement,
  ledgerResolveMovement,
  ledgerOpenFloat,
  ledgerTopUpFloat,
  ledgerReportFloatMovement,
  ledgerReportFloatRun,
  ledgerReportFloatMovements,
  ledgerCloseFloat,
  ledgerUndone,
  ledgerCreateCardMovement,
  ledgerCompensateCardMovement,
  ledgerBlockCard,
  ledgerReplaceCard,
  ledgerCorrectCard,
  ledgerCancelCardChange,
  ledgerTillHeartbeat,
  ledgerLocalDayStart,
  ledgerCountPosted,
  ledgerCountPostedRows,
  ledgerRebuildDailyTakings,
];

/** Names of routines that no longer exist: dropped by the next migrate. Append only. */
export const retiredRoutines: readonly string[] = [];
