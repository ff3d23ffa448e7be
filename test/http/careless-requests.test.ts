// Careless requests, as a new integrator sends them, against the service with the card
// simulator: each is a 400 with the spec's error code and a detail naming the field and the
// rule, and nothing happens (the card keeps its credits, the ledger records no movement).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROOMY_LIMITS, waitUntil } from '../support/card-rig.ts';
import { apiCaller, shown, type HttpResponse, withoutReceipt } from '../support/http-client.ts';
import { memoryLogger } from '../support/memory-logger.ts';
import {
  pendingMovements,
  shopCredits,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let ledger: TestLedger;
let service: TestService;
const log = memoryLogger();
const CARD = 'CA7E1E55';

before(async () => {
  ledger = await startTestLedger();
  service = await startTestService(
    { cloudUrl: ledger.url, simulator: true },
    { limits: ROOMY_LIMITS, log },
  );
  const placed = await call('POST', '/simulator/place', { uid: CARD });
  assert.equal(placed.status, 200, shown(placed));
  await waitUntil(() => service.readers.status.card?.cardId === CARD, 5_000, 'the card');
  const loaded = await call('POST', '/writecard', { credits: 20 });
  assert.equal(loaded.status, 200, shown(loaded));
  await waitUntil(() => service.unconfirmedMovements === 0, 20_000, 'the recharge posted');
});
after(async () => {
  await service?.close();
  await ledger?.close();
});

const call = apiCaller(() => service.url, TEST_API_KEY);

async function cardCredits(): Promise<number | null> {
  const status = await call('GET', '/simulator');
  return (status.json as { card: { credits: number | null } | null }).card?.credits ?? null;
}

/** Sends a careless request and checks it was refused as expected, with nothing moved. */
async function refused(
  send: () => Promise<HttpResponse>,
  error: string,
  detail: string,
): Promise<void> {
  const [credits, pool, pending] = [
    await cardCredits(),
    await shopCredits(ledger.url),
    await pendingMovements(ledger.url),
  ];
  const res = await send();
  assert.equal(res.status, 400, shown(res));
  assert.deepEqual(res.json, { error, detail }, shown(res));
  assert.equal(await cardCredits(), credits, 'the card keeps its credits');
  assert.equal(await shopCredits(ledger.url), pool, "the shop's pool is unchanged");
  assert.equal(await pendingMovements(ledger.url), pending, 'no movement at the ledger');
}

describe('careless requests', () => {
  test('when /dischargecard is sent {"credits": 5}, then 400 InvalidBody naming the field, and the card is not paid out', () =>
    refused(
      () => call('POST', '/dischargecard', { credits: 5 }),
      'InvalidBody',
      '"credits": not a field here; it takes no body (it pays out the whole balance)',
    ));

  test('when /dischargecard is sent a body that is not an object, then 400 InvalidBody', () =>
    refused(
      () => call('POST', '/dischargecard', '[5]'),
      'InvalidBody',
      'the body must be empty or {} (got an array): it pays out the whole balance',
    ));

  test('when /cards/personalize is sent a field, then 400 InvalidBody naming it', () =>
    refused(
      () => call('POST', '/cards/personalize', { cardId: CARD }),
      'InvalidBody',
      '"cardId": not a field here; it takes no body (it personalizes the card on the reader)',
    ));

  test('when /cards/settle is sent a field, then 400 InvalidBody naming it', () =>
    refused(
      () => call('POST', '/cards/settle', { tillId: 'x' }),
      'InvalidBody',
      '"tillId": not a field here; it takes no body (it settles the card on the reader)',
    ));

  test('when /writecard has an unknown field beside credits, then 400 naming it, and nothing is charged', () =>
    refused(
      () => call('POST', '/writecard', { credits: 5, note: 'birthday' }),
      'Invalid credits or amount value',
      '"note": not a field of /writecard, which takes credits or amount',
    ));

  test('when /writecard has a mistyped field, then 400 saying which field was meant', () =>
    refused(
      () => call('POST', '/writecard', { credit: 5 }),
      'Invalid credits or amount value',
      '"credit": not a field of /writecard, which takes credits or amount; did you mean credits?',
    ));

  test('when /writecard has an amount that is a binary fraction, then 400 naming the decimals rule', () =>
    refused(
      () => call('POST', '/writecard', '{"amount": 0.30000000000000004}'),
      'Invalid credits or amount value',
      'amount: at most 2 decimals (got 0.30000000000000004)',
    ));

  const rules: [string, unknown, string][] = [
    ['no body', undefined, 'the body needs credits or amount, e.g. {"credits": 10}'],
    ['both fields', { credits: 1, amount: 1 }, 'send credits or amount, not both'],
    [
      'credits as a string',
      { credits: '10' },
      'credits: must be a whole number (got a string "10")',
    ],
    ['a fraction of a credit', { credits: 2.5 }, 'credits: must be a whole number (got 2.5)'],
    ['zero credits', { credits: 0 }, 'credits: must be 1 to 100000 (got 0)'],
    [
      'an amount beyond the bound',
      { amount: 10_000.01 },
      'amount: must be 0.01 to 10000.00 euros (got 10000.01)',
    ],
  ];
  for (const [what, body, detail] of rules) {
    test(`when /writecard has ${what}, then 400 with the rule it breaks`, () =>
      refused(() => call('POST', '/writecard', body), 'Invalid credits or amount value', detail));
  }

  test('when /dischargecard has no body or {}, then it pays out as before', async () => {
    const empty = await call('POST', '/dischargecard', {});
    assert.equal(empty.status, 200, shown(empty));
    assert.deepEqual(withoutReceipt(empty.json), {
      cardId: CARD,
      dischargedCredits: 20,
      dischargedAmount: 10,
    });
    const none = await call('POST', '/dischargecard');
    assert.equal(none.status, 200, shown(none));
    assert.deepEqual(withoutReceipt(none.json), {
      cardId: CARD,
      dischargedCredits: 0,
      dischargedAmount: 0,
    });
  });

  for (const [what, reference] of [
    ['an empty Pos-Reference', ''],
    ['a Pos-Reference of 81 characters', 'r'.repeat(81)],
    ['a Pos-Reference with a tab in it', 'sale\t1'],
  ] as const) {
    for (const path of ['/writecard', '/dischargecard']) {
      test(`when ${path} has ${what}, then 400 InvalidReference and nothing moves`, () =>
        refused(
          () =>
            call('POST', path, path === '/writecard' ? { credits: 1 } : undefined, {
              'Pos-Reference': reference,
            }),
          'InvalidReference',
          `Pos-Reference: must be 1 to 80 printable ASCII characters without a space at either end (got ${reference.length} characters)`,
        ));
    }
  }

  test('when a card at 0 is paid out, then its receipt says nothing moved: movementId and occurredAt null, the reference kept', async () => {
    const none = await call('POST', '/dischargecard', undefined, { 'Pos-Reference': 'sale 0' });
    assert.equal(none.status, 200, shown(none));
    assert.deepEqual(none.json, {
      cardId: CARD,
      dischargedCredits: 0,
      dischargedAmount: 0,
      movementId: null,
      occurredAt: null,
      reference: 'sale 0',
    });
  });

  test('when requests were refused, then each refusal is one info line with its detail', () => {
    assert.ok(
      log.lines.includes(
        'info POST /dischargecard -> 400 InvalidBody: "credits": not a field here; it takes no body (it pays out the whole balance)',
      ),
      log.lines.join('\n'),
    );
    assert.ok(
      log.lines.includes(
        'info POST /writecard -> 400 Invalid credits or amount value: amount: at most 2 decimals (got 0.30000000000000004)',
      ),
      log.lines.join('\n'),
    );
  });
});
