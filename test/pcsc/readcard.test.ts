import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeValueBlock } from '../../service/card/wallet-format.ts';
import { startCardRig, nextReaderEvent, waitUntil, type CardRig } from '../support/card-rig.ts';
import { httpRequest, type HttpResponse } from '../support/http-client.ts';
import { TEST_API_KEY } from '../support/test-service.ts';
import { VirtualCard } from '../support/virtual-card.ts';

const UID4 = Buffer.from('04A1B2C3', 'hex');
const UID7 = Buffer.from('04112233445566', 'hex');
const GARBAGE = Buffer.from('00112233445566778899AABBCCDDEEFF', 'hex');

let rig: CardRig;
before(async () => (rig = await startCardRig({ cardTimeoutMs: 1_500 })));
after(() => rig.close());

const readCard = (): Promise<HttpResponse> =>
  httpRequest(`${rig.service.url}/readcard`, { headers: { 'X-Api-Key': TEST_API_KEY } });

describe('GET /readcard through pcscd, vpcd and a virtual MIFARE Classic card', () => {
  test('when a blank card is on the reader, then it reads 0 credits', async () => {
    const card = new VirtualCard({ uid: UID4 });
    await rig.present(card);
    try {
      const res = await readCard();
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { cardId: '04A1B2C3', credits: 0, rechargeAmount: null });
    } finally {
      await rig.takeAway();
    }
  });

  test('when a card holding 1234 is on the reader, then it reads 1234 and writes nothing', async () => {
    const card = new VirtualCard({ uid: UID7, blocks: { 4: encodeValueBlock(1234, 7) } });
    await rig.present(card);
    try {
      rig.reader.resetApduLog();
      const res = await readCard();
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { cardId: '04112233445566', credits: 1234, rechargeAmount: null });
      assert.equal(rig.reader.counts.write, 0);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the key is loaded already, then a read takes 4 APDUs (authenticate, 2 slots and the float reference)', async () => {
    const card = new VirtualCard({ uid: UID4, blocks: { 5: encodeValueBlock(42, 2) } });
    await rig.present(card);
    try {
      assert.equal((await readCard()).status, 200);
      rig.reader.resetApduLog();
      const res = await readCard();
      assert.deepEqual(res.json, { cardId: '04A1B2C3', credits: 42, rechargeAmount: null });
      assert.equal(rig.reader.apdus.length, 4);
      assert.deepEqual(
        { authenticate: rig.reader.counts.authenticate, read: rig.reader.counts.read },
        { authenticate: 1, read: 3 },
      );
    } finally {
      await rig.takeAway();
    }
  });

  test('when the newer slot is torn, then the backup slot is read', async () => {
    // Slot 1 was being written (generation 9) when the card left: it is not a valid block.
    const torn = Buffer.from(encodeValueBlock(900, 9));
    torn[5] = torn[5]! ^ 0xff;
    const card = new VirtualCard({ uid: UID4, blocks: { 4: encodeValueBlock(800, 8), 5: torn } });
    await rig.present(card);
    try {
      const res = await readCard();
      assert.deepEqual(res.json, { cardId: '04A1B2C3', credits: 800, rechargeAmount: null });
    } finally {
      await rig.takeAway();
    }
  });

  test('when both slots are valid, then the newer generation wins, across the wrap', async () => {
    const card = new VirtualCard({
      uid: UID4,
      blocks: { 4: encodeValueBlock(300, 255), 5: encodeValueBlock(310, 0) },
    });
    await rig.present(card);
    try {
      const res = await readCard();
      assert.deepEqual(res.json, { cardId: '04A1B2C3', credits: 310, rechargeAmount: null });
    } finally {
      await rig.takeAway();
    }
  });

  test('when neither slot is valid and the card is not blank, then 500 CorruptCard and no write', async () => {
    const card = new VirtualCard({ uid: UID4, blocks: { 4: GARBAGE, 5: GARBAGE } });
    await rig.present(card);
    try {
      rig.reader.resetApduLog();
      const res = await readCard();
      assert.equal(res.status, 500);
      assert.deepEqual(res.json, { error: 'CorruptCard' });
      assert.equal(rig.reader.counts.write, 0);
      assert.deepEqual(card.block(4), GARBAGE);
      assert.deepEqual(card.block(5), GARBAGE);
    } finally {
      await rig.takeAway();
    }
  });

  test('when the card uses another key, then 400 AuthenticationFail', async () => {
    const card = new VirtualCard({ uid: UID4 });
    card.setKeys(1, { keyA: Buffer.from('A0A1A2A3A4A5', 'hex') });
    await rig.present(card);
    try {
      const res = await readCard();
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { error: 'AuthenticationFail' });
    } finally {
      await rig.takeAway();
    }
  });

  test('when no card is on the reader, then 400 NoCard', async () => {
    const res = await readCard();
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { error: 'NoCard' });
  });

  for (const mode of ['pull-before', 'pull-after'] as const) {
    test(`when the card is pulled at a read (${mode}), then 400 NoCard, and the next card reads`, async () => {
      const card = new VirtualCard({ uid: UID4, blocks: { 4: encodeValueBlock(5, 1) } });
      await rig.present(card);
      const gone = nextReaderEvent(rig.service.readers, (event) => event.type === 'card-removed');
      const fault = card.failAt({ command: 'read', nth: 2 }, mode);
      const res = await readCard();
      assert.ok(fault.fired);
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json, { error: 'NoCard' });
      await gone;
      const next = new VirtualCard({ uid: UID7, blocks: { 4: encodeValueBlock(6, 1) } });
      await rig.present(next);
      try {
        const again = await readCard();
        assert.deepEqual(again.json, {
          cardId: '04112233445566',
          credits: 6,
          rechargeAmount: null,
        });
      } finally {
        await rig.takeAway();
      }
    });
  }

  test('when the card stops answering, then 500 CardNotResponding in time, and then NoCard once removed', async () => {
    const card = new VirtualCard({ uid: UID4 });
    await rig.present(card);
    const fault = card.failAt('read', 'stall');
    const started = Date.now();
    const res = await readCard();
    const took = Date.now() - started;
    assert.ok(fault.fired);
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { error: 'CardNotResponding' });
    assert.ok(took < 10_000, `answered after ${took} ms`);
    await rig.takeAway();
    const after = await readCard();
    assert.deepEqual(after.json, { error: 'NoCard' });
  });
});

describe('pcscd going away and coming back', () => {
  test('when pcscd is killed and restarted, then /readcard works again without restarting the service', async () => {
    const card = new VirtualCard({ uid: UID4, blocks: { 4: encodeValueBlock(77, 1) } });
    await rig.present(card);
    assert.equal((await readCard()).status, 200);

    await rig.pcscd.kill();
    await rig.reader.waitForRemoval();
    await waitUntil(() => rig.service.readers.status.pcsc === 'unavailable', 5_000, 'pcsc down');
    const ping = await httpRequest(`${rig.service.url}/ping`);
    assert.equal(ping.text, '"pong"', 'the event loop is not blocked while pcscd is down');
    const down = await readCard();
    assert.deepEqual(down.json, { error: 'NoReader' });

    await rig.pcscd.start();
    await waitUntil(() => rig.service.readers.status.reader !== null, 10_000, 'reader back');
    await rig.present(card);
    const res = await readCard();
    assert.deepEqual(res.json, { cardId: '04A1B2C3', credits: 77, rechargeAmount: null });
  });

  test('when the service starts before pcscd, then it picks the reader up once pcscd runs', async () => {
    await rig.reader.remove();
    await rig.pcscd.stop();
    await waitUntil(() => rig.service.readers.status.pcsc === 'unavailable', 5_000, 'pcsc down');
    await rig.pcscd.start();
    await waitUntil(() => rig.service.readers.status.reader !== null, 10_000, 'reader back');
    assert.equal(rig.service.readers.status.pcsc, 'ready');
  });
});
