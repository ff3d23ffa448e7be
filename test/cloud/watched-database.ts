/**
 * A Database that tells a watcher every statement it is sent: the seam through which the ledger
 * tests see what the ledger sends (key look-ups, round trips per call, customers per
 * transaction). It is closed by whoever owns the database it wraps.
 */
import type { Database, Queryable } from '../../cloud/db/database.ts';

/** The statements of one transaction, or one statement sent alone. */
export interface Unit {
  transaction: boolean;
  statements: { sql: string; params: readonly unknown[] }[];
}

export interface Watcher {
  /** A unit begins (a transaction, or a statement sent alone). */
  unit?(unit: Unit): void;
  /** A statement answered, with its rows. */
  answered?(sql: string, rows: readonly unknown[]): void;
}

export function watchedDatabase(db: Database, watcher: Watcher): Database {
  const begin = (transaction: boolean): Unit => {
    const unit: Unit = { transaction, statements: [] };
    watcher.unit?.(unit);
    return unit;
  };
  const watched = (target: Queryable, unit: () => Unit): Queryable => ({
    query: async <Row>(sql: string, params: readonly unknown[] = []) => {
      unit().statements.push({ sql, params });
      const result = await target.query<Row>(sql, params);
      watcher.answered?.(sql, result.rows);
      return result;
    },
    exec: (sql) => {
      unit().statements.push({ sql, params: [] });
      return target.exec(sql);
    },
  });
  const alone = watched(db, () => begin(false));
  return {
    kind: db.kind,
    description: db.description,
    query: (sql, params) => alone.query(sql, params),
    exec: (sql) => alone.exec(sql),
    // A re-run after a deadlock is a unit of its own.
    transaction: (work) =>
      db.transaction((tx) => {
        const unit = begin(true);
        return work(watched(tx, () => unit));
      }),
    close: () => Promise.resolve(),
  };
}
