import type { ReaderStatus } from '../service/card/reader-manager.ts';
import type { ReaderProblemCode } from '../service/card/reader-problems.ts';
import type { SimulatorStatus } from '../service/card/simulator/card-simulator.ts';
import type { LedgerReachability } from '../service/cloud/ledger-client.ts';
import type { FloatStatus } from '../service/wallet/float-status.ts';
import type { RateLimitHit, RequestRecord } from '../service/http/activity.ts';
import type { WaitingMovement } from '../service/wallet/movement-engine.ts';
import { readerAdvice, type ReaderAdvice } from './reader-advice.ts';
import type { UpdateStatus } from './updates.ts';

/**
 * What is said of a flagged card other than the ledger's account refusal (its words are the
 * tray's default), by why: the ledger's refusal code, or the till's own finding.
 */
const SUSPECT_TEXTS: Record<string, string> = {
  CardRecordMismatch:
    'flagged suspect by the ledger (discharge refused: its records do not explain it)',
  'card-above-record': 'flagged suspect: it holds more than its newest movement record says',
  'record-of-voided-movement':
    'flagged suspect: its newest movement record names a movement found not written',
};

/**
 * A banner across the top of the window: something that went wrong outside the reader and the
 * ledger (the settings' keys locked, the window's page or a process that died, an unexpected
 * error), said with what to do.
 */
export interface Notice {
  id: string;
  level: 'error' | 'warning';
  title: string;
  text: string;
  /** The banner's button, if any. */
  action: 'unlock-settings' | 'open-log-folder' | null;
  at: string;
}

/** What the status window shows; plain data, so it crosses IPC as is. */
export interface StatusSnapshot {
  service: {
    url: string | null;
    state: 'starting' | 'running' | 'stopped' | 'error';
    error: string | null;
  };
  /** This till's id at the ledger: the running service's, else the settings' (null: none yet). */
  tillId: string | null;
  /** The name the shop gave this till in the back office (its heartbeat's answer), or null. */
  tillName: string | null;
  /**
   * The back office: its address, and while the shop has no owner account (standalone) the
   * one-time link that makes it; null before the service runs.
   */
  console: { url: string; setupUrl: string | null } | null;
  reader: {
    pcsc: ReaderStatus['pcsc'];
    name: string | null;
    readers: string[];
    problem: { code: ReaderProblemCode; message: string } | null;
    /** What the operator is told about the reader and can do; null: ready (or starting). */
    advice: ReaderAdvice | null;
  };
  card: { cardId: string; since: string } | null;
  /**
   * `suspect`: the ledger refused to pay this card out (CardAccountExceeded) and flagged it,
   * or (`suspectText` says which) its movement records do not explain it; it stays said while
   * this card is the last one seen.
   */
  lastCard: {
    cardId: string;
    credits: number | null;
    at: string;
    suspect: boolean;
    /** What the tray says of it, when not the account refusal's words (main/tray-state.ts). */
    suspectText?: string;
  } | null;
  rateLimits: {
    endpoint: string;
    count: number;
    lastAt: string;
    keyFingerprint: string | null;
    origin: string | null;
  }[];
  requests: { at: string; method: string; path: string; status: number; origin: string | null }[];
  ledger: {
    reachable: boolean | null;
    at: string | null;
    unconfirmedMovements: number;
    /**
     * Pending at the ledger until their card decides them (shown as a warning): this till's
     * wait for their card here, another till's for that till or an operator's settle, and
     * `operator` ones for an operator; `overdue` past the bound.
     */
    waitingForCard: Pick<
      WaitingMovement,
      'kind' | 'cardId' | 'credits' | 'since' | 'owner' | 'overdue'
    >[];
    /**
     * The till float (docs/operators.md, "When the internet drops"): its state and the tray's
     * line, e.g. "offline since 10:42: 7 recharges to report, float 340 of 500 credits left,
     * offline sales stop at 10:42 tomorrow"; null before the service says.
     */
    float: Pick<FloatStatus, 'state' | 'line'> | null;
  };
  /** The card simulator's cards when the service runs with it; null: a real reader is used. */
  simulator: SimulatorStatus | null;
  /** Banners, newest first. */
  notices: Notice[];
  update: UpdateStatus;
}

export const RECENT_REQUESTS = 100;

export function emptySnapshot(): StatusSnapshot {
  return {
    service: { url: null, state: 'starting', error: null },
    tillId: null,
    tillName: null,
    console: null,
    reader: { pcsc: 'stopped', name: null, readers: [], problem: null, advice: null },
    card: null,
    lastCard: null,
    rateLimits: [],
    requests: [],
    ledger: {
      reachable: null,
      at: null,
      unconfirmedMovements: 0,
      waitingForCard: [],
      float: null,
    },
    simulator: null,
    notices: [],
    update: { state: 'off' },
  };
}

/** Notices kept in the window; older ones are in the log. */
export const NOTICES_KEPT = 5;

/**
 * Folds the service's events into the window's snapshot. Pure: each function returns a new
 * snapshot, so main/ can push it to the window after every event (no polling).
 */
export const statusModel = {
  service(snapshot: StatusSnapshot, service: StatusSnapshot['service']): StatusSnapshot {
    return { ...snapshot, service };
  },

  till(snapshot: StatusSnapshot, tillId: string | null): StatusSnapshot {
    return { ...snapshot, tillId };
  },

  tillName(snapshot: StatusSnapshot, tillName: string | null): StatusSnapshot {
    return { ...snapshot, tillName };
  },

  console(
    snapshot: StatusSnapshot,
    address: { url: string; setupUrl: string | null },
  ): StatusSnapshot {
    return { ...snapshot, console: address.url ? { ...address } : null };
  },

  reader(
    snapshot: StatusSnapshot,
    status: ReaderStatus,
    platform: NodeJS.Platform = process.platform,
  ): StatusSnapshot {
    const card = status.card
      ? { cardId: status.card.cardId, since: status.card.since.toISOString() }
      : null;
    const lastCard =
      card && snapshot.lastCard?.cardId !== card.cardId
        ? { cardId: card.cardId, credits: null, at: card.since, suspect: false }
        : snapshot.lastCard;
    return {
      ...snapshot,
      reader: {
        pcsc: status.pcsc,
        name: status.reader,
        readers: status.readers,
        problem: status.problem && { code: status.problem.code, message: status.problem.message },
        advice: readerAdvice(status, platform),
      },
      card,
      lastCard,
    };
  },

  /**
   * A card answer seen in a request (readcard, writecard...) tells the credits on it; a
   * discharge the ledger refused (`suspect`), or a card whose movement records do not explain
   * it (`reason`), marks the card until another card is seen.
   */
  cardCredits(
    snapshot: StatusSnapshot,
    cardId: string,
    credits: number,
    at: Date,
    suspect = false,
    reason?: string,
  ): StatusSnapshot {
    const same = snapshot.lastCard?.cardId === cardId ? snapshot.lastCard : null;
    const flagged = suspect || (same?.suspect ?? false);
    const suspectText = (suspect && reason && SUSPECT_TEXTS[reason]) || same?.suspectText;
    return {
      ...snapshot,
      lastCard: {
        cardId,
        credits,
        at: at.toISOString(),
        suspect: flagged,
        ...(flagged && suspectText ? { suspectText } : {}),
      },
    };
  },

  request(snapshot: StatusSnapshot, record: RequestRecord): StatusSnapshot {
    const entry = {
      at: record.at.toISOString(),
      method: record.method,
      path: record.path,
      status: record.status,
      origin: record.origin,
    };
    return { ...snapshot, requests: [entry, ...snapshot.requests].slice(0, RECENT_REQUESTS) };
  },

  rateLimited(snapshot: StatusSnapshot, hit: RateLimitHit): StatusSnapshot {
    const others = snapshot.rateLimits.filter((row) => row.endpoint !== hit.endpoint);
    const previous = snapshot.rateLimits.find((row) => row.endpoint === hit.endpoint);
    const row = {
      endpoint: hit.endpoint,
      count: (previous?.count ?? 0) + 1,
      lastAt: hit.at.toISOString(),
      keyFingerprint: hit.keyFingerprint,
      origin: hit.origin,
    };
    return {
      ...snapshot,
      rateLimits: [row, ...others].sort((a, b) => a.endpoint.localeCompare(b.endpoint)),
    };
  },

  simulator(snapshot: StatusSnapshot, simulator: SimulatorStatus | null): StatusSnapshot {
    return { ...snapshot, simulator };
  },

  /** A new banner, or one replaced by id (the same cause said again). */
  notice(snapshot: StatusSnapshot, notice: Notice): StatusSnapshot {
    const others = snapshot.notices.filter((shown) => shown.id !== notice.id);
    return { ...snapshot, notices: [notice, ...others].slice(0, NOTICES_KEPT) };
  },

  dismiss(snapshot: StatusSnapshot, id: string): StatusSnapshot {
    return { ...snapshot, notices: snapshot.notices.filter((shown) => shown.id !== id) };
  },

  update(snapshot: StatusSnapshot, update: UpdateStatus): StatusSnapshot {
    return { ...snapshot, update };
  },

  /** The till float's state changed. */
  float(snapshot: StatusSnapshot, status: FloatStatus): StatusSnapshot {
    return {
      ...snapshot,
      ledger: { ...snapshot.ledger, float: { state: status.state, line: status.line } },
    };
  },

  ledger(
    snapshot: StatusSnapshot,
    reachability: LedgerReachability,
    unconfirmedMovements: number,
    waitingForCard: readonly WaitingMovement[],
  ): StatusSnapshot {
    return {
      ...snapshot,
      ledger: {
        ...snapshot.ledger,
        reachable: reachability.reachable,
        at: reachability.at?.toISOString() ?? null,
        unconfirmedMovements,
        waitingForCard: waitingForCard.map(({ kind, cardId, credits, since, owner, overdue }) => ({
          kind,
          cardId,
          credits,
          since,
          owner,
          overdue,
        })),
      },
    };
  },
};
