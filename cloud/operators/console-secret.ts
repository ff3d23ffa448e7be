import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';

/**
 * What signs the console's cookies (the session id, the CSRF secret, the device cookie): made
 * once per database, so every ledger process of one PostgreSQL signs alike and a restart keeps
 * everyone logged in. It never leaves the database and the ledger's memory.
 */
export async function loadConsoleSecret(db: Database): Promise<string> {
  await db.query(
    'INSERT INTO console_secret (secret) VALUES ($1) ON CONFLICT (only_row) DO NOTHING',
    [randomBytes(48).toString('base64url')],
  );
  const { rows } = await db.query<{ secret: string }>('SELECT secret FROM console_secret');
  const secret = rows[0]?.secret;
  if (!secret) throw new Error('the console secret is missing');
  return secret;
}
