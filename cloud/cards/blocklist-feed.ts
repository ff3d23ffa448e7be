import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { canonicalJson } from '../../common/canonical-json.ts';
import type { Database, Queryable } from '../db/database.ts';
import { ledgerErrors } from '../errors.ts';
import { toIso } from '../records.ts';
import { cardListSeq } from './card-blocks.ts';

/**
 * The blocklist feed for a shop's machines (docs/card-format.md, "For machines: the blocklist
 * feed"): the shop's blocked card ids with the card list's sequence number, as canonical JSON
 * (RFC 8785) signed with the shop's Ed25519 key, so a machine that holds the shop's public key
 * can check a copy fetched by anyone, offline. The document is itself canonical JSON, so the
 * signed bytes are the bytes between `{"blocklist":` and `,"signature":`.
 */

/** What is signed. */
export interface BlocklistPayload {
  type: 'card-wallet-blocklist';
  version: 1;
  customerId: string;
  /** The first 16 hex digits of the SHA-256 of the raw public key. */
  keyId: string;
  /** Moves on with every change of the shop's card list; a machine keeps the highest seen. */
  seq: number;
  /** When the card list last changed (null: never), UTC with milliseconds. */
  updatedAt: string | null;
  /** The blocked card ids, sorted (byte order of their uppercase hex). */
  blocked: string[];
}

export interface BlocklistKey {
  customerId: string;
  keyId: string;
  algorithm: 'Ed25519';
  /** The raw 32-byte public key, hex. */
  publicKey: string;
  publicKeyPem: string;
}

interface ShopKey {
  keyId: string;
  publicKey: string;
  privateKey: KeyObject;
}

/** A signed document: its bytes and the ETag of its sequence number. */
export interface SignedBlocklist {
  seq: number;
  etag: string;
  body: string;
}

/** The id of a raw Ed25519 public key: the first 16 hex digits of its SHA-256. */
export function keyIdOf(publicKeyHex: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyHex, 'hex')).digest('hex').slice(0, 16);
}

/** The raw 32 bytes of an Ed25519 public key, hex (the last 32 bytes of its SPKI form). */
export function rawPublicKey(key: KeyObject): string {
  return key.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
}

/** The signed document of a payload with a private key: canonical JSON, signature in hex. */
export function signBlocklist(payload: BlocklistPayload, privateKey: KeyObject): string {
  const signed = Buffer.from(canonicalJson(payload), 'utf8');
  return canonicalJson({
    blocklist: payload,
    signature: sign(null, signed, privateKey).toString('hex'),
  });
}

/**
 * The feeds of the shops of one ledger process. Keys are made on first use (one per shop,
 * kept in the database, so every ledger process signs with it) and the last document of each
 * shop is kept, so a machine polling an unchanged list costs one small query.
 */
export class BlocklistFeeds {
  readonly #keys = new Map<string, ShopKey>();
  readonly #last = new Map<string, SignedBlocklist>();

  constructor(private readonly db: Database) {}

  /** The shop's signed blocklist as it is now. */
  async signed(customerId: string): Promise<SignedBlocklist> {
    const seq = await cardListSeq(this.db, customerId);
    const last = this.#last.get(customerId);
    if (last && last.seq === seq) return last;
    const key = await this.#key(customerId);
    const document = await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const payload = await readPayload(tx, customerId, key.keyId);
      return { seq: payload.seq, body: signBlocklist(payload, key.privateKey) };
    });
    const made = { ...document, etag: `"${document.seq}"` };
    this.#last.set(customerId, made);
    return made;
  }

  /** The shop's public key, for its machines and the console. */
  async publicKey(customerId: string): Promise<BlocklistKey> {
    const key = await this.#key(customerId);
    const publicKeyPem = createPublicKey(key.privateKey).export({ format: 'pem', type: 'spki' });
    return {
      customerId,
      keyId: key.keyId,
      algorithm: 'Ed25519',
      publicKey: key.publicKey,
      publicKeyPem: String(publicKeyPem),
    };
  }

  async #key(customerId: string): Promise<ShopKey> {
    const known = this.#keys.get(customerId);
    if (known) return known;
    const key = await shopKey(this.db, customerId);
    this.#keys.set(customerId, key);
    return key;
  }
}

/** The shop's signing key, made now if it has none (two processes racing keep the first). */
async function shopKey(db: Queryable, customerId: string): Promise<ShopKey> {
  const read = () =>
    db.query<{ key_id: string; public_key: string; private_key: string }>(
      'SELECT key_id, public_key, private_key FROM blocklist_keys WHERE customer_id = $1',
      [customerId],
    );
  let row = (await read()).rows[0];
  if (!row) {
    await cardListSeq(db, customerId); // CustomerNotFound for a shop that does not exist
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = rawPublicKey(publicKey);
    await db.query(
      `INSERT INTO blocklist_keys (customer_id, key_id, public_key, private_key)
       VALUES ($1, $2, $3, $4) ON CONFLICT (customer_id) DO NOTHING`,
      [
        customerId,
        keyIdOf(raw),
        raw,
        privateKey.export({ format: 'der', type: 'pkcs8' }).toString('hex'),
      ],
    );
    row = (await read()).rows[0];
    if (!row) throw new Error(`no blocklist key for customer ${customerId}`);
  }
  return {
    keyId: row.key_id,
    publicKey: row.public_key,
    privateKey: createPrivateKey({
      key: Buffer.from(row.private_key, 'hex'),
      format: 'der',
      type: 'pkcs8',
    }),
  };
}

async function readPayload(
  tx: Queryable,
  customerId: string,
  keyId: string,
): Promise<BlocklistPayload> {
  const shop = await tx.query<{ seq: number | string; changed_at: Date | string | null }>(
    'SELECT card_list_seq AS seq, card_list_changed_at AS changed_at FROM customers WHERE id = $1',
    [customerId],
  );
  const row = shop.rows[0];
  if (!row) throw ledgerErrors.customerNotFound(customerId);
  const blocked = await tx.query<{ card_id: string }>(
    `SELECT card_id FROM card_blocks WHERE customer_id = $1 AND lifted_at IS NULL`,
    [customerId],
  );
  return {
    type: 'card-wallet-blocklist',
    version: 1,
    customerId,
    keyId,
    seq: Number(row.seq),
    updatedAt: row.changed_at === null ? null : toIso(row.changed_at),
    blocked: blocked.rows.map((block) => block.card_id).sort(),
  };
}
