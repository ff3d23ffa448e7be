import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import { insertOperator, prepareOperator, type CreatedOperator } from './accounts.ts';
import { anyOperator } from './operators.ts';

/**
 * The first owner of a standalone till's shop (docs/operators.md, "The first log-in"). The
 * admin CLI cannot open the embedded ledger while the till runs, so the till makes a one-time
 * link at start, shows it in the tray and the headless banner, and whoever opens it on that
 * computer (loopback only) chooses the owner's login and password. A link is valid until it is
 * used, or replaced by the next start's; none is made once the shop has an owner.
 */
function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new link's token for `shopId`, replacing any unused one; undefined once it has an owner. */
export async function makeSetupLink(db: Database, shopId: string): Promise<string | undefined> {
  if (await anyOperator(db, 'owner', shopId)) return undefined;
  const token = randomBytes(24).toString('base64url');
  await db.transaction(async (tx) => {
    await tx.query(
      `UPDATE console_setup_links SET replaced_at = now()
       WHERE customer_id = $1 AND used_at IS NULL AND replaced_at IS NULL`,
      [shopId],
    );
    await tx.query('INSERT INTO console_setup_links (token_hash, customer_id) VALUES ($1, $2)', [
      tokenHash(token),
      shopId,
    ]);
  });
  return token;
}

/** The shop a link is for, while it can still be used; undefined otherwise. */
export async function setupLinkShop(db: Database, token: string): Promise<string | undefined> {
  const { rows } = await db.query<{ customer_id: string }>(
    `SELECT customer_id FROM console_setup_links
     WHERE token_hash = $1 AND used_at IS NULL AND replaced_at IS NULL`,
    [tokenHash(token)],
  );
  return rows[0]?.customer_id;
}

/**
 * Uses a link: makes the shop's owner with the login and password chosen, once. A link used or
 * replaced meanwhile (two tabs) is SetupLinkInvalid and makes nobody.
 */
export async function useSetupLink(
  db: Database,
  token: string,
  owner: { login: string; name: string; password: string },
): Promise<CreatedOperator> {
  const shopId = await setupLinkShop(db, token);
  if (shopId === undefined) throw ledgerErrors.setupLinkInvalid();
  const acting = { actor: { kind: 'setup-link' } as const, operator: null };
  const prepared = await prepareOperator(acting, { ...owner, role: 'owner', shops: [shopId] });
  return db.transaction(async (tx) => {
    const { rowCount } = await tx.query(
      `UPDATE console_setup_links SET used_at = now()
       WHERE token_hash = $1 AND customer_id = $2 AND used_at IS NULL AND replaced_at IS NULL`,
      [tokenHash(token), shopId],
    );
    if (rowCount !== 1) throw ledgerErrors.setupLinkInvalid();
    return insertOperator(tx, acting, prepared);
  });
}
