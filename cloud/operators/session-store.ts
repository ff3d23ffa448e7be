import { createHash } from 'node:crypto';
import type { Database } from '../db/database.ts';

/**
 * The console's server-side sessions, in the ledger's database (table `console_sessions`), so
 * every ledger process of a PostgreSQL serves them and a log-out everywhere is one DELETE. Only
 * the SHA-256 of a session id is stored: a copy of the table opens no session.
 *
 * A session row is made only at log-in (`create`); saving one that is gone (logged out
 * everywhere, its account disabled or its password reset meanwhile) never makes it again, so
 * a request still in flight cannot bring back a session that was ended. A session ends after
 * `idleMinutes` without a request, and `maxHours` after its log-in whatever happens.
 *
 * The callback methods are what @fastify/session calls (express-session's store interface).
 */
export interface SessionLifetime {
  idleMinutes: number;
  maxHours: number;
}

export const DEFAULT_SESSION_LIFETIME: SessionLifetime = { idleMinutes: 30, maxHours: 12 };

type Callback<T = void> = (error?: Error | null, value?: T) => void;

export function sessionIdHash(sessionId: string): string {
  return createHash('sha256').update(sessionId, 'utf8').digest('hex');
}

export class DatabaseSessionStore {
  readonly #db: Database;
  readonly #lifetime: SessionLifetime;

  constructor(db: Database, lifetime: Partial<SessionLifetime> = {}) {
    this.#db = db;
    this.#lifetime = { ...DEFAULT_SESSION_LIFETIME, ...lifetime };
  }

  /** Makes the session of a log-in (and clears long-expired ones). */
  async create(sessionId: string, operatorId: string, data: object): Promise<void> {
    const { idleMinutes, maxHours } = this.#lifetime;
    await this.#db.query(
      `INSERT INTO console_sessions (id_hash, operator_id, data, expires_at)
       VALUES ($1, $2, $3, LEAST(now() + make_interval(mins => $4::int), now() + make_interval(hours => $5::int)))`,
      [sessionIdHash(sessionId), operatorId, JSON.stringify(data), idleMinutes, maxHours],
    );
    await this.#db.query(
      `DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'`,
    );
  }

  get(sessionId: string, callback: Callback<object | null>): void {
    this.#db
      .query<{ data: object | string }>(
        'SELECT data FROM console_sessions WHERE id_hash = $1 AND expires_at > now()',
        [sessionIdHash(sessionId)],
      )
      .then(
        ({ rows }) => {
          const data = rows[0]?.data;
          callback(
            null,
            data === undefined ? null : typeof data === 'string' ? JSON.parse(data) : data,
          );
        },
        (error: Error) => callback(error),
      );
  }

  set(sessionId: string, session: object, callback: Callback): void {
    const { idleMinutes, maxHours } = this.#lifetime;
    this.#db
      .query(
        `UPDATE console_sessions
         SET data = $2,
             expires_at = LEAST(now() + make_interval(mins => $3::int), created_at + make_interval(hours => $4::int))
         WHERE id_hash = $1 AND expires_at > now()`,
        [sessionIdHash(sessionId), JSON.stringify(session), idleMinutes, maxHours],
      )
      .then(
        () => callback(null),
        (error: Error) => callback(error),
      );
  }

  destroy(sessionId: string, callback: Callback): void {
    this.#db
      .query('DELETE FROM console_sessions WHERE id_hash = $1', [sessionIdHash(sessionId)])
      .then(
        () => callback(null),
        (error: Error) => callback(error),
      );
  }
}
