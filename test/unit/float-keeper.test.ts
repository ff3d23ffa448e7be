/**
 * The till float's life at the ledger (service/wallet/float-keeper.ts) over a scripted ledger:
 * when it is online, the shop it learns, the top-up below the low-water mark or short of ids,
 * a top-up not answered asked again, the close once every sale is reported, a float an operator
 * closed, a lost float held, and the probe of a ledger that does not answer. The book folds
 * what the keeper journals with the journal's own fold (float-entries.ts).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import { floatMovementId } from '../../common/float-ids.ts';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import {
  LedgerRefusal,
  type LedgerCustomer,
  type LedgerFloat,
} from '../../service/cloud/ledger-client.ts';
import { FloatAccount } from '../../service/wallet/float-account.ts';
import {
  emptyFloatFolds,
  foldFloatEntry,
  type FloatEntry,
} from '../../service/wallet/float-entries.ts';
import {
  FLOAT_TIMING,
  FloatKeeper,
  IDS_LOW,
  type FloatLedger,
} from '../../service/wallet/float-keeper.ts';
import type { FloatReporter } from '../../service/wallet/float-reporter.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import { floatSale, PREFIX, SETTINGS, SHOP, START, TILL } from '../support/float-fixtures.ts';
import { ManualClock } from '../support/money-rig.ts';

function bookOf(clock: ManualClock) {
  const folds = emptyFloatFolds();
  const entries: Record<string, unknown>[] = [];
  const logs: { level: string; text: string }[] = [];
  const keys: Record<string, string> = { 'fp-1': 'key-1' };
  const movements = new Map<string, Movement>();
  let ids = 0;
  const book = {
    tillId: TILL,
    clock,
    movements,
    owned: new Map<string, string>(),
    journal: { floats: folds },
    newId: () => `request-${(ids += 1)}`,
    keys: {
      keyFor: (print: string) => keys[print],
      all: () => Object.values(keys),
      fingerprintOf: (key: string) => Object.keys(keys).find((print) => keys[print] === key),
    },
    log: {
      info: (text: string) => logs.push({ level: 'info', text }),
      warn: (text: string) => logs.push({ level: 'warn', text }),
      error: (text: string) => logs.push({ level: 'error', text }),
    },
    append: async (...lines: Record<string, unknown>[]) => {
      for (const line of lines) {
        const entry = { ...line, at: new Date(clock.now()).toISOString() };
        entries.push(line);
        foldFloatEntry(folds, entry as unknown as FloatEntry);
      }
    },
  };
  return { book: book as unknown as MovementBook, folds, entries, logs, keys, movements };
}

/** A reporter whose flush answers as told (true: every sale reported). */
class FakeReporter extends EventEmitter<{ reported: [number] }> {
  flushes = 0;
  answer = true;
  pending = 0;
  async flush(): Promise<boolean> {
    this.flushes += 1;
    return this.answer;
  }
}

function ledgerOf(clock: ManualClock) {
  const calls: string[] = [];
  const ledger = {
    calls,
    lastAnsweredAt: START as number | null,
    reachability: { reachable: true as boolean | null },
    customer: SHOP,
    state: 'open' as 'open' | 'closed',
    tillFloat: undefined as LedgerFloat | undefined,
    grant: (credits: number) => credits,
    down: false,
    answered() {
      if (ledger.down) throw new Error('the ledger is unreachable');
      ledger.lastAnsweredAt = clock.now();
    },
    getCustomer: async () => {
      ledger.answered();
      return ledger.customer;
    },
    openFloat: async (_key: string, request: { requestId: string; ids: number }) => {
      ledger.answered();
      calls.push(`open ${request.requestId} ${request.ids}`);
      return {
        id: 'float-1',
        idPrefix: PREFIX,
        idsIssued: request.ids,
        granted: 200,
        credits: 200,
      } as unknown as LedgerFloat;
    },
    getTillFloat: async () => {
      ledger.answered();
      calls.push('till float');
      if (ledger.tillFloat) return ledger.tillFloat;
      throw new LedgerRefusal(404, ledgerErrorCodes.floatNotFound.code);
    },
    getFloat: async (_key: string, floatId: string) => {
      ledger.answered();
      calls.push(`get ${floatId}`);
      return { id: floatId, state: ledger.state } as unknown as LedgerFloat;
    },
    topUpFloat: async (
      _key: string,
      floatId: string,
      request: { id: string; credits: number; ids: number; tillId: string },
    ) => {
      ledger.answered();
      calls.push(
        `topup ${floatId} ${request.id} ${request.credits} ${request.ids} ${request.tillId}`,
      );
      return {
        topUp: { granted: ledger.grant(request.credits) },
        float: { idsIssued: 100 + request.ids },
      } as unknown as Awaited<ReturnType<FloatLedger['topUpFloat']>>;
    },
    closeFloat: async (_key: string, floatId: string, request: { tillId: string }) => {
      ledger.answered();
      calls.push(`close ${floatId} ${request.tillId}`);
      return {} as Awaited<ReturnType<FloatLedger['closeFloat']>>;
    },
  };
  return ledger;
}

function keeperOf(options: { timing?: Partial<typeof FLOAT_TIMING> } = {}) {
  const clock = new ManualClock();
  clock.time = START;
  const made = bookOf(clock);
  const ledger = ledgerOf(clock);
  const reporter = new FakeReporter();
  const account = new FloatAccount(made.book);
  const keeper = new FloatKeeper(made.book, account, reporter as unknown as FloatReporter, {
    ledger: ledger as unknown as FloatLedger,
    ...(options.timing ? { timing: options.timing } : {}),
  });
  return { ...made, clock, ledger, reporter, account, keeper };
}

/** A rig with float-1 open (200 credits, ids 1..100), this till's journal knowing it. */
async function withFloat(options: Parameters<typeof keeperOf>[0] = {}) {
  const rig = keeperOf(options);
  await rig.keeper.sync();
  assert.equal(rig.folds.float?.floatId, 'float-1');
  rig.ledger.calls.length = 0;
  rig.entries.length = 0;
  rig.logs.length = 0;
  return rig;
}

const ofType = (entries: Record<string, unknown>[], type: string) =>
  entries.filter((entry) => entry.type === type);

describe('FloatKeeper: online or not', () => {
  test('when the last answer is exactly offlineAfterMs old, then the till is online; a millisecond later, or unreachable, or never answered, it is not', () => {
    const rig = keeperOf();
    rig.clock.time = START + FLOAT_TIMING.offlineAfterMs;
    assert.equal(rig.keeper.online, true);
    rig.clock.time += 1;
    assert.equal(rig.keeper.online, false);
    rig.clock.time = START;
    rig.ledger.reachability.reachable = null;
    assert.equal(rig.keeper.online, false);
    rig.ledger.reachability.reachable = true;
    rig.ledger.lastAnsweredAt = null;
    assert.equal(rig.keeper.online, false);
  });

  test('when no timing is given, then the documented defaults hold: offline after 2.5 minutes without an answer, probed every 15 s, synced every minute, the answer noted at most every 10 minutes', async () => {
    const rig = keeperOf();
    rig.clock.time = START + 150_000;
    assert.equal(rig.keeper.online, true);
    rig.clock.time += 1;
    assert.equal(rig.keeper.online, false);
    assert.deepEqual(FLOAT_TIMING, {
      syncEveryMs: 60_000,
      probeEveryMs: 15_000,
      offlineAfterMs: 150_000,
      notedEveryMs: 600_000,
    });
  });

  test('when the journal noted a later answer than the client knows (a restart), then that is when the ledger last answered; neither known, undefined', async () => {
    const rig = keeperOf();
    rig.ledger.lastAnsweredAt = null;
    assert.equal(rig.keeper.lastAnsweredAt, undefined);
    rig.clock.time = START + 5000;
    await rig.book.append({ type: 'ledger-seen' });
    assert.equal(rig.keeper.lastAnsweredAt, START + 5000);
    rig.ledger.lastAnsweredAt = START + 1000;
    assert.equal(rig.keeper.lastAnsweredAt, START + 5000);
    rig.ledger.lastAnsweredAt = START + 9000;
    assert.equal(rig.keeper.lastAnsweredAt, START + 9000);
  });
});

describe('FloatKeeper: the shop it learns', () => {
  test('when the shop resolves as last learnt, then nothing is journaled; when its id, credit cost, float or card rules change, then it is journaled again', async () => {
    const rig = keeperOf();
    await rig.keeper.learnShop('key-1', SHOP);
    assert.equal(ofType(rig.entries, 'shop').length, 1);
    assert.deepEqual(rig.keeper.shopOf('fp-1')?.customer, {
      customerId: 'shop-1',
      name: 'A',
      credits: 1000,
      creditCost: '0.50',
      float: SETTINGS,
    });
    // The pool's credits change with every sale: not a change of what the till works from.
    await rig.keeper.learnShop('key-1', { ...SHOP, credits: 900 });
    assert.equal(ofType(rig.entries, 'shop').length, 1);
    const changes: Partial<LedgerCustomer>[] = [
      { customerId: 'shop-2' },
      { creditCost: '0.45' },
      { float: { ...SETTINGS, offlineCap: 10 } },
      { cards: { blocked: [] } as unknown as LedgerCustomer['cards'] },
    ];
    for (const change of changes) {
      const before = ofType(rig.entries, 'shop').length;
      await rig.keeper.learnShop('key-1', { ...SHOP, ...change });
      assert.equal(ofType(rig.entries, 'shop').length, before + 1, JSON.stringify(change));
      await rig.keeper.learnShop('key-1', SHOP);
    }
  });

  test('when the float size changes, then the till syncs soon; another change does not hurry it', async () => {
    const rig = keeperOf();
    await rig.keeper.learnShop('key-1', SHOP);
    assert.deepEqual(rig.clock.delays, [0], 'first learnt: a size where none was');
    await rig.keeper.learnShop('key-1', { ...SHOP, creditCost: '0.45' });
    assert.deepEqual(rig.clock.delays, [0]);
    await rig.keeper.learnShop('key-1', { ...SHOP, float: { ...SETTINGS, size: 300 } });
    assert.deepEqual(rig.clock.delays, [0, 0]);
  });

  test('when the ledger answers, then the journal notes it at most once per notedEveryMs', async () => {
    const rig = keeperOf();
    await rig.keeper.learnShop('key-1', SHOP);
    assert.equal(ofType(rig.entries, 'ledger-seen').length, 1);
    rig.clock.time += FLOAT_TIMING.notedEveryMs - 1;
    rig.ledger.lastAnsweredAt = rig.clock.time;
    await rig.keeper.learnShop('key-1', SHOP);
    assert.equal(ofType(rig.entries, 'ledger-seen').length, 1);
    rig.clock.time += 1;
    rig.ledger.lastAnsweredAt = rig.clock.time;
    await rig.keeper.learnShop('key-1', SHOP);
    assert.equal(ofType(rig.entries, 'ledger-seen').length, 2);
  });

  test('when an offline till learns its shop from what it knew (no ledger answer since), then the journal keeps the ledger’s last answer, so a restart does not push the offline limit on', async () => {
    // Seen in the shop simulation (seed 389428875 --floats): every offline sync resolved the
    // shop from the till's cache and noted "the ledger answered" at that moment, so the till
    // sold 541 s after the ledger's last answer with a limit of 432 s.
    const rig = keeperOf();
    await rig.keeper.learnShop('key-1', SHOP);
    rig.ledger.down = true;
    rig.clock.time += 3 * FLOAT_TIMING.notedEveryMs;
    await rig.keeper.learnShop('key-1', SHOP);
    assert.deepEqual(
      ofType(rig.entries, 'ledger-seen').map((entry) => entry.seenAt),
      [new Date(START).toISOString()],
    );
    rig.ledger.lastAnsweredAt = null; // a restart: the client has not heard the ledger yet
    assert.equal(rig.keeper.lastAnsweredAt, START);
  });
});

describe('FloatKeeper: opening and topping up', () => {
  test('when the shop gives its tills a float and this till holds none, then a sync reports first and opens one; without a float size, none', async () => {
    const rig = keeperOf();
    rig.ledger.customer = { ...SHOP, float: { ...SETTINGS, size: 0 } };
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, []);
    assert.equal(rig.reporter.flushes, 1);
    rig.ledger.customer = SHOP;
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['till float', 'open request-1 100']);
    assert.equal(rig.keeper.status().state, 'online');
  });

  test('when sales leave the float below its low-water mark, then it is topped up to its size; at the mark, not', async () => {
    const rig = await withFloat();
    floatSale(rig.movements, 1, 150);
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['get float-1'], 'at the mark: 50 left');
    floatSale(rig.movements, 2, 1);
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, [
      'get float-1',
      'get float-1',
      `topup float-1 request-2 151 0 ${TILL}`,
    ]);
    assert.equal(rig.account.available(rig.folds.float as never), 200);
  });

  test('when the float is used up and its low-water mark is 0, then it is topped up all the same', async () => {
    const rig = await withFloat();
    rig.ledger.customer = { ...SHOP, float: { ...SETTINGS, lowWater: 0 } };
    floatSale(rig.movements, 1, 200);
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls.slice(1), [`topup float-1 request-2 200 0 ${TILL}`]);
  });

  test('when fewer than IDS_LOW ids are left but credits above the mark, then the top-up asks for ids and for no credits beyond the size', async () => {
    const rig = await withFloat();
    for (let seq = 1; seq <= 100 - IDS_LOW + 1; seq += 1) floatSale(rig.movements, seq, 0);
    assert.equal(rig.account.idsLeft(rig.folds.float as never), IDS_LOW - 1);
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls.slice(1), [`topup float-1 request-2 0 100 ${TILL}`]);
    rig.ledger.calls.length = 0;
    // Exactly IDS_LOW left (200 issued, 150 used): nothing to ask.
    for (let seq = 52; seq <= 200 - IDS_LOW; seq += 1) floatSale(rig.movements, seq, 0);
    assert.equal(rig.account.idsLeft(rig.folds.float as never), IDS_LOW);
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['get float-1']);
  });

  test('when the float holds its size or more though below its low-water mark (a mark set above the size), then no top-up is asked', async () => {
    const rig = await withFloat();
    rig.ledger.customer = { ...SHOP, float: { ...SETTINGS, size: 100, lowWater: 250 } };
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['get float-1'], 'below the mark, but nothing to ask');
  });

  test('when a top-up was asked and not answered, then the next sync asks it again with its id before deciding on a new one', async () => {
    const rig = await withFloat();
    floatSale(rig.movements, 1, 180);
    rig.ledger.topUpFloat = async () => {
      throw new Error('the answer was lost');
    };
    await rig.keeper.sync();
    assert.equal(ofType(rig.entries, 'float-topup').length, 1);
    assert.equal(rig.folds.float?.granted, 200);
    const again = ledgerOf(rig.clock);
    rig.ledger.topUpFloat = again.topUpFloat;
    again.lastAnsweredAt = START;
    await rig.keeper.sync();
    assert.deepEqual(again.calls, [`topup float-1 request-2 180 0 ${TILL}`]);
    assert.equal(
      ofType(rig.entries, 'float-topup').length,
      1,
      'no new top-up: it filled the float',
    );
    assert.deepEqual(ofType(rig.entries, 'float-granted'), [
      { type: 'float-granted', floatId: 'float-1', id: 'request-2', granted: 180, idsIssued: 100 },
    ]);
    assert.equal(rig.folds.float?.granted, 380);
  });
});

describe('FloatKeeper: closing', () => {
  test('when the shop stops floats, then the till reports everything, closes its float at the ledger and journals it closed', async () => {
    const rig = await withFloat();
    rig.ledger.customer = { ...SHOP, float: { ...SETTINGS, size: 0 } };
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, [`close float-1 ${TILL}`]);
    assert.deepEqual(
      rig.entries.filter((entry) => String(entry.type).startsWith('float')),
      [
        { type: 'float-closing', floatId: 'float-1' },
        { type: 'float-closed', floatId: 'float-1' },
      ],
    );
    assert.equal(rig.reporter.flushes, 3, 'the open, then the sync and the close each report');
    assert.deepEqual(rig.logs.at(-1), {
      level: 'info',
      text: 'float float-1 closed: what it held went back to the pool',
    });
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, [`close float-1 ${TILL}`], 'closed once');
  });

  test('when a sale cannot be reported yet, or a running request owns one, then the close waits, journaled as closing once', async () => {
    const rig = await withFloat();
    rig.ledger.customer = { ...SHOP, float: { ...SETTINGS, size: 0 } };
    rig.reporter.answer = false;
    await rig.keeper.sync();
    await rig.keeper.sync();
    rig.reporter.answer = true;
    floatSale(rig.movements, 1, 10);
    rig.book.owned.set(floatMovementId(PREFIX, 1), 'fp-1');
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, []);
    assert.equal(ofType(rig.entries, 'float-closing').length, 1);
    assert.equal(rig.keeper.status().floatId, null, 'no sales from a closing float');
    rig.book.owned.clear();
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, [`close float-1 ${TILL}`]);
  });

  test("when the till's key moves to another shop, then its float is closed with the key it was opened with; that key gone, the close waits for it", async () => {
    const rig = await withFloat();
    delete rig.keys['fp-1'];
    rig.keys['fp-2'] = 'key-2';
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, []);
    assert.equal(ofType(rig.entries, 'float-closing').length, 1);
    rig.keys['fp-1'] = 'key-1';
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, [`close float-1 ${TILL}`]);
  });

  test('when an operator closed the float at the ledger, then the till journals it closed, says so, and opens a new one', async () => {
    const rig = await withFloat();
    rig.ledger.state = 'closed';
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['get float-1', 'till float', 'open request-2 100']);
    assert.deepEqual(rig.logs[0], {
      level: 'warn',
      text: 'float float-1 was closed at the ledger (by an operator)',
    });
    assert.equal(ofType(rig.entries, 'float-closed').length, 1);
  });

  test('when the ledger holds a float of this till its journal lost, then nothing is opened until an operator closed it', async () => {
    const rig = keeperOf();
    rig.ledger.tillFloat = { id: 'float-0' } as LedgerFloat;
    await rig.keeper.sync();
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls, ['till float', 'till float']);
    assert.equal(rig.keeper.status().state, 'held');
    rig.ledger.tillFloat = undefined;
    await rig.keeper.sync();
    assert.deepEqual(rig.ledger.calls.slice(2), ['till float', 'till float', 'open request-1 100']);
  });
});

describe('FloatKeeper: a ledger that does not answer', () => {
  test('when a sync fails, then it is logged, the status published, and one probe waits probeEveryMs; close ends it', async () => {
    const rig = await withFloat();
    const statuses: string[] = [];
    rig.keeper.on('status', (status) => statuses.push(status.state));
    rig.ledger.down = true;
    rig.ledger.reachability.reachable = false;
    await rig.keeper.sync();
    assert.deepEqual(rig.logs, [{ level: 'warn', text: 'float: the ledger is unreachable' }]);
    assert.deepEqual(statuses, ['offline']);
    assert.deepEqual(rig.clock.delays.slice(-1), [FLOAT_TIMING.probeEveryMs]);
    const timers = rig.clock.delays.length;
    await rig.keeper.sync();
    assert.equal(rig.clock.delays.length, timers, 'one probe at a time');
    assert.deepEqual(statuses, ['offline'], 'published only when it changed');
    // The probe fires: a sync runs, fails, and sets the next probe (one).
    await rig.clock.advance(FLOAT_TIMING.probeEveryMs);
    assert.equal(
      rig.clock.delays.slice(timers).filter((ms) => ms === FLOAT_TIMING.probeEveryMs).length,
      1,
    );
    await rig.keeper.close();
    assert.equal(rig.clock.pending, 0, 'closed: no probe left to fire (it would hold the process)');
    await rig.keeper.sync();
    assert.equal(rig.clock.pending, 0, 'closed: no new probe');
  });

  test('when a sync is answered, then no probe is set: the next sync comes at the steady pace', async () => {
    const rig = keeperOf();
    await rig.keeper.sync();
    await rig.keeper.sync();
    assert.equal(rig.keeper.online, true);
    assert.deepEqual(rig.clock.delays, [0], 'only the sync the float size asked for');
  });

  test('when the reporter reports, then the status is published if it changed', async () => {
    const rig = await withFloat();
    const toReport: number[] = [];
    rig.keeper.on('status', (status) => toReport.push(status.toReport));
    rig.reporter.pending = 3;
    rig.reporter.emit('reported', 3);
    rig.reporter.emit('reported', 3);
    assert.deepEqual(toReport, [3]);
  });
});
