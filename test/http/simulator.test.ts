// The built-in card simulator over real HTTP: the control API, each fault it offers with the
// answer an integrator gets, and that money stays exact (the shop's pool plus the balances of
// every simulated card). The simulator sits under nfc-pcsc, so everything above is production.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { NFC } from 'nfc-pcsc';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { apiCaller, httpRequest, withoutReceipt } from '../support/http-client.ts';
import {
  importCardBalance,
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
let service: TestService;

before(async () => {
  ledger = await startTestLedger();
  service = await startTestService(
    { cloudUrl: ledger.url, simulator: true, cardTimeoutMs: 1_000 },
    { limits: ROOMY_LIMITS },
  );
});
after(async () => {
  await service?.close();
  await ledger?.close();
});

const call = apiCaller(() => service.url, TEST_API_KEY);

interface SimCard {
  cardId: string;
  credits: number | null;
}

/** Every credit in play: the shop's pool plus what every simulated card holds. */
async function creditsInPlay(): Promise<number> {
  const status = await call('GET', '/simulator');
  assert.equal(status.status, 200, status.text);
  const cards = (status.json as { cards: SimCard[] }).cards;
  return (
    (await shopCredits(ledger.url)) + cards.reduce((sum, card) => sum + (card.credits ?? 0), 0)
  );
}

async function settled(): Promise<void> {
  await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'movements settled');
}

let nextUid = 0x10;
/** Places a card with a fresh UID and waits until the reader manager sees it. */
async function place(credits?: number): Promise<SimCard> {
  nextUid += 1;
  const uid = `04203${nextUid.toString(16).padStart(3, '0')}`;
  const res = await call('POST', '/simulator/place', {
    uid,
    ...(credits === undefined ? {} : { credits }),
  });
  assert.equal(res.status, 200, res.text);
  const card = res.json as SimCard;
  await waitUntil(() => service.readers.status.card?.cardId === card.cardId, 5_000, 'card seen');
  return card;
}

async function putBack(cardId: string): Promise<void> {
  const res = await call('POST', '/simulator/put-back', { cardId });
  assert.equal(res.status, 200, res.text);
  await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen again');
}

async function cardCredits(cardId: string): Promise<number | null> {
  const status = (await call('GET', '/simulator')).json as { cards: SimCard[] };
  return status.cards.find((card) => card.cardId === cardId)?.credits ?? null;
}

describe('the card simulator', () => {
  test('when a card is placed, then /readcard, /writecard and /dischargecard work and every answer says it is simulated', async () => {
    const card = await place(20);
    const read = await call('GET', '/readcard');
    assert.equal(read.status, 200, read.text);
    assert.equal(read.headers['card-wallet-simulator'], '1');
    assert.deepEqual(withoutReceipt(read.json), {
      cardId: card.cardId,
      credits: 20,
      rechargeAmount: null,
    });

    // A card placed with credits is a card sold before the provider's ledger knew it: it pays
    // out nothing until the provider imports it.
    const refused = await call('POST', '/dischargecard');
    assert.equal(refused.status, 500, refused.text);
    assert.deepEqual(refused.json, { error: 'CardAccountExceeded' }, refused.text);
    assert.equal(await cardCredits(card.cardId), 20, 'the card is not written');
    await importCardBalance(ledger, card.cardId, 20);

    const inPlay = await creditsInPlay();
    const recharged = await call('POST', '/writecard', { credits: 10 });
    assert.equal(recharged.status, 200, recharged.text);
    assert.equal(recharged.headers['card-wallet-simulator'], '1');
    assert.deepEqual(withoutReceipt(recharged.json), {
      cardId: card.cardId,
      credits: 30,
      rechargeAmount: 5,
    });
    assert.equal(await cardCredits(card.cardId), 30);

    const discharged = await call('POST', '/dischargecard');
    assert.equal(discharged.status, 200, discharged.text);
    assert.equal(await cardCredits(card.cardId), 0);
    await settled();
    assert.equal(await creditsInPlay(), inPlay, 'no credit made or lost');
    const ping = await call('GET', '/ping');
    assert.equal(ping.headers['card-wallet-simulator'], '1');
  });

  test('when the card is taken away, then /readcard answers NoCard; put back, it holds what it held', async () => {
    const card = await place(7);
    const away = await call('POST', '/simulator/take-away');
    assert.equal(away.status, 200, away.text);
    assert.equal((away.json as { card: unknown }).card, null);
    await waitUntil(() => service.readers.status.card === null, 5_000, 'card gone');
    const none = await call('GET', '/readcard');
    assert.equal(none.status, 400, none.text);
    assert.deepEqual(none.json, { error: 'NoCard' });
    await putBack(card.cardId);
    const read = await call('GET', '/readcard');
    assert.deepEqual(withoutReceipt(read.json), {
      cardId: card.cardId,
      credits: 7,
      rechargeAmount: null,
    });
  });

  for (const [fault, commits] of [
    ['tear-before-commit', false],
    ['tear-after-commit', true],
  ] as const) {
    test(`when the next write tears ${fault === 'tear-before-commit' ? 'before' : 'after'} commit, then /writecard answers CardRemovedDuringWrite and putting the card back settles it exactly`, async () => {
      const card = await place(10);
      const inPlay = await creditsInPlay();
      const armed = await call('POST', '/simulator/fault', { fault });
      assert.equal(armed.status, 200, armed.text);
      const res = await call('POST', '/writecard', { credits: 5 });
      assert.equal(res.status, 500, res.text);
      assert.deepEqual(res.json, { error: 'CardRemovedDuringWrite' });
      await waitUntil(() => service.readers.status.card === null, 5_000, 'card gone');
      await putBack(card.cardId);
      await settled();
      assert.equal(await cardCredits(card.cardId), commits ? 15 : 10);
      assert.equal(await creditsInPlay(), inPlay, 'no credit made or lost');
    });
  }

  test('when the card has another key, then card calls answer AuthenticationFail and nothing moves', async () => {
    await place(10);
    const inPlay = await creditsInPlay();
    assert.equal((await call('POST', '/simulator/fault', { fault: 'wrong-key' })).status, 200);
    const read = await call('GET', '/readcard');
    assert.equal(read.status, 400, read.text);
    assert.deepEqual(read.json, { error: 'AuthenticationFail' });
    const write = await call('POST', '/writecard', { credits: 5 });
    assert.deepEqual(write.json, { error: 'AuthenticationFail' });
    await settled();
    assert.equal(await creditsInPlay(), inPlay);
  });

  test('when the card is corrupt, then card calls answer CorruptCard and nothing moves', async () => {
    await place(10);
    assert.equal((await call('POST', '/simulator/fault', { fault: 'corrupt' })).status, 200);
    const inPlay = await creditsInPlay();
    const write = await call('POST', '/writecard', { credits: 5 });
    assert.equal(write.status, 500, write.text);
    assert.deepEqual(write.json, { error: 'CorruptCard' });
    const discharge = await call('POST', '/dischargecard');
    assert.deepEqual(discharge.json, { error: 'CorruptCard' });
    await settled();
    assert.equal(await creditsInPlay(), inPlay);
  });

  test('when the card is slower than the card timeout, then /writecard answers CardNotResponding and money stays exact', async () => {
    const card = await place(10);
    const inPlay = await creditsInPlay();
    const armed = await call('POST', '/simulator/fault', { fault: 'slow', delayMs: 1_500 });
    assert.equal(armed.status, 200, armed.text);
    const res = await call('POST', '/writecard', { credits: 5 });
    assert.equal(res.status, 500, res.text);
    assert.deepEqual(res.json, { error: 'CardNotResponding' });
    assert.equal((await call('POST', '/simulator/fault', { fault: 'none' })).status, 200);
    await settled();
    assert.equal(await cardCredits(card.cardId), 10);
    assert.equal(await creditsInPlay(), inPlay);
  });

  test('when a control request is invalid, then it answers InvalidSimulatorRequest and changes nothing', async () => {
    const before = (await call('GET', '/simulator')).json;
    const refusals: [string, unknown, RegExp][] = [
      ['/simulator/place', { credits: -1 }, /^credits: /],
      ['/simulator/place', { uid: 'xyz' }, /^uid: must be 8 or 14 hex digits/],
      ['/simulator/place', { credits: 1.5 }, /^credits: /],
      ['/simulator/place', { other: 1 }, /"other"/],
      ['/simulator/take-away', { cardId: 'DEADBEEF' }, /"cardId"/],
      ['/simulator/fault', { fault: 'melt' }, /^fault: .*tear-before-commit/],
    ];
    for (const [path, body, detail] of refusals) {
      const res = await call('POST', path, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      const answer = res.json as { error: string; detail: string };
      assert.equal(answer.error, 'InvalidSimulatorRequest', res.text);
      assert.match(answer.detail, detail, res.text);
    }
    const unknown = await call('POST', '/simulator/put-back', { cardId: 'DEADBEEF' });
    assert.equal(unknown.status, 404, unknown.text);
    assert.deepEqual(unknown.json, {
      error: 'UnknownSimulatedCard',
      detail: 'The simulator has never seen card DEADBEEF',
    });
    assert.deepEqual((await call('GET', '/simulator')).json, before);
  });

  test('when the control API is called without the key, then it answers 401', async () => {
    const res = await httpRequest(`${service.url}/simulator`);
    assert.equal(res.status, 401, res.text);
  });
});

describe('DESFire cards in the simulator', () => {
  test('when a DESFire card is placed, then the service sees it by its 7-byte UID and the simulator lists its credits', async () => {
    const blank = await call('POST', '/simulator/place', {
      type: 'desfire',
      uid: '04DF0000000001',
    });
    assert.equal(blank.status, 200, blank.text);
    assert.deepEqual(blank.json, { cardId: '04DF0000000001', credits: 0 });
    await waitUntil(
      () => service.readers.status.card?.cardId === '04DF0000000001',
      5_000,
      'DESFire card seen',
    );
    const loaded = await call('POST', '/simulator/place', { type: 'desfire', credits: 12 });
    assert.equal(loaded.status, 200, loaded.text);
    const { cardId } = loaded.json as SimCard;
    assert.match(cardId, /^04[0-9A-F]{12}$/, 'a random 7-byte NXP UID');
    await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');
    assert.equal(await cardCredits(cardId), 12);
    assert.equal(await cardCredits('04DF0000000001'), 0);
    assert.equal(service.readers.status.problem, null);
  });

  test('when a DESFire card is asked for with a 4-byte UID or an unknown type, then it is InvalidSimulatorRequest', async () => {
    for (const body of [{ type: 'desfire', uid: '04DF0001' }, { type: 'felica' }]) {
      const res = await call('POST', '/simulator/place', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      const { error, detail } = res.json as { error: string; detail?: string };
      assert.equal(error, 'InvalidSimulatorRequest', res.text);
      // The detail names the field at fault.
      assert.match(detail ?? '', body.uid ? /^uid: / : /^type: /, res.text);
    }
  });

  test('when a DESFire card is recharged and paid out without a master key, then its wallet application is made on the first recharge and the money is exact', async () => {
    const placed = await call('POST', '/simulator/place', { type: 'desfire' });
    const { cardId } = placed.json as SimCard;
    await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');
    const inPlay = await creditsInPlay();
    const read = await call('GET', '/readcard');
    assert.deepEqual(
      withoutReceipt(read.json),
      { cardId, credits: 0, rechargeAmount: null },
      read.text,
    );
    const recharged = await call('POST', '/writecard', { credits: 12 });
    assert.deepEqual(
      withoutReceipt(recharged.json),
      { cardId, credits: 12, rechargeAmount: 6 },
      recharged.text,
    );
    assert.equal(await cardCredits(cardId), 12);
    const discharged = await call('POST', '/dischargecard');
    assert.equal(discharged.status, 200, discharged.text);
    assert.equal(await cardCredits(cardId), 0);
    await settled();
    assert.equal(await creditsInPlay(), inPlay, 'no credit made or lost');
  });

  test('when a DESFire card is torn before or after its commit, then the next tap settles it and the money is exact', async () => {
    const placed = await call('POST', '/simulator/place', { type: 'desfire' });
    const { cardId } = placed.json as SimCard;
    await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');
    assert.equal((await call('POST', '/writecard', { credits: 10 })).status, 200);
    const inPlay = await creditsInPlay();
    for (const [fault, landed] of [
      ['tear-before-commit', false],
      ['tear-after-commit', true],
    ] as const) {
      const before = (await cardCredits(cardId)) ?? 0;
      assert.equal((await call('POST', '/simulator/fault', { fault })).status, 200);
      const torn = await call('POST', '/writecard', { credits: 5 });
      assert.equal(torn.status, 500, torn.text);
      await waitUntil(() => service.readers.status.card === null, 5_000, 'card gone');
      await putBack(cardId);
      const read = await call('GET', '/readcard');
      assert.equal(read.status, 200, read.text);
      assert.equal(await cardCredits(cardId), before + (landed ? 5 : 0), fault);
    }
    await settled();
    assert.equal(await creditsInPlay(), inPlay);
  });

  test('when faults are armed on DESFire cards, then another key is AuthenticationFail, a wallet without its files CorruptCard, a slow card CardNotResponding, and nothing moves', async () => {
    const inPlay = await creditsInPlay();
    for (const [fault, error, credits] of [
      ['wrong-key', 'AuthenticationFail', 9],
      ['corrupt', 'CorruptCard', null],
      ['slow', 'CardNotResponding', 9],
    ] as const) {
      const placed = await call('POST', '/simulator/place', { type: 'desfire', credits: 9 });
      const { cardId } = placed.json as SimCard;
      await waitUntil(() => service.readers.status.card?.cardId === cardId, 5_000, 'card seen');
      const armed = await call('POST', '/simulator/fault', { fault });
      assert.deepEqual(armed.json, { cardId, credits }, `${fault}: ${armed.text}`);
      const res = await call('POST', '/writecard', { credits: 1 });
      assert.deepEqual(res.json, { error }, `${fault}: ${res.text}`);
    }
    assert.equal((await call('POST', '/simulator/fault', { fault: 'none' })).status, 200);
    await settled();
    // The three cards' 9 credits were placed (demo credits: no ledger issued them); the card
    // left without files counts as null; nothing moved since.
    assert.equal(await creditsInPlay(), inPlay + 18);
  });
});

describe('the simulator with a shop key B', () => {
  test('when the wallet key is a key B, then placed cards carry it where key B may be used, and a recharge works', async () => {
    const keyB = await startTestService(
      { cloudUrl: ledger.url, simulator: true, cardKey: '0123456789AB', cardKeyType: 'B' },
      { limits: ROOMY_LIMITS },
    );
    try {
      const post = (path: string, body: unknown) =>
        httpRequest(`${keyB.url}${path}`, {
          method: 'POST',
          headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      const placed = await post('/simulator/place', { uid: 'B0B0B0B0', credits: 3 });
      assert.equal(placed.status, 200, placed.text);
      const recharged = await post('/writecard', { credits: 4 });
      assert.equal(recharged.status, 200, recharged.text);
      assert.deepEqual(withoutReceipt(recharged.json), {
        cardId: 'B0B0B0B0',
        credits: 7,
        rechargeAmount: 2,
      });
    } finally {
      await keyB.close();
    }
  });
});

/** Another service core with the simulator, on its own data folder, to restart or damage. */
async function startSimulatorService(dataDir: string) {
  const { startWorkerService } = await import('../../service/worker-service.ts');
  const { parseConfig } = await import('../../service/config.ts');
  const { silentLogger } = await import('../../service/logger.ts');
  return startWorkerService({
    config: parseConfig({
      port: 0,
      apiKey: TEST_API_KEY,
      dataDir,
      cloudUrl: ledger.url,
      simulator: true,
    }),
    log: silentLogger,
  });
}

describe('the simulator across a restart', () => {
  test('when the service restarts on the same data folder, then the simulated cards (MIFARE Classic and DESFire) and the one in the field are kept', async () => {
    const dataDir = join(service.dataDir, 'restart');
    const first = await startSimulatorService(dataDir);
    const firstCall = apiCaller(() => first.url, TEST_API_KEY);
    const desfire = await firstCall('POST', '/simulator/place', {
      type: 'desfire',
      uid: '04CAFE00000002',
      credits: 8,
    });
    assert.equal(desfire.status, 200, desfire.text);
    const placed = await firstCall('POST', '/simulator/place', { uid: 'CAFE0001', credits: 42 });
    assert.equal(placed.status, 200, placed.text);
    await first.close();
    const second = await startSimulatorService(dataDir);
    try {
      await waitUntil(() => second.readers.status.card?.cardId === 'CAFE0001', 5_000, 'card seen');
      const secondCall = apiCaller(() => second.url, TEST_API_KEY);
      const read = await secondCall('GET', '/readcard');
      assert.deepEqual(withoutReceipt(read.json), {
        cardId: 'CAFE0001',
        credits: 42,
        rechargeAmount: null,
      });
      const status = (await secondCall('GET', '/simulator')).json as { cards: SimCard[] };
      assert.deepEqual(status.cards, [
        { cardId: 'CAFE0001', credits: 42 },
        { cardId: '04CAFE00000002', credits: 8 },
      ]);
    } finally {
      await second.close();
    }
  });
});

describe('a damaged simulator file', () => {
  test('when the kept cards file is not what the simulator wrote, then the service starts without cards', async () => {
    const dataDir = join(service.dataDir, 'damaged');
    mkdirSync(join(dataDir, 'simulator'), { recursive: true });
    writeFileSync(join(dataDir, 'simulator', 'cards.json'), '{"version":1,"cards":{"X":"zz"}}');
    const damaged = await startSimulatorService(dataDir);
    try {
      const status = await apiCaller(() => damaged.url, TEST_API_KEY)('GET', '/simulator');
      assert.deepEqual(status.json, { card: null, cards: [] });
    } finally {
      await damaged.close();
    }
  });
});

describe('a real-reader configuration', () => {
  test('when the simulator is not asked for, then nothing can change the rate limits: /simulator/rate-limits is 404 and /readcard keeps the spec’s 5 per 10 s', async () => {
    const real = await startTestService({ cloudUrl: ledger.url });
    try {
      const set = await httpRequest(`${real.url}/simulator/rate-limits`, {
        method: 'POST',
        headers: { 'X-Api-Key': TEST_API_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ readcard: { limit: 1000, windowSeconds: 1 } }),
      });
      assert.equal(set.status, 404, set.text);
      const read = await httpRequest(`${real.url}/readcard`, {
        headers: { 'X-Api-Key': TEST_API_KEY },
      });
      assert.match(String(read.headers['ratelimit-policy']), /^"readcard"; q=5; w=10;/, read.text);
    } finally {
      await real.close();
    }
  });

  test('when the simulator is not asked for, then PC/SC is used, /simulator does not exist and no answer says simulated', async () => {
    let nfcCreated = 0;
    const real = await startTestService(
      { cloudUrl: ledger.url },
      {
        pcscdSocket: undefined,
        createNfc: () => {
          nfcCreated += 1;
          return new EventEmitter() as unknown as NFC;
        },
      },
    );
    try {
      await waitUntil(() => nfcCreated > 0, 5_000, 'the PC/SC context');
      assert.equal(real.simulator, undefined);
      for (const path of ['/simulator', '/simulator/place']) {
        const res = await httpRequest(`${real.url}${path}`, {
          method: path === '/simulator' ? 'GET' : 'POST',
          headers: { 'X-Api-Key': TEST_API_KEY },
        });
        assert.equal(res.status, 404, res.text);
        assert.deepEqual(res.json, {
          error: 'NotFound',
          detail: `no such path ${path}: the card simulator's paths exist only with --simulator`,
        });
        assert.equal(res.headers['card-wallet-simulator'], undefined);
      }
      const ping = await httpRequest(`${real.url}/ping`);
      assert.equal(ping.headers['card-wallet-simulator'], undefined);
      assert.equal(existsSync(join(real.dataDir, 'simulator')), false, 'no simulator files');
    } finally {
      await real.close();
    }
  });
});
