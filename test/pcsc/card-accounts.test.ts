/**
 * The ledger's card accounts seen through the worker, over real HTTP, pcscd and a real ledger:
 * a balance written onto a card behind the worker's back (a phone app with the transport key)
 * is never paid out beyond what the shop put on the card, and cards sold before the ledger are
 * paid out up to their imported balance.
 *
 * The worker answers the ledger's refusal with 500 CardAccountExceeded
 * (service/cloud/ledger-refusals.ts); with it: the card untouched, the pool unchanged, nothing
 * pending, the card flagged at the ledger.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { startCardRig, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, httpRequest, withoutReceipt } from '../support/http-client.ts';
import { importCardBalance, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard } from '../support/virtual-card.ts';

let rig: CardRig;
// The ledger as its own process on PostgreSQL, as a shop's is.
before(async () => (rig = await startCardRig({ cardTimeoutMs: 1_500 }, { ledgerProcess: true })));
after(() => rig.close());

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const post = (path: string, body?: unknown) => call('POST', path, body);

const pool = () => shopCredits(rig.ledger.url);

async function cardAccount(cardId: string) {
  const res = await httpRequest(`${rig.ledger.url}/v1/cards/${cardId}`, {
    headers: { 'X-Api-Key': TEST_API_KEY },
    contract: false, // the ledger's answer, not the worker's (docs/cloud-api.md)
  });
  assert.equal(res.status, 200, res.text);
  return res.json as {
    credits: number;
    suspect: boolean;
    flags: { requestedCredits: number; accountCredits: number }[];
  };
}

/** The same card (same UID) with a balance written by someone else, at a newer generation. */
function forged(uid: Buffer, balance: number): VirtualCard {
  return new VirtualCard({ uid, blocks: { 5: encodeValueBlock(balance, 9) } });
}

describe('a forged balance meets the card account', () => {
  test('when a card never loaded by the shop holds 500 written with the transport key, then /dischargecard pays out nothing, the card keeps its balance and is flagged', async () => {
    const card = forged(Buffer.from('04F0F0F1', 'hex'), 500);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/dischargecard');
      assert.equal(res.status, 500, `${res.status} ${res.text}`);
      assert.deepEqual(res.json, { error: 'CardAccountExceeded' }, res.text);
      assert.equal(walletBalance(card), 500, 'the card is not written');
      await rig.settled();
      assert.equal(await pool(), before, 'the pool did not move');
      const account = await cardAccount(card.id);
      assert.equal(account.credits, 0);
      assert.equal(account.suspect, true);
      assert.deepEqual(
        account.flags.map(({ requestedCredits, accountCredits }) => ({
          requestedCredits,
          accountCredits,
        })),
        [{ requestedCredits: 500, accountCredits: 0 }],
      );
    } finally {
      await rig.takeAway();
    }
  });

  test('when a card recharged with 30 is rewritten to 1000 behind the worker, then /dischargecard pays out nothing and the account stays 30', async () => {
    const uid = Buffer.from('04F0F0F2', 'hex');
    const card = new VirtualCard({ uid });
    await rig.present(card);
    const before = await pool();
    try {
      const recharged = await post('/writecard', { credits: 30 });
      assert.equal(recharged.status, 200, recharged.text);
      await rig.settled();
    } finally {
      await rig.takeAway();
    }
    const rewritten = forged(uid, 1000);
    await rig.present(rewritten);
    try {
      const res = await post('/dischargecard');
      assert.equal(res.status, 500, `${res.status} ${res.text}`);
      assert.deepEqual(res.json, { error: 'CardAccountExceeded' }, res.text);
      assert.equal(walletBalance(rewritten), 1000, 'the card is not written');
      await rig.settled();
      assert.equal(await pool(), before - 30, 'only the genuine recharge moved the pool');
      const account = await cardAccount(rewritten.id);
      assert.equal(account.credits, 30);
      assert.equal(account.suspect, true);
    } finally {
      await rig.takeAway();
    }
  });
});

describe('cards sold before the ledger', () => {
  test('when a card holding 40 was imported with 40, then /dischargecard pays out its 40 and the pool gets them', async () => {
    const card = new VirtualCard({
      uid: Buffer.from('04F0F0F3', 'hex'),
      blocks: { 4: encodeValueBlock(40, 1) },
    });
    await importCardBalance(rig.ledger, card.id, 40);
    await rig.present(card);
    try {
      const before = await pool();
      const res = await post('/dischargecard');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(withoutReceipt(res.json), {
        cardId: card.id,
        dischargedCredits: 40,
        dischargedAmount: 20,
      });
      assert.equal(walletBalance(card), 0);
      await rig.settled();
      assert.equal(await pool(), before + 40);
      assert.equal((await cardAccount(card.id)).credits, 0);
    } finally {
      await rig.takeAway();
    }
  });
});
