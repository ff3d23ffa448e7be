import pg from 'pg';
import type { Database, QueryResult, Queryable } from './database.ts';
import { sqlState } from './database.ts';

export interface PostgresOptions {
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
  /** Told about errors of idle pooled connections (the server restarted, the network broke). */
  onIdleError?: (error: Error) => void;
}

/** SQLSTATEs after which a transaction is safely re-run: deadlock, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;

export function createPostgresDatabase(url: string, options: PostgresOptions = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    application_name: 'card-wallet-cloud',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', (error) => options.onIdleError?.(error));

  const statements = new PreparedStatements();
  const wrap = (client: pg.ClientBase): Queryable => ({
    query: <Row>(sql: string, params: readonly unknown[] = []) =>
      client.query(statements.config(sql, params)).then(toResult<Row>),
    exec: async (sql) => {
      await client.query(sql);
    },
  });

  return {
    kind: 'postgres',
    description: redactPassword(url),
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      // One statement is its own transaction: after a deadlock or serialization failure
      // nothing of it remains, so it is re-run like a transaction would be.
      for (let attempt = 1; ; attempt += 1) {
        try {
          return toResult<Row>(await pool.query(statements.config(sql, params)));
        } catch (error) {
          if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error) ?? '')) continue;
          throw error;
        }
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
    },
    async transaction(fn) {
      for (let attempt = 1; ; attempt += 1) {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('BEGIN');
          const result = await fn(wrap(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection is gone: drop it from the pool
          }
          if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error) ?? '')) continue;
          throw error;
        } finally {
          client.release(broken);
        }
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Every statement with parameters is prepared once per connection under a name (`pg` keeps
 * which ones each connection has), so the server parses and plans it once, not per call.
 * PgBouncer (1.21 and later, with `max_prepared_statements`) keeps such protocol-level
 * prepared statements working in transaction mode.
 */
class PreparedStatements {
  readonly #names = new Map<string, string>();

  config(sql: string, params: readonly unknown[]): pg.QueryConfig {
    if (params.length === 0) return { text: sql };
    let name = this.#names.get(sql);
    if (name === undefined) {
      name = `cw${this.#names.size + 1}`;
      this.#names.set(sql, name);
    }
    return { name, text: sql, values: params as unknown[] };
  }
}

function toResult<Row>(result: pg.QueryResult): QueryResult<Row> {
  return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
}

/** The URL for messages and logs: the password replaced by `***`. */
export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}
