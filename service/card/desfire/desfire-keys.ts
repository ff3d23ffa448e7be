import { CARD_KEY_SYSTEM_IDENTIFIER, diversifyAes128 } from '../card-keys.ts';
import { aidBytes } from './desfire-client.ts';
import type { DesfireKey } from './desfire-crypto.ts';

/**
 * Per-card AES-128 keys of a DESFire wallet (docs/card-format.md, "DESFire wallet", keys), from
 * the same card master key as the MIFARE Classic keys, with NXP AN10922 as there:
 *
 * - each key role has a 16-byte role master, AN10922(master key, "CardWallet DESFire <role>"),
 *   so that a vending machine holds the machine role's master and nothing it could derive the
 *   till's or the application master key from;
 * - a card's key of a role is AN10922(role master, UID (7 bytes) || AID (3 bytes, as sent:
 *   least significant first) || key number || "CardWallet"). The PICC master key uses AID
 *   000000 and key number 0.
 *
 * Without a master key (a trial), the wallet keeps the keys a card is made with: the
 * application's AES keys all zero and the PICC master key the factory DES key.
 */

/** The roles, with the key number each has in the wallet application (the PICC key: 0 at AID 0). */
export const DESFIRE_KEY_ROLES = {
  picc: { keyNo: 0, label: 'PICC' },
  application: { keyNo: 0, label: 'key 0' },
  till: { keyNo: 1, label: 'key 1' },
  machine: { keyNo: 2, label: 'key 2' },
} as const;

export type DesfireKeyRole = keyof typeof DESFIRE_KEY_ROLES;

/** The version byte every derived key carries (a fresh application's keys have version 0). */
export const DERIVED_KEY_VERSION = 0x01;

/** The role master: AN10922(master key, "CardWallet DESFire PICC" / "... key 0" / 1 / 2). */
export function desfireRoleMaster(masterKey: Buffer, role: DesfireKeyRole): Buffer {
  return diversifyAes128(
    masterKey,
    Buffer.from(`CardWallet DESFire ${DESFIRE_KEY_ROLES[role].label}`, 'ascii'),
  );
}

/** M of one card's key: UID || AID (LSB first) || key number || "CardWallet" (21 bytes). */
export function desfireDiversificationInput(uid: Buffer, aid: number, keyNo: number): Buffer {
  if (uid.length !== 7) throw new RangeError(`a DESFire UID is 7 bytes, not ${uid.length}`);
  if (!Number.isInteger(keyNo) || keyNo < 0 || keyNo > 13) {
    throw new RangeError(`a DESFire key number is 0 to 13, not ${keyNo}`);
  }
  return Buffer.concat([uid, aidBytes(aid), Buffer.from([keyNo]), CARD_KEY_SYSTEM_IDENTIFIER]);
}

/** One card's key of a role from the role's master: what a vending machine computes. */
export function desfireCardKeyFromRoleMaster(
  roleMaster: Buffer,
  uid: Buffer,
  aid: number,
  role: DesfireKeyRole,
): Buffer {
  const keyAid = role === 'picc' ? 0 : aid;
  return diversifyAes128(
    roleMaster,
    desfireDiversificationInput(uid, keyAid, DESFIRE_KEY_ROLES[role].keyNo),
  );
}

/** The keys of one card's wallet, as the till uses them. */
export interface DesfireCardKeys {
  picc: DesfireKey;
  application: DesfireKey;
  till: DesfireKey;
  machine: DesfireKey;
  /** The version of the application's keys and of an AES PICC key: 1 derived, 0 trial. */
  version: number;
}

const ZERO_AES: DesfireKey = { type: 'aes', key: Buffer.alloc(16) };

/** The factory PICC master key of a DESFire card: DES, all zero. */
export const FACTORY_PICC_KEY: DesfireKey = { type: 'des', key: Buffer.alloc(16) };

/** A card's wallet keys: derived from `masterKey`, or without one the trial keys. */
export function desfireCardKeys(
  masterKey: Buffer | undefined,
  uid: Buffer,
  aid: number,
): DesfireCardKeys {
  if (!masterKey) {
    return {
      picc: FACTORY_PICC_KEY,
      application: ZERO_AES,
      till: ZERO_AES,
      machine: ZERO_AES,
      version: 0,
    };
  }
  const key = (role: DesfireKeyRole): DesfireKey => ({
    type: 'aes',
    key: desfireCardKeyFromRoleMaster(desfireRoleMaster(masterKey, role), uid, aid, role),
  });
  return {
    picc: key('picc'),
    application: key('application'),
    till: key('till'),
    machine: key('machine'),
    version: DERIVED_KEY_VERSION,
  };
}
