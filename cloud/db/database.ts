/**
 * The ledger's only view of storage: parameterised queries and transactions. Two
 * implementations run the same SQL: PostgreSQL through `pg` (many processes, one server) and
 * PGlite (embedded, one process, a data folder).
 */
export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** Where it is, for messages: a folder, or the URL without its password. */
  readonly description: string;
  /**
   * Runs `fn` in one transaction (READ COMMITTED): COMMIT when it resolves, ROLLBACK when it
   * throws. On PostgreSQL a deadlock or serialization failure re-runs `fn` (a few times), so
   * `fn` must only touch the database.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The SQLSTATE of a database error, when it is one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The violated constraint's name, when the error is a constraint violation. */
export function violatedConstraint(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const constraint = (error as { constraint?: unknown }).constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}
