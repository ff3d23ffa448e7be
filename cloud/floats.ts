import { appendAudit, type AuditActor } from './audit/audit-log.ts';
import type { Database, Queryable } from './db/database.ts';
import { sqlState } from './db/database.ts';
import { LedgerError, ledgerErrors } from './errors.ts';
import { toIso } from './records.ts';
import type {
  Float,
  FloatClosing,
  FloatMovementReport,
  FloatReportAnswer,
  FloatReportResult,
  FloatTopUpAnswer,
  OpenFloatRequest,
  FloatTopUpRequest,
  Till,
} from '../common/ledger-contract.ts';

/** Movement ids a float hands out with its open or a top-up, unless asked for another count. */
export const DEFAULT_FLOAT_IDS = 100;
/** The most ids one open or top-up hands out. */
export const MAX_FLOAT_IDS = 1000;
/** The most movements one report carries. */
export const MAX_REPORT_MOVEMENTS = 500;

export interface OpenedFloat {
  float: Float;
  /** False when the same open request was answered before. */
  created: boolean;
}

/**
 * The till floats of contract v1 (docs/cloud-api.md, "Till floats"), for one authenticated
 * customer each: open, top up, report the float's movements, close; and what the ledger shows
 * of a shop's tills and floats. Every change is one statement, a function of
 * cloud/db/routines/ holding its transaction. `keyHash`: the caller's key, checked by the call
 * itself (see Ledger.createMovement); a report and a close accept a revoked key.
 */
export class Floats {
  constructor(private readonly db: Database) {}

  async open(
    customerId: string,
    request: OpenFloatRequest,
    keyHash?: string,
  ): Promise<OpenedFloat> {
    const answer = await this.call<{ float: RawFloat; created: boolean }>(
      'SELECT ledger_open_float($1, $2, $3, $4, $5) AS answer',
      [
        customerId,
        request.tillId.toLowerCase(),
        request.requestId.toLowerCase(),
        request.ids ?? DEFAULT_FLOAT_IDS,
        keyHash ?? null,
      ],
    );
    return { float: toFloat(answer.float), created: answer.created };
  }

  async topUp(
    customerId: string,
    floatId: string,
    request: FloatTopUpRequest,
    keyHash?: string,
  ): Promise<FloatTopUpAnswer> {
    const answer = await this.call<{ topUp: FloatTopUpAnswer['topUp']; float: RawFloat }>(
      'SELECT ledger_top_up_float($1, $2, $3, $4, $5, $6, $7) AS answer',
      [
        customerId,
        floatId.toLowerCase(),
        request.id.toLowerCase(),
        request.credits,
        request.ids ?? 0,
        request.tillId?.toLowerCase() ?? null,
        keyHash ?? null,
      ],
    );
    return {
      topUp: { ...answer.topUp, at: toIso(answer.topUp.at) },
      float: toFloat(answer.float),
    };
  }

  /** A batch of float movements, each answered on its own, in one transaction. */
  async report(
    customerId: string,
    tillId: string,
    movements: readonly FloatMovementReport[],
    keyHash?: string,
  ): Promise<FloatReportAnswer> {
    const answer = await this.call<{ results: FloatReportResult[] }>(
      'SELECT ledger_report_float_movements($1, $2, $3::jsonb, $4) AS answer',
      [
        customerId,
        tillId.toLowerCase(),
        JSON.stringify(movements.map(normalized)),
        keyHash ?? null,
      ],
    );
    return { results: answer.results.map(toResult) };
  }

  /** The till closes its float: its final report, then what is left goes back to the pool. */
  close(
    customerId: string,
    floatId: string,
    tillId: string,
    movements: readonly FloatMovementReport[],
    keyHash?: string,
  ): Promise<FloatClosing> {
    return this.#close(this.db, customerId, floatId, tillId, movements, 0, null, keyHash);
  }

  /**
   * An operator closes a float whose till cannot (gone for good, or back without its journal):
   * a final report of what the operator knows, `writeOff` credits written off with a reason
   * (what the till sold without a report that reached the ledger; at most what the float holds
   * after the report), the rest back to the pool. One transaction, with its audit log row
   * (`float.write-off`, whose reason is required, or `float.close`) naming `actor` (by
   * default the admin CLI's, as it names a user it cannot tell); a float closed already is
   * answered as it is, and writes no row.
   */
  closeByOperator(
    customerId: string,
    floatId: string,
    input: { movements: readonly FloatMovementReport[]; writeOff: number; reason: string | null },
    actor: AuditActor = { kind: 'cli', user: 'unknown' },
  ): Promise<FloatClosing> {
    return this.db.transaction(async (tx) => {
      const closing = await this.#close(
        tx,
        customerId,
        floatId,
        null,
        input.movements,
        input.writeOff,
        input.reason?.trim() || null,
        undefined,
      );
      if (closing.closed) {
        await appendAudit(tx, {
          actor,
          reason: input.reason,
          customerId,
          action: input.writeOff > 0 ? 'float.write-off' : 'float.close',
          subject: `float:${closing.float.id}`,
          detail: {
            tillId: closing.float.tillId,
            reported: closing.results.length,
            writtenOff: closing.float.writtenOff,
            returned: closing.float.returned,
          },
        });
      }
      return closing;
    });
  }

  async get(customerId: string, floatId: string): Promise<Float> {
    const { rows } = await this.db.query<{ view: RawFloat | null }>(
      'SELECT ledger_float_view($1, $2) AS view',
      [customerId, floatId.toLowerCase()],
    );
    const view = rows[0]?.view;
    if (!view) throw ledgerErrors.floatNotFound();
    return toFloat(view);
  }

  /** The shop's tills, each with its open float (null when none), in the order first seen. */
  tills(customerId: string): Promise<Till[]> {
    return this.#tills(this.db, customerId, undefined);
  }

  /** One till of the shop and its open float; NotFound when the shop never heard from it. */
  async till(customerId: string, tillId: string): Promise<Till> {
    const [till] = await this.#tills(this.db, customerId, tillId.toLowerCase());
    if (!till) throw ledgerErrors.notFound();
    return till;
  }

  /** A till's open float; FloatNotFound when it holds none. */
  async openFloatOf(customerId: string, tillId: string): Promise<Float> {
    const till = await this.till(customerId, tillId).catch((error: unknown) => {
      throw error instanceof LedgerError && error.code === 'NotFound'
        ? ledgerErrors.floatNotFound()
        : error;
    });
    if (!till.float) throw ledgerErrors.floatNotFound();
    return till.float;
  }

  async #tills(tx: Queryable, customerId: string, tillId: string | undefined): Promise<Till[]> {
    const { rows } = await tx.query<{
      id: string;
      first_seen_at: Date | string;
      last_report_at: Date | string | null;
      view: RawFloat | null;
    }>(
      `SELECT t.id, t.first_seen_at, t.last_report_at,
              (SELECT ledger_float_view(t.customer_id, f.id) FROM floats f
               WHERE f.customer_id = t.customer_id AND f.till_id = t.id AND f.state = 'open')
                AS view
       FROM tills t
       WHERE t.customer_id = $1 AND ($2::uuid IS NULL OR t.id = $2::uuid)
       ORDER BY t.first_seen_at, t.id`,
      [customerId, tillId ?? null],
    );
    return rows.map((row) => ({
      tillId: row.id,
      firstSeenAt: toIso(row.first_seen_at),
      lastReportAt: row.last_report_at === null ? null : toIso(row.last_report_at),
      float: row.view ? toFloat(row.view) : null,
    }));
  }

  async #close(
    db: Queryable,
    customerId: string,
    floatId: string,
    tillId: string | null,
    movements: readonly FloatMovementReport[],
    writeOff: number,
    reason: string | null,
    keyHash: string | undefined,
  ): Promise<FloatClosing> {
    let answer: { closed: boolean; results: FloatReportResult[]; float: RawFloat };
    try {
      answer = await this.call(
        'SELECT ledger_close_float($1, $2, $3, $4::jsonb, $5, $6, $7) AS answer',
        [
          customerId,
          floatId.toLowerCase(),
          tillId?.toLowerCase() ?? null,
          JSON.stringify(movements.map(normalized)),
          writeOff,
          reason,
          keyHash ?? null,
        ],
        db,
      );
    } catch (error) {
      if (sqlState(error) === 'CW001') {
        throw ledgerErrors.writeOffBeyondFloat((error as { detail?: string }).detail ?? '');
      }
      throw error;
    }
    return {
      closed: answer.closed,
      results: answer.results.map(toResult),
      float: toFloat(answer.float),
    };
  }

  /** One routine call answering jsonb: its refusal as a LedgerError, else the answer. */
  private async call<T>(sql: string, params: unknown[], db: Queryable = this.db): Promise<T> {
    const { rows } = await db.query<{ answer: (T & { error?: never }) | Refusal }>(sql, params);
    const answer = rows[0]?.answer;
    if (!answer) throw new Error('a ledger function answered no row');
    if ('error' in answer && typeof answer.error === 'string') {
      throw floatRefusal(answer.error, answer.detail ?? '', params[0] as string);
    }
    return answer as T;
  }
}

interface Refusal {
  error: string;
  detail?: string;
}

/** A float as its view function answers it (timestamps as PostgreSQL writes them in JSON). */
type RawFloat = Omit<Float, 'openedAt' | 'closedAt' | 'lastReportAt'> & {
  openedAt: string;
  closedAt: string | null;
  lastReportAt: string | null;
};

function toFloat(raw: RawFloat): Float {
  return {
    ...raw,
    openedAt: toIso(raw.openedAt),
    closedAt: raw.closedAt === null ? null : toIso(raw.closedAt),
    lastReportAt: raw.lastReportAt === null ? null : toIso(raw.lastReportAt),
  };
}

function toResult(raw: FloatReportResult): FloatReportResult {
  return {
    id: raw.id,
    outcome: raw.outcome,
    ...(raw.state === undefined ? {} : { state: raw.state }),
    flags: raw.flags ?? [],
    ...(raw.detail === undefined ? {} : { detail: raw.detail }),
  };
}

/** A report's movement as the routine reads it: ids lowercase, the rest as given. */
function normalized(movement: FloatMovementReport): FloatMovementReport {
  return { ...movement, id: movement.id.toLowerCase() };
}

function floatRefusal(code: string, detail: string, customerId: string): Error {
  switch (code) {
    case 'InvalidApiKey':
      return ledgerErrors.invalidApiKey();
    case 'CustomerNotFound':
      return ledgerErrors.customerNotFound(customerId);
    case 'FloatsOff':
      return ledgerErrors.floatsOff(detail);
    case 'FloatOpen':
      return ledgerErrors.floatOpen(detail);
    case 'FloatNotFound':
      return ledgerErrors.floatNotFound();
    case 'FloatClosed':
      return ledgerErrors.floatClosed(detail);
    case 'FloatOfAnotherTill':
      return ledgerErrors.floatOfAnotherTill(detail);
    case 'FloatRequestConflict':
      return ledgerErrors.floatRequestConflict(detail);
    case 'TopUpConflict':
      return ledgerErrors.topUpConflict(detail);
    default:
      return new Error(`a ledger function answered an unknown refusal ${code}`);
  }
}
