/**
 * The two attacks of issue 18 against the worker, over real HTTP, pcscd and a real ledger, with
 * the attacker's own reader beside the till's: a card's dump written back after spending
 * offline, and the vending machines' key putting an earlier balance back. What each does is what
 * docs/card-security.md says. On MIFARE Classic: the till pays out no more than the card's
 * account, which cannot see spending at offline machines. On DESFire: refused, the card cannot
 * be raised without the till's key, nor cloned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deriveSectorKeys, parseMasterKey } from '../../service/card/card-keys.ts';
import { DesfireClient } from '../../service/card/desfire/desfire-client.ts';
import { desfireCardKeys } from '../../service/card/desfire/desfire-keys.ts';
import { DesfireStatusError } from '../../service/card/desfire/desfire-status.ts';
import {
  DEFAULT_DESFIRE_AID,
  KEY_MACHINE,
  KEY_TILL,
  VALUE_FILE,
} from '../../service/card/desfire/desfire-wallet-format.ts';
import { desfireWalletCard } from '../../service/card/simulator/card-simulator.ts';
import { decodeWallet } from '../../service/card/wallet-format.ts';
import { startCardRig, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, httpRequest, shown, withoutReceipt } from '../support/http-client.ts';
import { TEST_API_KEY } from '../support/test-ledger.ts';
import {
  ContactlessFrontEnd,
  powerOn,
  VirtualCard,
  type CardContact,
  type VirtualDesfireCard,
} from '../support/virtual-card.ts';

// A test master key (never a real one: this file is public).
const MASTER = '8E2A1F0C5B7D9364A0C3E5F71B2D4F60';
const SECTOR = 1;

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardMasterKey: MASTER, cardTimeoutMs: 1_500 })));
after(() => rig.close());

const call = apiCaller(() => rig.service.url, TEST_API_KEY);

async function account(cardId: string): Promise<{ credits: number; suspect: boolean }> {
  const res = await httpRequest(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
    contract: false, // the ledger's answer, not the worker's
  });
  assert.equal(res.status, 200, res.text);
  const { credits, suspect } = res.json as { credits: number; suspect: boolean };
  return { credits, suspect };
}

let nextUid = 0x30;
function freshCard(): VirtualCard {
  nextUid += 1;
  return new VirtualCard({ uid: Buffer.from([0x04, 0xa7, 0x7a, nextUid]) });
}

/**
 * The attacker's (or a vending machine's) reader: its own LOAD KEY slots, the card's derived
 * key A, and the reader's value block APDUs.
 */
function keyAReader(card: VirtualCard) {
  const frontEnd = new ContactlessFrontEnd();
  const contact: CardContact = { card, authenticated: null, halted: false };
  const send = (hex: string) =>
    frontEnd.execute(contact, Buffer.from(hex, 'hex')).subarray(-2).toString('hex');
  const keyA = deriveSectorKeys(parseMasterKey(MASTER), card.uid, SECTOR).keyA;
  assert.equal(send(`FF82000006${keyA.toString('hex')}`), '9000');
  const authenticate = () => assert.equal(send('FF860000050100046000'), '9000');
  const block = (n: number) => n.toString(16).padStart(2, '0');
  return {
    /** DECREMENT the block by `amount` and TRANSFER into it: a sale. */
    spend(n: number, amount: number) {
      authenticate();
      return send(`FFD700${block(n)}0502${amount.toString(16).padStart(8, '0')}`);
    },
    /** RESTORE block `from`, TRANSFER into block `to`. */
    restore(from: number, to: number) {
      authenticate();
      return send(`FFD700${block(from)}0203${block(to)}`);
    },
  };
}

/** The wallet's slots: the active one's block and the backup's. */
function slots(card: VirtualCard): { active: number; backup: number } {
  const state = decodeWallet(card.block(4), card.block(5));
  assert.equal(state.kind, 'valid');
  const active = state.kind === 'valid' ? 4 + state.activeSlot : 4;
  return { active, backup: active === 4 ? 5 : 4 };
}

describe('MIFARE Classic: the limits docs/card-security.md states', () => {
  test('when a card paid out at the till gets its older slot restored into the active one with key A, then the till reads the old balance but pays out nothing (CardAccountExceeded, flagged), while key A could still spend it offline', async () => {
    const card = freshCard();
    await rig.present(card);
    try {
      const recharged = await call('POST', '/writecard', { credits: 100 });
      assert.equal(recharged.status, 200, shown(recharged));
      const discharged = await call('POST', '/dischargecard');
      assert.equal(discharged.status, 200, shown(discharged));
      await rig.settled();
      assert.equal(walletBalance(card), 0);
    } finally {
      await rig.takeAway();
    }

    const machine = keyAReader(card);
    const { active, backup } = slots(card);
    assert.equal(machine.restore(backup, active), '9000', 'key A may restore and transfer');
    assert.equal(
      walletBalance(card),
      100,
      'the paid-out balance is back, at the active generation',
    );

    await rig.present(card);
    try {
      const read = await call('GET', '/readcard');
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 100,
        rechargeAmount: null,
      });
      const refused = await call('POST', '/dischargecard');
      assert.equal(refused.status, 500, shown(refused));
      assert.deepEqual(refused.json, { error: 'CardAccountExceeded' });
      assert.equal(walletBalance(card), 100, 'the card is not written');
      await rig.settled();
      assert.deepEqual(await account(card.id), { credits: 0, suspect: true });
    } finally {
      await rig.takeAway();
    }
    // Offline, nothing stops it: a machine's sale from the restored balance goes through.
    assert.equal(keyAReader(card).spend(slots(card).active, 30), '9000');
    assert.equal(walletBalance(card), 70);
  });

  test("when a card's dump is written back after 90 of its 100 were spent offline, then the till pays out 100: the account cannot see offline spending", async () => {
    const card = freshCard();
    await rig.present(card);
    try {
      const recharged = await call('POST', '/writecard', { credits: 100 });
      assert.equal(recharged.status, 200, shown(recharged));
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
    const dump = card.dump();
    assert.equal(keyAReader(card).spend(slots(card).active, 90), '9000');
    assert.equal(walletBalance(card), 10);
    // Key B (recovered with Crypto1's weaknesses) or a clone with the same UID writes it back.
    for (let block = 1; block < card.blockCount; block += 1) {
      card.setBlock(block, dump.subarray(block * 16, block * 16 + 16));
    }
    await rig.present(card);
    try {
      const paid = await call('POST', '/dischargecard');
      assert.equal(paid.status, 200, shown(paid));
      assert.equal((paid.json as { dischargedCredits: number }).dischargedCredits, 100);
      await rig.settled();
      assert.deepEqual(await account(card.id), { credits: 0, suspect: false });
    } finally {
      await rig.takeAway();
    }
  });
});

/**
 * A vending machine's (or an attacker's) DESFire reader: the wallet application selected and
 * key 2, the machine key, authenticated, as the machine role master gives it.
 */
async function machineReader(card: VirtualDesfireCard): Promise<DesfireClient> {
  const state = powerOn();
  const client = new DesfireClient({ transmit: async (apdu) => card.execute(state, apdu) });
  const keys = desfireCardKeys(parseMasterKey(MASTER), card.uid, DEFAULT_DESFIRE_AID);
  await client.selectApplication(DEFAULT_DESFIRE_AID);
  await client.authenticate(KEY_MACHINE, keys.machine);
  return client;
}

/** The DESFire status a refused command answers. */
async function refusal(command: Promise<unknown>): Promise<string> {
  try {
    await command;
  } catch (error) {
    if (error instanceof DesfireStatusError) return error.message.split(' answered ')[1] ?? '';
    throw error;
  }
  return 'done';
}

describe('DESFire: the same attacks, refused', () => {
  test("when 90 of a card's 100 are spent at a machine, then the machine key cannot put them back, a copy of the card opens with no key of the till, and the till pays out only the 10 left", async () => {
    const card = await rig.desfireCardHolding(0);
    await rig.present(card);
    try {
      const recharged = await call('POST', '/writecard', { credits: 100 });
      assert.equal(recharged.status, 200, shown(recharged));
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
    const machine = await machineReader(card);
    await machine.debit(VALUE_FILE, 90, 'enciphered');
    await machine.commitTransaction();
    assert.equal(walletBalance(card), 10);
    // Everything the machine key might raise the balance with is refused by the card.
    assert.equal(
      await refusal(machine.credit(VALUE_FILE, 90, 'enciphered')),
      'AUTHENTICATION_ERROR',
    );
    const again = await machineReader(card);
    assert.equal(
      await refusal(again.limitedCredit(VALUE_FILE, 90, 'enciphered')),
      'AUTHENTICATION_ERROR',
    );
    const keys = desfireCardKeys(parseMasterKey(MASTER), card.uid, DEFAULT_DESFIRE_AID);
    const third = await machineReader(card);
    assert.equal(
      await refusal(third.changeKey(KEY_TILL, keys.machine, 1, keys.till)),
      'AUTHENTICATION_ERROR',
    );
    assert.equal(walletBalance(card), 10);

    // A card with the same UID and the wallet's layout, its value back at 100: no reader gets
    // a DESFire card's AES keys out of it, so the copy cannot carry the card's own keys.
    const copy = desfireWalletCard(card.uid, DEFAULT_DESFIRE_AID, 100);
    await rig.present(copy);
    try {
      const refused = await call('POST', '/dischargecard');
      assert.deepEqual(refused.json, { error: 'AuthenticationFail' }, shown(refused));
    } finally {
      await rig.takeAway();
    }
    await rig.present(card);
    try {
      const paid = await call('POST', '/dischargecard');
      assert.deepEqual(
        withoutReceipt(paid.json),
        { cardId: card.id, dischargedCredits: 10, dischargedAmount: 5 },
        shown(paid),
      );
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
  });

  test('when a card paid out at the till meets the machine key, then nothing brings the paid-out balance back: no credit, no limited credit, no earlier value to restore', async () => {
    const card = await rig.desfireCardHolding(0);
    await rig.present(card);
    try {
      assert.equal((await call('POST', '/writecard', { credits: 100 })).status, 200);
      const discharged = await call('POST', '/dischargecard');
      assert.equal(discharged.status, 200, shown(discharged));
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
    for (const attempt of [
      (m: DesfireClient) => m.credit(VALUE_FILE, 100, 'enciphered'),
      (m: DesfireClient) => m.limitedCredit(VALUE_FILE, 100, 'enciphered'),
      (m: DesfireClient) => m.debit(VALUE_FILE, 1, 'enciphered'),
    ]) {
      const status = await refusal(attempt(await machineReader(card)));
      assert.ok(['AUTHENTICATION_ERROR', 'BOUNDARY_ERROR'].includes(status), status);
    }
    assert.equal(walletBalance(card), 0);
    await rig.present(card);
    try {
      const read = await call('GET', '/readcard');
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 0,
        rechargeAmount: null,
      });
    } finally {
      await rig.takeAway();
    }
  });
});
