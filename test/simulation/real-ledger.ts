/**
 * The real ledger in the shop simulation: cloud/ledger.ts behind its own HTTP app
 * (cloud/http/create-app.ts: the routes, validation, authentication and error answers), on
 * PGlite in this process with every migration and the SQL routines of cloud/db/routines/. The
 * tills' calls reach it through the simulated network (sim-network.ts) as `app.inject` calls,
 * and each is awaited inside the event that delivers it, so a seed replays exactly.
 *
 * What its answers depend on is made deterministic:
 * - time: PostgreSQL's clock inside PGlite is `Date.now` (emscripten's clock_time_get), which
 *   reads the simulation's virtual clock while the ledger works (see #atVirtualTime), so
 *   `created_at`, `resolved_at` and the rest are virtual times, as the model's are;
 * - ids: every id comes from the seed (the tills' movements, the shops, the cards), and the
 *   ledger's own (a float's id and prefix) from the series the model draws from (ledgerUuid);
 * - state: one database per process, emptied before each seed (reset()).
 *
 * The world reads the ledger synchronously (shop-ledger.ts): after each call that may change
 * something, the tables it reads are read again into plain maps.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parseDecimal } from '../../common/decimal.ts';
import type {
  CardFlagKind,
  FloatClosing,
  FloatMovementReport,
} from '../../common/ledger-contract.ts';
import { resolveByOperator, revokeKey } from '../../cloud/admin.ts';
import { importCards } from '../../cloud/card-accounts.ts';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { checkLedger } from '../../cloud/check.ts';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Floats } from '../../cloud/floats.ts';
import { createLedgerApp } from '../../cloud/http/create-app.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { applySeed } from '../../cloud/seed.ts';
import type { SimFloat } from './sim-floats.ts';
import type { SimShop, StoredMovement } from './sim-ledger.ts';
import type { HttpAnswer, LedgerCall } from './sim-network.ts';
import type { ShopCardChange, ShopFloats, ShopLedger } from './shop-ledger.ts';

interface MovementJson {
  id: string;
  customer_id: string;
  kind: StoredMovement['kind'];
  card_id: string;
  state: StoredMovement['state'];
  credits: number;
  credit_cost: number | string;
  requested_amount: number | string | null;
  created_at: string;
  resolved_at: string | null;
  till_id: string | null;
  card_before: string | null;
  compensates: string | null;
  resolved_by_till: string | null;
  evidence: string | null;
  awaits_card: boolean;
  card_evidence: string | null;
  occurred_at: string | null;
  float_id: string | null;
  float_seq: number | null;
  reported_as: StoredMovement['reportedAs'];
  report_flags: string[];
  reference: string | null;
  bonus_credits: number;
  amount: number | string;
  paid_amount: number | string;
  refunds: string | null;
  applies: string | null;
  till_time: string | null;
}

/** The tables the world reads, in one round trip. */
const SNAPSHOT = `SELECT
  (SELECT json_agg(m ORDER BY m.created_at, m.id) FROM movements m) AS movements,
  (SELECT json_agg(c ORDER BY c.id) FROM customers c) AS customers,
  (SELECT json_agg(a) FROM card_accounts a) AS accounts,
  (SELECT json_agg(f ORDER BY f.id) FROM card_flags f) AS flags,
  (SELECT json_agg(f ORDER BY f.opened_at, f.id) FROM floats f) AS floats,
  (SELECT json_agg(c ORDER BY c.created_at, c.id) FROM card_changes c) AS changes`;

interface FloatJson {
  customer_id: string;
  id: string;
  till_id: string;
  id_prefix: string;
  state: SimFloat['state'];
  credits: number;
  granted: number;
  ids_issued: number;
  open_request: string;
  opened_at: string;
  closed_at: string | null;
  closed_by: SimFloat['closedBy'];
  returned: number;
  written_off: number;
  write_off_reason: string | null;
  overdrawn: number;
}

interface Snapshot {
  movements: MovementJson[] | null;
  customers: { id: string; name: string; credits: number; credit_cost: number | string }[] | null;
  accounts:
    { customer_id: string; card_id: string; credits: number; bonus_credits: number }[] | null;
  flags: { customer_id: string; card_id: string; kind: CardFlagKind; movement_id: string }[] | null;
  floats: FloatJson[] | null;
  changes: ChangeJson[] | null;
}

interface ChangeJson {
  customer_id: string;
  id: string;
  kind: ShopCardChange['kind'];
  card_id: string;
  from_card: string | null;
  credits: number;
  bonus_credits: number;
  state: ShopCardChange['state'];
}

/** The failed-authentication limits, off: the tills share one address and key prefix here. */
/** Who decides a movement without its card in the simulation: the shop's operator, as on the CLI. */
const OPERATOR = { kind: 'cli', user: 'simulated-operator' } as const;
const UNLIMITED = { perAddress: Number.MAX_SAFE_INTEGER, perKeyPrefix: Number.MAX_SAFE_INTEGER };

interface Store {
  db: Database;
  folder: string;
  /** The tables emptied before each seed: those the migrations left empty. */
  data: string[];
}

let store: Promise<Store> | undefined;

/** This process's database: a PGlite folder from the built template, migrated (once). */
function openStore(): Promise<Store> {
  store ??= (async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cww-sim-ledger-'));
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    const db = await openDatabase(join(folder, 'db'));
    // The ledger's one random draw, gen_random_uuid() (a float's id and id prefix), from the
    // series the model draws from (ledgerUuid in sim-floats.ts), reset before each seed: a
    // function of that name in a schema searched before pg_catalog takes its place.
    await db.exec(`CREATE SCHEMA sim;
      CREATE SEQUENCE sim.uuids;
      CREATE FUNCTION sim.gen_random_uuid() RETURNS uuid LANGUAGE sql AS $$
        SELECT (lpad(to_hex(n), 12, 'f') || '40008000' || lpad(to_hex(n), 12, '0'))::uuid
        FROM nextval('sim.uuids') AS n
      $$;
      SET search_path TO sim, pg_catalog, public;`);
    const tables = await db.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables
       WHERE schemaname = 'public' AND tablename NOT LIKE 'schema\\_%' ORDER BY tablename`,
    );
    const data: string[] = [];
    for (const { name } of tables.rows) {
      const { rowCount } = await db.query(`SELECT 1 FROM "${name}" LIMIT 1`);
      if (rowCount === 0) data.push(`"${name}"`);
    }
    return { db, folder, data };
  })();
  return store;
}

/** Closes this process's database and removes its folder (the end of a run). */
export async function closeRealLedgers(): Promise<void> {
  const opened = store;
  store = undefined;
  if (!opened) return;
  const { db, folder } = await opened;
  await db.close();
  rmSync(folder, { recursive: true, force: true });
}

export class RealLedger implements ShopLedger {
  shops = new Map<string, SimShop>();
  movements = new Map<string, StoredMovement>();
  flags: ShopLedger['flags'] = [];
  /** The floats as the tables hold them; an operator's close goes through cloud/floats.ts. */
  readonly floats: ShopFloats & { floats: Map<string, SimFloat> } = {
    floats: new Map(),
    topUpsAskedAgain: 0,
    closeByOperator: (shopId, floatId, input) => this.#closeFloat(shopId, floatId, input),
  };
  cardChanges = new Map<string, ShopCardChange>();
  #accounts = new Map<string, number>();
  #bonus = new Map<string, number>();
  readonly #transitions = new Map<string, number>();
  readonly #db: Database;
  readonly #app: FastifyInstance;
  readonly #now: () => number;
  /** One call at a time, each in its own virtual instant. */
  #tail: Promise<unknown> = Promise.resolve();
  #lastMs = Number.NaN;
  #tick = 0;

  private constructor(db: Database, app: FastifyInstance, now: () => number) {
    this.#db = db;
    this.#app = app;
    this.#now = now;
  }

  /**
   * An empty ledger on this process's database (what an earlier seed left is deleted), with
   * `now` its virtual clock. `onError`: what the ledger logs of a call it answered 500.
   */
  static async open(now: () => number, onError: (message: string) => void): Promise<RealLedger> {
    const { db, data } = await openStore();
    // Triggers off for the reset only: the append-only tables refuse TRUNCATE otherwise.
    await db.exec(`SET session_replication_role = replica;
      TRUNCATE ${data.join(', ')} RESTART IDENTITY CASCADE;
      RESET session_replication_role;
      ALTER SEQUENCE sim.uuids RESTART;`);
    const app = await createLedgerApp(
      new Ledger(db),
      { error: onError },
      {
        failedAuthenticationLimits: UNLIMITED,
      },
    );
    return new RealLedger(db, app, now);
  }

  async close(): Promise<void> {
    await this.#tail;
    await this.#app.close();
  }

  cardAccount(shopId: string, cardId: string): number {
    return this.#accounts.get(`${shopId} ${cardId}`) ?? 0;
  }

  bonusHeld(shopId: string): number {
    return this.#bonus.get(shopId) ?? 0;
  }

  /** One HTTP call of contract v1, as a till's client sent it. */
  call({ method, url, apiKey, text, ifNoneMatch }: LedgerCall): Promise<HttpAnswer> {
    return this.#exclusive(async () => {
      const response = await this.#app.inject({
        method: method as 'GET' | 'POST',
        url,
        headers: {
          ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
          ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }),
        },
        ...(text === undefined ? {} : { payload: text }),
      });
      if (method !== 'GET') await this.#refresh();
      // The headers a till reads: Retry-After, and the card list's ETag.
      const headers: Record<string, string> = {};
      for (const name of ['retry-after', 'etag']) {
        const value = response.headers[name];
        if (value !== undefined) headers[name] = String(value);
      }
      return {
        status: response.statusCode,
        body: response.body === '' ? undefined : (JSON.parse(response.body) as unknown),
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      };
    });
  }

  addShop(shop: SimShop, keys: string[]): Promise<void> {
    return this.#change(async () => {
      // The card rules as an operator sets them (the seed takes none).
      const { cards, ...seeded } = shop;
      await applySeed(this.#db, { customers: [{ ...seeded, keys }] });
      if (cards) await setCardRules(this.#db, shop.id, cards);
    });
  }

  importCard(shopId: string, cardId: string, credits: number): Promise<void> {
    return this.#change(async () => {
      await importCards(this.#db, shopId, [{ cardId, credits }]);
    });
  }

  revokeKey(apiKey: string): Promise<void> {
    return this.#change(async () => {
      await revokeKey(this.#db, apiKey);
    });
  }

  decide(id: string, state: 'posted' | 'voided', evidence: string): Promise<void> {
    const customerId = this.movements.get(id)?.shop ?? '';
    return this.#change(async () => {
      await resolveByOperator(
        this.#db,
        { customerId, id, target: state, evidence },
        { actor: OPERATOR },
      );
    });
  }

  /** `card-wallet-cloud check` on the ledger's database: what does not add up. */
  check(): Promise<string[]> {
    return this.#exclusive(async () => (await checkLedger(this.#db)).problems);
  }

  #closeFloat(
    shopId: string,
    floatId: string,
    input: { movements: FloatMovementReport[]; writeOff: number; reason: string | null },
  ): Promise<FloatClosing> {
    return this.#exclusive(async () => {
      const closing = await new Floats(this.#db).closeByOperator(shopId, floatId, input, OPERATOR);
      await this.#refresh();
      return closing;
    });
  }

  #change(run: () => Promise<void>): Promise<void> {
    return this.#exclusive(async () => {
      await run();
      await this.#refresh();
    });
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => this.#atVirtualTime(run));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs `run` with `Date.now` reading the virtual clock: PGlite's PostgreSQL takes its time
   * from it (now(), clock_timestamp()). Calls in one virtual millisecond are a microsecond
   * apart, in call order, so ORDER BY created_at is the order the calls came in, as the model's
   * order is; answers carry milliseconds, as the model's do.
   */
  async #atVirtualTime<T>(run: () => Promise<T>): Promise<T> {
    const ms = this.#now();
    this.#tick = ms === this.#lastMs ? Math.min(this.#tick + 1, 999) : 0;
    this.#lastMs = ms;
    const at = ms + this.#tick / 1000;
    const wallClock = Date.now;
    Date.now = () => at;
    try {
      return await run();
    } finally {
      Date.now = wallClock;
    }
  }

  /** Reads the tables the world reads into its maps. */
  async #refresh(): Promise<void> {
    const { rows } = await this.#db.query<Snapshot>(SNAPSHOT);
    const snapshot = rows[0] as Snapshot;
    const movements = new Map<string, StoredMovement>();
    for (const row of snapshot.movements ?? []) {
      const before = this.movements.get(row.id)?.state ?? 'pending';
      const transitions = (this.#transitions.get(row.id) ?? 0) + (before === row.state ? 0 : 1);
      this.#transitions.set(row.id, transitions);
      movements.set(row.id, storedMovement(row, transitions));
    }
    this.movements = movements;
    this.shops = new Map(
      (snapshot.customers ?? []).map((row) => [
        row.id,
        { id: row.id, name: row.name, credits: row.credits, creditCost: String(row.credit_cost) },
      ]),
    );
    this.#accounts = new Map(
      (snapshot.accounts ?? []).map((row) => [`${row.customer_id} ${row.card_id}`, row.credits]),
    );
    this.#bonus = new Map();
    for (const row of snapshot.accounts ?? []) {
      this.#bonus.set(row.customer_id, (this.#bonus.get(row.customer_id) ?? 0) + row.bonus_credits);
    }
    this.cardChanges = new Map(
      (snapshot.changes ?? []).map((row) => [
        row.id,
        {
          id: row.id,
          shop: row.customer_id,
          kind: row.kind,
          cardId: row.card_id,
          fromCard: row.from_card,
          credits: row.credits,
          bonusCredits: row.bonus_credits,
          state: row.state,
        },
      ]),
    );
    this.floats.floats = new Map((snapshot.floats ?? []).map((row) => [row.id, simFloat(row)]));
    this.flags = (snapshot.flags ?? []).map((row) => ({
      kind: row.kind,
      movementId: row.movement_id,
      cardId: row.card_id,
      shopId: row.customer_id,
    }));
  }
}

const iso = (text: string | null) => (text === null ? null : new Date(text).toISOString());

function storedMovement(row: MovementJson, transitions: number): StoredMovement {
  return {
    id: row.id,
    shop: row.customer_id,
    kind: row.kind,
    cardId: row.card_id,
    credits: row.credits,
    requestedAmount:
      row.requested_amount === null ? null : (parseDecimal(String(row.requested_amount)) ?? null),
    creditCost: String(row.credit_cost),
    state: row.state,
    createdAt: iso(row.created_at) as string,
    resolvedAt: iso(row.resolved_at),
    transitions,
    tillId: row.till_id,
    cardBefore: row.card_before,
    compensates: row.compensates,
    resolvedByTill: row.resolved_by_till,
    evidence: row.evidence,
    awaitsCard: row.awaits_card,
    cardEvidence: row.card_evidence,
    occurredAt: iso(row.occurred_at),
    floatId: row.float_id,
    floatSeq: row.float_seq,
    reportedAs: row.reported_as,
    reportFlags: row.report_flags,
    reference: row.reference,
    bonusCredits: row.bonus_credits,
    amount: decimalOf(row.amount),
    paidAmount: decimalOf(row.paid_amount),
    refunds: row.refunds,
    applies: row.applies,
    tillTime: iso(row.till_time),
  };
}

function simFloat(row: FloatJson): SimFloat {
  return {
    id: row.id,
    shop: row.customer_id,
    tillId: row.till_id,
    prefix: row.id_prefix,
    state: row.state,
    credits: row.credits,
    granted: row.granted,
    idsIssued: row.ids_issued,
    openRequest: row.open_request,
    openedAt: iso(row.opened_at) as string,
    closedAt: iso(row.closed_at),
    closedBy: row.closed_by,
    returned: row.returned,
    writtenOff: row.written_off,
    writeOffReason: row.write_off_reason,
    overdrawn: row.overdrawn,
  };
}

/** A numeric column's value in ten-thousandths, as the simulated ledger keeps euros. */
function decimalOf(value: number | string): bigint {
  const parsed = parseDecimal(String(value));
  if (parsed === undefined) throw new Error(`not a decimal amount: ${String(value)}`);
  return parsed;
}
