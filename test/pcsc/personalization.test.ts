import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  deriveSectorKeys,
  parseMasterKey,
  walletSectorTrailer,
} from '../../service/card/card-keys.ts';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { startCardRig, waitUntil, walletBalance, type CardRig } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse, withoutReceipt } from '../support/http-client.ts';
import { importCardBalance, shopCredits, TEST_API_KEY } from '../support/test-ledger.ts';
import { VirtualCard, type FaultAction } from '../support/virtual-card.ts';

// A test master key (never a real one: this file is public).
const MASTER = '8E2A1F0C5B7D9364A0C3E5F71B2D4F60';
const TRANSPORT_TRAILER = 'FFFFFFFFFFFFFF078069FFFFFFFFFFFF';
const SECTOR = 1;
const TRAILER_BLOCK = 7;

let rig: CardRig;
// The ledger as its own process on PostgreSQL, as a shop's is.
before(
  async () =>
    (rig = await startCardRig(
      { cardMasterKey: MASTER, cardTimeoutMs: 1_500 },
      { ledgerProcess: true },
    )),
);
after(() => rig.close());

let nextUid = 0x10;
/** A fresh card from the supplier: transport key, blank slots, a UID no other test used. */
function freshCard(blocks: Record<number, Buffer> = {}): VirtualCard {
  nextUid += 1;
  return new VirtualCard({ uid: Buffer.from([0x04, 0x61, 0x70, nextUid]), blocks });
}

const keysOf = (card: VirtualCard) => deriveSectorKeys(parseMasterKey(MASTER), card.uid, SECTOR);
const personalizedTrailer = (card: VirtualCard) => walletSectorTrailer(keysOf(card));

/** A card personalized before (its trailer written with its derived keys). */
function personalizedCard(blocks: Record<number, Buffer> = {}): VirtualCard {
  const card = freshCard(blocks);
  card.setBlock(TRAILER_BLOCK, personalizedTrailer(card));
  return card;
}

const call = apiCaller(() => rig.service.url, TEST_API_KEY);
const personalize = () => call('POST', '/cards/personalize');
const movementCreates = () =>
  rig.ledgerProxy.requests.filter((r) => r.method === 'POST' && r.path === '/v1/movements').length;

/** The trailer as it is on the card, and what it means. */
function trailerState(card: VirtualCard): 'transport' | 'personalized' | 'other' {
  const trailer = card.block(TRAILER_BLOCK);
  if (trailer.equals(Buffer.from(TRANSPORT_TRAILER, 'hex'))) return 'transport';
  return trailer.equals(personalizedTrailer(card)) ? 'personalized' : 'other';
}

async function withCard<T>(card: VirtualCard, run: () => Promise<T>): Promise<T> {
  await rig.present(card);
  try {
    return await run();
  } finally {
    await rig.takeAway();
  }
}

describe('per-card keys', () => {
  test('when a card carries its derived keys, then readcard and a recharge open it with its own key B', async () => {
    const card = personalizedCard({ 4: encodeValueBlock(20, 1) });
    await importCardBalance(rig.ledger, card.id, 20);
    await withCard(card, async () => {
      rig.reader.resetApduLog();
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, shown(read));
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 20,
        rechargeAmount: null,
      });
      const recharged = await call('POST', '/writecard', { credits: 5 });
      assert.equal(recharged.status, 200, shown(recharged));
      assert.deepEqual(withoutReceipt(recharged.json), {
        cardId: card.id,
        credits: 25,
        rechargeAmount: 2.5,
      });
      assert.equal(walletBalance(card), 25);
      const authentications = rig.reader.apdus.filter((apdu) => apdu[1] === 0x86);
      assert.ok(authentications.length > 0, 'the card was authenticated');
      for (const apdu of authentications) assert.equal(apdu[8], 0x61, 'key B every time');
      const keyB = keysOf(card).keyB;
      const loaded = rig.reader.apdus.filter((apdu) => apdu[1] === 0x82);
      for (const apdu of loaded) assert.ok(apdu.subarray(5).equals(keyB), 'only its key B loaded');
    });
  });

  test('when a card carries a foreign key, then AuthenticationFail, nothing is written and the ledger is not asked', async () => {
    const card = freshCard({ 4: encodeValueBlock(40, 1) });
    card.setKeys(SECTOR, { keyA: Buffer.from('A1A2A3A4A5A6', 'hex') });
    const dump = card.dump();
    await withCard(card, async () => {
      const creates = movementCreates();
      for (const res of [await call('POST', '/writecard', { credits: 5 }), await personalize()]) {
        assert.equal(res.status, 400, shown(res));
        assert.deepEqual(res.json, { error: 'AuthenticationFail' }, shown(res));
      }
      assert.ok(card.dump().equals(dump), 'the card is unchanged');
      assert.equal(movementCreates(), creates, 'no movement at the ledger');
    });
  });

  test('when answers are given, then none carries the master key', async () => {
    const card = freshCard();
    await withCard(card, async () => {
      const answers: HttpResponse[] = [
        await call('GET', '/readcard'),
        await personalize(),
        await call('GET', '/openapi.json'),
        await call('POST', '/cards/personalize', { master: true }),
      ];
      for (const res of answers) {
        assert.ok(!res.text.toUpperCase().includes(MASTER), `no master key in ${shown(res)}`);
      }
    });
  });
});

describe('POST /cards/personalize', () => {
  test('when a fresh card is personalized, then both slots, then its trailer are written, and its own key B opens it', async () => {
    const card = freshCard();
    await withCard(card, async () => {
      const res = await personalize();
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(res.json, { cardId: card.id, credits: 0, alreadyPersonalized: false });
      assert.ok(card.block(4).equals(Buffer.alloc(16)), 'slot 0 blank');
      assert.ok(card.block(5).equals(encodeValueBlock(0, 0)), 'slot 1 = 0 at generation 0');
      assert.equal(
        card.block(TRAILER_BLOCK).toString('hex').toUpperCase().slice(12, 20),
        '48778B69',
      );
      assert.equal(trailerState(card), 'personalized');
      const writes = rig.reader.apdus.filter((apdu) => apdu[1] === 0xd6).map((apdu) => apdu[3]);
      assert.deepEqual(writes.slice(-3), [4, 5, TRAILER_BLOCK], 'slots, then the trailer');
      const lastAuth = rig.reader.apdus.filter((apdu) => apdu[1] === 0x86).at(-1);
      assert.equal(lastAuth?.[8], 0x61, 'proved with key B');
    });
  });

  test('when the card is personalized already, then 200 alreadyPersonalized and nothing is written', async () => {
    const card = personalizedCard({ 4: encodeValueBlock(7, 1) });
    await withCard(card, async () => {
      rig.reader.resetApduLog();
      const res = await personalize();
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(res.json, { cardId: card.id, credits: 7, alreadyPersonalized: true });
      assert.equal(rig.reader.counts.write, 0);
    });
  });

  test('when a card on the transport key already holds a balance, then it keeps its slots and balance', async () => {
    const card = freshCard({ 4: encodeValueBlock(30, 1) });
    await withCard(card, async () => {
      const res = await personalize();
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(res.json, { cardId: card.id, credits: 30, alreadyPersonalized: false });
      assert.ok(card.block(4).equals(encodeValueBlock(30, 1)));
      assert.equal(trailerState(card), 'personalized');
    });
  });
});

describe('a forged balance on a personalized card', () => {
  test('when a card loaded with 10 is rewritten to 1000 with its own derived key B, then /dischargecard pays out nothing, the card keeps its balance and is flagged', async () => {
    const card = freshCard();
    await withCard(card, async () => {
      const loaded = await call('POST', '/writecard', { credits: 10 });
      assert.equal(loaded.status, 200, shown(loaded));
      await waitUntil(() => rig.service.unconfirmedMovements === 0, 20_000, 'posted');
    });
    // Whoever holds this card's key B (recovered with hardware) writes a balance of their own.
    card.setBlock(4, encodeValueBlock(1000, 7));
    card.setBlock(5, encodeValueBlock(0, 0));
    await withCard(card, async () => {
      const pool = await shopCredits(rig.ledger.url);
      const paid = await call('POST', '/dischargecard');
      assert.equal(paid.status, 500, shown(paid));
      assert.deepEqual(paid.json, { error: 'CardAccountExceeded' }, shown(paid));
      assert.equal(walletBalance(card), 1000, 'the card is not written');
      assert.equal(await shopCredits(rig.ledger.url), pool, 'nothing paid out');
      const account = await fetch(`${rig.ledger.url}/v1/cards/${card.id}`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      const body = (await account.json()) as { credits: number; suspect: boolean };
      assert.deepEqual(
        { credits: body.credits, suspect: body.suspect },
        { credits: 10, suspect: true },
      );
    });
  });
});

describe('personalization on the first recharge', () => {
  test('when a fresh card is first recharged, then it is personalized, loaded, and then works with its derived keys only', async () => {
    const card = freshCard();
    await withCard(card, async () => {
      const poolBefore = await shopCredits(rig.ledger.url);
      const res = await call('POST', '/writecard', { credits: 10 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(withoutReceipt(res.json), {
        cardId: card.id,
        credits: 10,
        rechargeAmount: 5,
      });
      assert.equal(trailerState(card), 'personalized');
      assert.equal(walletBalance(card), 10);
      assert.notEqual(card.keyA(SECTOR).toString('hex'), 'ffffffffffff', 'no transport key');
      await waitUntil(() => rig.service.unconfirmedMovements === 0, 20_000, 'posted');
      assert.equal(await shopCredits(rig.ledger.url), poolBefore - 10);
      const paid = await call('POST', '/dischargecard');
      assert.equal(paid.status, 200, shown(paid));
      assert.deepEqual(withoutReceipt(paid.json), {
        cardId: card.id,
        dischargedCredits: 10,
        dischargedAmount: 5,
      });
    });
  });

  test('when the card leaves during that personalization, then nothing was reserved at the ledger', async () => {
    const card = freshCard();
    await rig.present(card);
    const creates = movementCreates();
    const fault = card.failAt({ command: 'write', block: TRAILER_BLOCK }, 'pull-before');
    const res = await call('POST', '/writecard', { credits: 10 });
    assert.ok(fault.fired, 'the fault hit');
    assert.equal(res.status, 500, shown(res));
    assert.deepEqual(res.json, { error: 'CardRemovedDuringPersonalization' }, shown(res));
    assert.equal(movementCreates(), creates, 'no movement at the ledger');
    assert.equal(trailerState(card), 'transport');
    await rig.reader.waitForRemoval();
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
  });
});

// A real MIFARE Classic card halts after a failed authentication and answers nothing, the right
// key included, until it is reset; the virtual card does the same (63 00). The worker resets it
// (SCardDisconnect with SCARD_RESET_CARD, which reaches the card as vpcd's reset) before the
// next authentication, and checks its UID again.
describe('the card halts after a failed authentication', () => {
  const authKeyTypes = () =>
    rig.reader.apdus.filter((apdu) => apdu[1] === 0x86).map((apdu) => apdu[8]);

  test('when a fresh card is first recharged, then one reset between its own key and the transport key, and then its key B reads it with no reset', async () => {
    const card = freshCard();
    await withCard(card, async () => {
      rig.reader.resetApduLog();
      const res = await call('POST', '/writecard', { credits: 10 });
      assert.equal(res.status, 200, shown(res));
      assert.deepEqual(withoutReceipt(res.json), {
        cardId: card.id,
        credits: 10,
        rechargeAmount: 5,
      });
      assert.equal(trailerState(card), 'personalized');
      assert.equal(rig.reader.resets, 1, 'one reset, for the one fallback');
      const apdus = rig.reader.apdus;
      const first = apdus.findIndex((apdu) => apdu[1] === 0x86);
      assert.equal(apdus[first]?.[8], 0x61, 'its own key B first');
      assert.equal(
        apdus[first + 1]?.toString('hex'),
        'ffca000000',
        'its UID checked after the reset',
      );
      assert.deepEqual(
        authKeyTypes().slice(0, 3),
        [0x61, 0x60, 0x61],
        'own, transport, own (the proof)',
      );

      rig.reader.resetApduLog();
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, shown(read));
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 10,
        rechargeAmount: null,
      });
      assert.equal(rig.reader.resets, 0);
      assert.deepEqual(authKeyTypes(), [0x61], 'its key B, once');
    });
  });

  test('when a failed authentication left a personalized card halted, then the next request resets it once and reads it with its key B', async () => {
    const card = personalizedCard({ 4: encodeValueBlock(20, 1) });
    await withCard(card, async () => {
      // For one request its key B does not open it (as in a poor field): both keys fail.
      card.setKeys(SECTOR, { keyB: Buffer.alloc(6, 0x42) });
      const failed = await call('GET', '/readcard');
      assert.equal(failed.status, 400, shown(failed));
      assert.deepEqual(failed.json, { error: 'AuthenticationFail' }, shown(failed));
      card.setBlock(TRAILER_BLOCK, personalizedTrailer(card));

      rig.reader.resetApduLog();
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, shown(read));
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: card.id,
        credits: 20,
        rechargeAmount: null,
      });
      assert.equal(rig.reader.resets, 1, 'reset before its first authentication');
      assert.deepEqual(authKeyTypes(), [0x61], 'its key B, once');
    });
  });

  test('when a card carries a foreign key, then one reset between its two keys, AuthenticationFail, and nothing written', async () => {
    const card = freshCard({ 4: encodeValueBlock(40, 1) });
    card.setKeys(SECTOR, { keyA: Buffer.from('A1A2A3A4A5A6', 'hex') });
    const dump = card.dump();
    await withCard(card, async () => {
      rig.reader.resetApduLog();
      const res = await call('POST', '/writecard', { credits: 5 });
      assert.equal(res.status, 400, shown(res));
      assert.deepEqual(res.json, { error: 'AuthenticationFail' }, shown(res));
      assert.equal(rig.reader.resets, 1);
      assert.deepEqual(authKeyTypes(), [0x61, 0x60], 'its own key B, then the transport key A');
      assert.equal(rig.reader.counts.write, 0);
      assert.ok(card.dump().equals(dump), 'the card is unchanged');
    });
  });
});

describe('tearing: the card pulled at every APDU of a personalization', () => {
  let apduCount = 0;
  before(async () => {
    // How many APDUs a personalization of a fresh card takes, counted on a probe card.
    const probe = freshCard();
    await withCard(probe, async () => {
      rig.reader.resetApduLog();
      const res = await personalize();
      assert.equal(res.status, 200, shown(res));
      apduCount = rig.reader.apdus.length;
    });
  });

  test('when counted, then a personalization takes a dozen APDUs or more', () => {
    assert.ok(apduCount >= 12, `${apduCount} APDUs`);
  });

  /**
   * Pulls the card at APDU `step` of a personalization and checks what is left. False when the
   * personalization ended before that APDU (and succeeded): every step was covered.
   */
  async function pulledAt(step: number, mode: FaultAction): Promise<boolean> {
    const card = freshCard();
    rig.reader.resetApduLog();
    await rig.present(card);
    const inserted = rig.reader.apdus.length;
    const fault = card.failAt({ index: inserted + step }, mode);
    const first = await personalize();
    if (!fault.fired) {
      fault.cancel();
      await rig.takeAway();
      assert.equal(first.status, 200, shown(first));
      assert.equal(trailerState(card), 'personalized');
      return false;
    }
    const hitTrailer = fault.event?.command === 'write' && fault.event.block === TRAILER_BLOCK;
    const trailerTorn = hitTrailer && mode === 'tear';
    const state = trailerState(card);
    if (trailerTorn) assert.equal(state, 'other', 'the trailer is half written');
    else assert.ok(state === 'transport' || state === 'personalized', state);
    if (first.status === 200) assert.equal(state, 'personalized', shown(first));
    else {
      assert.match(
        String((first.json as { error: string }).error),
        /^(NoCard|CardRemovedDuringPersonalization)$/,
        shown(first),
      );
    }
    await rig.reader.waitForRemoval();
    await waitUntil(() => rig.service.readers.status.card === null, 5_000, 'card gone');
    await withCard(card, async () => {
      const again = await personalize();
      if (trailerTorn) {
        assert.equal(again.status, 500, shown(again));
        assert.deepEqual(again.json, { error: 'PersonalizationTorn' }, shown(again));
        return;
      }
      assert.equal(again.status, 200, shown(again));
      assert.equal((again.json as { credits: number }).credits, 0, shown(again));
      assert.equal(trailerState(card), 'personalized');
      assert.ok(card.block(4).equals(Buffer.alloc(16)), 'slot 0 blank');
      assert.ok(card.block(5).equals(encodeValueBlock(0, 0)), 'slot 1 = 0 at generation 0');
    });
    return true;
  }

  // One sub-test per APDU, until a personalization ends before the pull (how many APDUs it
  // takes depends on whether the reader still holds the transport key: nfc-pcsc skips a LOAD
  // KEY it did last), so no step is skipped and none is guessed.
  for (const mode of ['pull-before', 'pull-after', 'tear'] as const) {
    test(`when the card is pulled at each APDU of a personalization (${mode}), then it is left on the transport key or personalized, or reported torn`, async (t) => {
      let pulled = true;
      let step = 0;
      for (; pulled; step += 1) {
        await t.test(`APDU ${step} (${mode})`, async () => {
          pulled = await pulledAt(step, mode);
        });
      }
      assert.ok(step > 12, `only ${step - 1} APDUs were pulled`);
    });
  }
});
