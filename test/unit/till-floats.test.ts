/**
 * How a recharge is paid when the till holds a float (service/wallet/till-floats.ts, plan):
 * from the float within its bounds, by the ledger while online when the float does not apply,
 * or refused offline with a detail saying which bound; and what goes with it: the ledger's quote
 * of a recharge by amount, evidence of other floats found on cards, reports before the ledger
 * decides on a card, the top-up after a sale, the heartbeat's figures. The book is a plain object
 * folding float lines with the journal's own fold; the ledger is scripted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import type { CardWallet } from '../../service/card/card-face.ts';
import { LedgerRefusal, type LedgerCustomer } from '../../service/cloud/ledger-client.ts';
import { AppError } from '../../service/errors.ts';
import type { AmountQuote } from '../../service/wallet/amount-quote.ts';
import {
  emptyFloatFolds,
  foldFloatEntry,
  type FloatEntry,
} from '../../service/wallet/float-entries.ts';
import { FLOAT_TIMING } from '../../service/wallet/float-keeper.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import type { RechargeRequest } from '../../service/wallet/recharge-request.ts';
import {
  floatReportRefusal,
  TillFloats,
  type FloatPlan,
  type TillFloatsLedger,
} from '../../service/wallet/till-floats.ts';
import { floatSale, PREFIX, SETTINGS, SHOP, START, TILL } from '../support/float-fixtures.ts';
import { ManualClock } from '../support/money-rig.ts';

const TIERED = {
  ...SHOP,
  cards: { bonusTiers: [{ minAmount: '10.00', bonusCredits: 3 }] },
} as unknown as LedgerCustomer;

function rigOf(options: { float?: boolean; idsIssued?: number; granted?: number } = {}) {
  const clock = new ManualClock();
  clock.time = START;
  const folds = emptyFloatFolds();
  const entries: Record<string, unknown>[] = [];
  const movements = new Map<string, Movement>();
  const keys: Record<string, string> = { 'fp-1': 'key-1' };
  const fold = (line: Record<string, unknown>) =>
    foldFloatEntry(folds, {
      ...line,
      at: new Date(clock.now()).toISOString(),
    } as unknown as FloatEntry);
  const book = {
    tillId: TILL,
    clock,
    movements,
    owned: new Map<string, string>(),
    journal: { floats: folds },
    newId: () => 'request-1',
    keys: {
      keyFor: (print: string) => keys[print],
      all: () => Object.values(keys),
      fingerprintOf: (key: string) => Object.keys(keys).find((print) => keys[print] === key),
    },
    log: { info: () => {}, warn: () => {}, error: () => {} },
    append: async (...lines: Record<string, unknown>[]) => {
      for (const line of lines) {
        entries.push(line);
        fold(line);
      }
    },
  } as unknown as MovementBook;
  const reports: string[][] = [];
  const quotes: string[] = [];
  const ledger = {
    lastAnsweredAt: START as number | null,
    reachability: { reachable: true as boolean | null },
    reportAnswers: true,
    reportFloatMovements: async (_key: string, report: { movements: { id: string }[] }) => {
      reports.push(report.movements.map((movement) => movement.id));
      if (!ledger.reportAnswers) throw new Error('the ledger is unreachable');
      return {
        results: report.movements.map((movement) => ({
          id: movement.id,
          outcome: 'recorded',
          state: 'posted',
          flags: [],
        })),
      };
    },
    getBonusQuote: async (_key: string, amount: string) => {
      quotes.push(amount);
      return {
        amount,
        paidCredits: 20,
        bonusCredits: 5,
        rechargeAmount: '10.00',
        creditCost: '0.50',
      };
    },
  };
  const floats = new TillFloats(book, {
    ledger: ledger as unknown as TillFloatsLedger,
    retryMs: 1000,
    maxRetryMs: 8000,
  });
  if (options.float !== false) {
    fold({
      type: 'float',
      floatId: 'float-1',
      requestId: 'r',
      keyFingerprint: 'fp-1',
      prefix: PREFIX,
      idsIssued: options.idsIssued ?? 100,
      granted: options.granted ?? 200,
    });
  }
  const offline = () => {
    ledger.reachability.reachable = false;
  };
  return { clock, folds, entries, movements, keys, book, ledger, floats, reports, quotes, offline };
}

const wallet = (overrides: Partial<CardWallet> = {}): CardWallet => ({
  cardId: '04A1B2C3',
  balance: 0,
  before: 'classic:v1:0',
  carriesFloat: true,
  ...overrides,
});

function plan(
  rig: ReturnType<typeof rigOf>,
  request: RechargeRequest,
  options: {
    customer?: LedgerCustomer;
    wallet?: CardWallet;
    key?: string;
    quote?: AmountQuote;
  } = {},
) {
  return rig.floats.plan({
    keyFingerprint: options.key ?? 'fp-1',
    customer: options.customer ?? SHOP,
    wallet: options.wallet ?? wallet(),
    request,
    ...(options.quote ? { quote: options.quote } : {}),
  });
}

/** The refusal's detail (it must be a refusal, NoCredits). */
function refusal(result: ReturnType<typeof plan>): string {
  assert.ok(result && 'refusal' in result, `not a refusal: ${JSON.stringify(result)}`);
  assert.ok(result.refusal instanceof AppError);
  assert.equal(result.refusal.code, 'NoCredits');
  return result.refusal.detail ?? '';
}

describe('TillFloats.plan: a recharge the float covers', () => {
  test('when the float covers a recharge by credits, then it is paid from it with the next id, at the shop credit cost', () => {
    const rig = rigOf();
    floatSale(rig.movements, 1, 10);
    const result = plan(rig, { credits: 30 }) as FloatPlan;
    assert.equal(result.float.floatId, 'float-1');
    assert.deepEqual(
      { ...result, float: undefined },
      {
        float: undefined,
        id: floatMovementId(PREFIX, 2),
        seq: 2,
        credits: 30,
        amount: '15.00',
        creditCost: '0.50',
        bonusCredits: 0,
      },
    );
  });

  test('when a recharge takes exactly what the float has left, or offline exactly the cap, then it is paid from the float', () => {
    const rig = rigOf();
    floatSale(rig.movements, 1, 170);
    assert.equal((plan(rig, { credits: 30 }) as FloatPlan).credits, 30);
    rig.offline();
    assert.equal((plan(rig, { credits: 30 }) as FloatPlan).credits, 30);
    const roomy = rigOf();
    roomy.offline();
    assert.equal((plan(roomy, { credits: 40 }) as FloatPlan).credits, 40);
  });

  test('when a recharge is by amount, then the quote given decides credits, bonus, amount and cost; without one, the tiers learnt last', () => {
    const rig = rigOf();
    const quote: AmountQuote = {
      amount: '10.50',
      paidCredits: 21,
      bonusCredits: 4,
      credits: 25,
      rechargeAmount: '9.45',
      creditCost: '0.45',
      offline: false,
    };
    const byQuote = plan(rig, { amount: '10.50' }, { customer: TIERED, quote }) as FloatPlan;
    assert.deepEqual(
      [byQuote.credits, byQuote.bonusCredits, byQuote.amount, byQuote.creditCost],
      [25, 4, '9.45', '0.45'],
    );
    const learnt = plan(
      rig,
      { amount: '10.25' },
      { customer: { ...TIERED, creditCost: '0.25' } as LedgerCustomer },
    ) as FloatPlan;
    assert.deepEqual(
      [learnt.credits, learnt.bonusCredits, learnt.amount, learnt.creditCost],
      [44, 3, '10.25', '0.25'],
    );
  });

  test('when the offline cap is null, then an offline recharge is bounded by the float alone', () => {
    const rig = rigOf();
    rig.offline();
    const customer = { ...SHOP, float: { ...SETTINGS, offlineCap: null } } as LedgerCustomer;
    assert.equal((plan(rig, { credits: 150 }, { customer }) as FloatPlan).credits, 150);
  });
});

describe('TillFloats.plan: what the float does not pay', () => {
  const cases: {
    name: string;
    detail: string;
    arrange?: (rig: ReturnType<typeof rigOf>) => void;
    request?: RechargeRequest;
    options?: Parameters<typeof plan>[2];
    rig?: Parameters<typeof rigOf>[0];
  }[] = [
    {
      name: 'the shop gives no float',
      detail: 'offline: this shop gives its tills no float',
      options: { customer: { ...SHOP, float: { ...SETTINGS, size: 0 } } as LedgerCustomer },
    },
    {
      name: 'the shop has no float settings',
      detail: 'offline: this shop gives its tills no float',
      options: { customer: { ...SHOP, float: undefined } as LedgerCustomer },
    },
    {
      name: 'the till holds none',
      detail: 'offline: this till holds no float',
      rig: { float: false },
    },
    {
      name: 'its float is of another key',
      detail: 'offline: this till holds no float',
      options: { key: 'fp-2' },
    },
    {
      name: 'its float awaits an operator',
      detail: "offline: this till's float awaits an operator's close: no float sales until then",
      rig: { float: false },
      arrange: (rig) => {
        rig.folds.lost = { floatId: 'float-0', at: '2026-11-26T09:00:00.000Z' };
      },
    },
    {
      name: 'the card type is not allowed',
      detail: 'offline: desfire cards are not recharged from the float',
      options: {
        customer: { ...SHOP, float: { ...SETTINGS, cardTypes: ['classic'] } } as LedgerCustomer,
        wallet: wallet({ before: 'desfire:v2:0' }),
      },
    },
    {
      name: 'a classic card is not allowed',
      detail: 'offline: classic cards are not recharged from the float',
      options: {
        customer: { ...SHOP, float: { ...SETTINGS, cardTypes: ['desfire'] } } as LedgerCustomer,
      },
    },
    {
      name: 'the card cannot carry the evidence',
      detail:
        'offline: this card cannot carry a float recharge (a DESFire card personalized before v2 records)',
      options: { wallet: wallet({ carriesFloat: undefined }) },
    },
    {
      name: 'the float is used up',
      detail: 'offline: the float is used up: 29 credits left',
      arrange: (rig) => floatSale(rig.movements, 1, 171),
    },
    {
      name: 'its ids are used up',
      detail: 'offline: the float has no movement ids left',
      rig: { idsIssued: 1 },
      arrange: (rig) => floatSale(rig.movements, 1, 1),
    },
  ];
  for (const c of cases) {
    test(`when ${c.name}, then online the ledger pays (no plan), offline it is NoCredits saying so`, () => {
      const rig = rigOf(c.rig);
      c.arrange?.(rig);
      assert.equal(plan(rig, c.request ?? { credits: 30 }, c.options), undefined);
      rig.offline();
      assert.equal(refusal(plan(rig, c.request ?? { credits: 30 }, c.options)), c.detail);
    });
  }

  test('when a desfire card is allowed and carries evidence, then it is paid from the float', () => {
    const rig = rigOf();
    const desfire = wallet({ before: 'desfire:v2:0' });
    const customer = { ...SHOP, float: { ...SETTINGS, cardTypes: ['desfire'] } } as LedgerCustomer;
    assert.equal(
      (plan(rig, { credits: 5 }, { customer, wallet: desfire }) as FloatPlan).credits,
      5,
    );
  });

  test('when offline beyond the cap, then NoCredits saying the cap, and online the same recharge is paid from the float', () => {
    const rig = rigOf();
    assert.equal((plan(rig, { credits: 41 }) as FloatPlan).credits, 41);
    rig.offline();
    assert.equal(
      refusal(plan(rig, { credits: 41 })),
      'offline: at most 40 credits per recharge while the ledger cannot be reached',
    );
  });

  test('when offline the offline limit is reached, then NoCredits saying when it passed; a millisecond before, it sells', () => {
    const rig = rigOf();
    rig.offline();
    rig.clock.time = START + 3600 * 1000 - 1;
    assert.equal((plan(rig, { credits: 5 }) as FloatPlan).credits, 5);
    rig.clock.time += 1;
    assert.equal(
      refusal(plan(rig, { credits: 5 })),
      'offline: the offline time limit passed at 2026-11-26T11:00:00.000Z; sales from the float resume when the ledger answers',
    );
  });

  test('when offline and the ledger never answered this till, then NoCredits: the limit counts from an answer', () => {
    const rig = rigOf();
    rig.offline();
    rig.ledger.lastAnsweredAt = null;
    assert.equal(
      refusal(plan(rig, { credits: 5 })),
      'offline: the offline time limit passed; sales from the float resume when the ledger answers',
    );
  });

  test('when the last answer is older than offlineAfterMs, then the till is offline and the cap applies though the client thinks it reachable', () => {
    const rig = rigOf();
    rig.clock.time = START + FLOAT_TIMING.offlineAfterMs + 1;
    assert.match(refusal(plan(rig, { credits: 41 })), /^offline: at most 40 credits/);
  });
});

describe('TillFloats: around the plan', () => {
  test('when a recharge by amount is asked online of a shop with tiers and a float, then the ledger quotes it; by credits, without tiers, offline or without a float, not', async () => {
    const rig = rigOf();
    const ask = (request: RechargeRequest, customer = TIERED, key = 'fp-1') =>
      rig.floats.ledgerQuote({ keyFingerprint: key, customer, request });
    assert.equal((await ask({ amount: '10.00' }))?.credits, 25);
    assert.deepEqual(rig.quotes, ['10.00']);
    assert.equal(await ask({ credits: 20 }), undefined);
    assert.equal(await ask({ amount: '10.00' }, SHOP), undefined);
    assert.equal(await ask({ amount: '10.00' }, TIERED, 'fp-gone'), undefined);
    rig.offline();
    assert.equal(await ask({ amount: '10.00' }), undefined);
    const none = rigOf({ float: false });
    assert.equal(
      await none.floats.ledgerQuote({
        keyFingerprint: 'fp-1',
        customer: TIERED,
        request: { amount: '10.00' },
      }),
      undefined,
    );
    assert.deepEqual(rig.quotes, ['10.00']);
  });

  test('when the ledger client cannot quote (an older one), then no quote is asked: the tiers learnt last decide', async () => {
    const rig = rigOf();
    delete (rig.ledger as { getBonusQuote?: unknown }).getBonusQuote;
    const quote = await rig.floats.ledgerQuote({
      keyFingerprint: 'fp-1',
      customer: TIERED,
      request: { amount: '10.00' },
    });
    assert.equal(quote, undefined);
  });

  test('when started, then a report and a sync are due at once; closed, neither is left waiting', async () => {
    const rig = rigOf();
    rig.floats.start();
    assert.deepEqual(rig.clock.delays, [0, 0]);
    assert.equal(rig.clock.pending, 2);
    await rig.floats.close();
    assert.equal(rig.clock.pending, 0);
  });

  test("when the keeper's status changes, then the float passes it on, the same as status() answers", async () => {
    const rig = rigOf();
    const told: unknown[] = [];
    rig.floats.on('status', (status) => told.push(status));
    // A sync whose shop cannot be learnt (this scripted ledger resolves none) publishes the status.
    await rig.floats.keeper.sync();
    assert.equal(told.length, 1);
    assert.deepEqual(told[0], rig.floats.status());
    assert.equal(rig.floats.status().floatId, 'float-1');
  });

  test('when a card shows float recharges, then only valid ids this till neither made nor found yet are journaled as found, once, and a report is started', async () => {
    const rig = rigOf();
    floatSale(rig.movements, 1, 10);
    const other = floatMovementId('0f0f0f0f0f0f', 7);
    const card = wallet({
      floatEvidence: [
        { movementId: floatMovementId(PREFIX, 1), credits: 10 },
        { movementId: other, credits: 7 },
        { movementId: 'not-a-float-id', credits: 9 },
      ],
    });
    await rig.floats.noteEvidence(card);
    await rig.floats.noteEvidence(card);
    assert.deepEqual(rig.entries, [
      { type: 'found', movementId: other, cardId: '04A1B2C3', credits: 7 },
    ]);
    assert.deepEqual(rig.clock.delays, [0], 'a report started');
    const plain = rigOf();
    await plain.floats.noteEvidence(wallet({ floatEvidence: [] }));
    await plain.floats.noteEvidence(wallet());
    assert.deepEqual(plain.clock.delays, [], 'no evidence: no report started');
  });

  test('when the reports before a ledger decision do not land, then it is LedgerUnavailable saying so; when they do, it goes on', async () => {
    const rig = rigOf();
    floatSale(rig.movements, 1, 10);
    rig.ledger.reportAnswers = false;
    await assert.rejects(rig.floats.reportBeforeLedger(), (error: AppError) => {
      assert.equal(error.code, 'LedgerUnavailable');
      assert.equal(
        error.detail,
        'the float recharges on this card could not be reported to the ledger first',
      );
      return true;
    });
    rig.ledger.reportAnswers = true;
    await rig.floats.reportBeforeLedger();
    assert.deepEqual(rig.reports, [[floatMovementId(PREFIX, 1)], [floatMovementId(PREFIX, 1)]]);
  });

  test('when a sale leaves the float below its low-water mark or short of ids, then a sync is asked soon; otherwise only the report', () => {
    /** Timers a sale sets: the report's kick, and the keeper's sync when low. */
    const timers = (
      arrange: (rig: ReturnType<typeof rigOf>) => void,
      options: Parameters<typeof rigOf>[0] = {},
      customer = SHOP,
    ) => {
      const rig = rigOf(options);
      arrange(rig);
      rig.floats.sold(customer);
      return rig.clock.delays;
    };
    assert.deepEqual(
      timers((rig) => floatSale(rig.movements, 1, 150)),
      [0],
      'at the mark',
    );
    assert.deepEqual(
      timers((rig) => floatSale(rig.movements, 1, 151)),
      [0, 0],
      'below it',
    );
    const noMark = { ...SHOP, float: undefined } as unknown as LedgerCustomer;
    assert.deepEqual(
      timers((rig) => floatSale(rig.movements, 1, 199), {}, noMark),
      [0],
      'no mark learnt',
    );
    assert.deepEqual(
      timers(() => {}, { idsIssued: 50 }),
      [0],
      'exactly IDS_LOW ids left',
    );
    assert.deepEqual(
      timers((rig) => floatSale(rig.movements, 1, 0), { idsIssued: 50 }),
      [0, 0],
      'fewer',
    );
    assert.deepEqual(
      timers(() => {}, { float: false }),
      [0, 0],
      'no float',
    );
  });

  test("when the heartbeat asks, then it gets what is left and this till's own unreported sales; no float, null", async () => {
    const rig = rigOf();
    floatSale(rig.movements, 1, 10);
    floatSale(rig.movements, 2, 15);
    rig.offline();
    rig.clock.time = START + FLOAT_TIMING.offlineAfterMs + 1;
    await rig.book.append({
      type: 'shop',
      keyFingerprint: 'fp-1',
      customer: SHOP,
    });
    assert.deepEqual(rig.floats.heartbeatReport(), {
      credits: 175,
      unreportedMovements: 2,
      unreportedCredits: 25,
      offlineSince: '2026-11-26T10:00:00.000Z',
    });
    assert.equal(rigOf({ float: false }).floats.heartbeatReport(), null);
  });

  test('when the shop learnt for a key gives a float, then offline customer resolution answers it; no float, a zero size or an unknown key, not', async () => {
    const rig = rigOf();
    assert.equal(rig.floats.learntShop('key-1'), undefined);
    const learn = (customer: LedgerCustomer) =>
      rig.book.append({ type: 'shop', keyFingerprint: 'fp-1', customer });
    await learn({ ...SHOP, float: undefined } as unknown as LedgerCustomer);
    assert.equal(rig.floats.learntShop('key-1'), undefined);
    await learn({ ...SHOP, float: { ...SETTINGS, size: 0 } } as LedgerCustomer);
    assert.equal(rig.floats.learntShop('key-1'), undefined);
    await learn(SHOP);
    assert.equal(rig.floats.learntShop('key-1')?.customerId, 'shop-1');
  });

  test("when the ledger holds a card back for another till's unreported float recharge, then it is FloatRechargeUnreported with its detail; other failures are not", () => {
    const held = floatReportRefusal(
      new LedgerRefusal(409, ledgerErrorCodes.floatReportPending.code, 'till B has not reported'),
    );
    assert.equal(held?.code, 'FloatRechargeUnreported');
    assert.match(held?.detail ?? '', /till B has not reported/);
    assert.equal(
      floatReportRefusal(new LedgerRefusal(409, ledgerErrorCodes.floatOpen.code)),
      undefined,
    );
    assert.equal(
      floatReportRefusal(new Error(ledgerErrorCodes.floatReportPending.code)),
      undefined,
    );
  });
});
