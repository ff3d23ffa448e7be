/**
 * Reporting the till's float recharges (service/wallet/float-reporter.ts) over a scripted
 * ledger: what each report says of a movement, batches of REPORT_BATCH in journal order per key,
 * each answer journaled as the ledger gave it, what the ledger did not answer sent again, found
 * recharges reported once, and a movement of a key no longer held kept until the key is back.
 * The book is a plain object that folds what the reporter journals as the journal would.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FloatMovementReport, FloatReportResult } from '../../common/ledger-contract.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import { FloatAccount } from '../../service/wallet/float-account.ts';
import { FloatReporter, REPORT_BATCH } from '../../service/wallet/float-reporter.ts';
import type { Movement } from '../../service/wallet/journal-entries.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import { PREFIX, TILL } from '../support/float-fixtures.ts';
import { ManualClock } from '../support/money-rig.ts';

const id = (seq: number) => floatMovementId(PREFIX, seq);

/** A float sale as the journal folds it: written (default), not written, or undecided. */
function sale(
  seq: number,
  credits: number,
  how: 'written' | 'not-written' | 'undecided' = 'written',
  extra: Partial<Movement> = {},
): Movement {
  return {
    id: id(seq),
    kind: 'recharge',
    cardId: '04A1B2C3',
    keyFingerprint: 'fp-1',
    startedAt: '2026-11-26T10:00:00.000Z',
    float: { floatId: 'float-1', seq, credits, creditCost: '0.50', cardBefore: 'classic:v1:blank' },
    reserved: { credits },
    ...(how === 'written' ? { card: 'committed', cardAt: '2026-11-26T10:00:01.000Z' } : {}),
    ...(how === 'not-written' ? { card: 'not-written' } : {}),
    ...extra,
  } as unknown as Movement;
}

type Found = { cardId: string; credits: number; at: string; reportedAt?: string };

function bookOf(
  movements: Movement[],
  options: { keys?: Record<string, string>; found?: [string, Found][] } = {},
) {
  const entries: Record<string, unknown>[] = [];
  const logs: { level: string; text: string }[] = [];
  const keys = options.keys ?? { 'fp-1': 'key-1' };
  const found = new Map(options.found ?? []);
  const byId = new Map(movements.map((movement) => [movement.id, movement]));
  const book = {
    tillId: TILL,
    clock: new ManualClock(),
    movements: byId,
    owned: new Map(),
    journal: { floats: { found } },
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
    append: async (entry: Record<string, unknown>) => {
      entries.push(entry);
      const movement = byId.get(entry.id as string) as Record<string, unknown> | undefined;
      if (entry.type === 'resolved' && movement) movement.resolved = entry.state;
      if (entry.type === 'reported' && movement) movement.reportedUndecided = true;
      if (entry.type === 'found-reported') {
        const seen = found.get(entry.movementId as string);
        if (seen) seen.reportedAt = '2026-11-26T11:00:00.000Z';
      }
    },
  };
  return { book: book as unknown as MovementBook, entries, logs, keys, movements: byId };
}

type Answer = (movements: FloatMovementReport[]) => Partial<FloatReportResult>[] | Error;

/** A ledger answering each report as `answer` says (default: every movement recorded, posted). */
function ledgerOf(answer: Answer = (movements) => movements.map(() => ({}))) {
  const reports: { apiKey: string; tillId: string; movements: FloatMovementReport[] }[] = [];
  return {
    reports,
    reportFloatMovements: async (
      apiKey: string,
      report: { tillId: string; movements: FloatMovementReport[] },
    ) => {
      reports.push({ apiKey, ...report });
      const results = answer(report.movements);
      if (results instanceof Error) throw results;
      return {
        results: results.map((result, at) => ({
          id: report.movements[at]?.id as string,
          outcome: 'recorded' as const,
          state: 'posted' as const,
          flags: [],
          ...result,
        })),
      };
    },
  };
}

function reporterOf(
  made: ReturnType<typeof bookOf>,
  ledger: ReturnType<typeof ledgerOf>,
  compensate?: (movement: Movement, state: 'voided') => Promise<void>,
) {
  return new FloatReporter(made.book, new FloatAccount(made.book), {
    ledger,
    retryMs: 1000,
    maxRetryMs: 8000,
    ...(compensate ? { compensate } : {}),
  });
}

describe('FloatReporter', () => {
  test('when sales are written, not written or undecided, then each report says so, with its cost, its card before, its time when written, its bonus and POS reference only when it has them', async () => {
    const made = bookOf([
      sale(1, 10, 'written', { reference: 'receipt-1' } as Partial<Movement>),
      sale(2, 20, 'not-written'),
      sale(3, 30, 'undecided'),
      sale(4, 40, 'written', {
        float: {
          floatId: 'float-1',
          seq: 4,
          credits: 40,
          creditCost: '0.45',
          cardBefore: 'classic:v1:x',
          bonusCredits: 4,
        },
        cardAt: undefined,
      } as unknown as Partial<Movement>),
    ]);
    const ledger = ledgerOf((movements) =>
      movements.map((movement) => ({
        state:
          movement.card === 'written'
            ? 'posted'
            : movement.card === 'not-written'
              ? 'voided'
              : 'pending',
      })),
    );
    assert.equal(await reporterOf(made, ledger).flush(), true);
    assert.equal(ledger.reports.length, 1);
    assert.equal(ledger.reports[0]?.apiKey, 'key-1');
    assert.equal(ledger.reports[0]?.tillId, TILL);
    assert.deepEqual(ledger.reports[0]?.movements, [
      {
        id: id(1),
        cardId: '04A1B2C3',
        credits: 10,
        card: 'written',
        creditCost: '0.50',
        occurredAt: '2026-11-26T10:00:01.000Z',
        cardBefore: 'classic:v1:blank',
        reference: 'receipt-1',
      },
      {
        id: id(2),
        cardId: '04A1B2C3',
        credits: 20,
        card: 'not-written',
        creditCost: '0.50',
        cardBefore: 'classic:v1:blank',
      },
      {
        id: id(3),
        cardId: '04A1B2C3',
        credits: 30,
        card: 'undecided',
        creditCost: '0.50',
        cardBefore: 'classic:v1:blank',
      },
      {
        id: id(4),
        cardId: '04A1B2C3',
        credits: 40,
        card: 'written',
        creditCost: '0.45',
        // No card time journaled (a crash before it): the sale's start stands for it.
        occurredAt: '2026-11-26T10:00:00.000Z',
        cardBefore: 'classic:v1:x',
        bonusCredits: 4,
      },
    ]);
    assert.deepEqual(
      made.entries.map((entry) => [entry.type, entry.id, entry.state]),
      [
        ['resolved', id(1), 'posted'],
        ['resolved', id(2), 'voided'],
        ['reported', id(3), undefined],
        ['resolved', id(4), 'posted'],
      ],
    );
  });

  test('when the ledger answers a movement pending that the till knows written, then nothing is journaled for it and it is reported again', async () => {
    const made = bookOf([sale(1, 10, 'written')]);
    let state: 'pending' | 'posted' = 'pending';
    const ledger = ledgerOf((movements) => movements.map(() => ({ state })));
    const reporter = reporterOf(made, ledger);
    assert.equal(await reporter.flush(), true);
    assert.deepEqual(made.entries, []);
    assert.equal(reporter.pending, 1);
    state = 'posted';
    await reporter.flush();
    assert.deepEqual(made.entries, [{ type: 'resolved', id: id(1), state: 'posted' }]);
    assert.equal(reporter.pending, 0);
  });

  test('when more sales wait than one report takes, then they go in batches of REPORT_BATCH in journal order, and a batch not answered stops the rest until the next flush', async () => {
    const count = REPORT_BATCH * 2 + 1;
    const made = bookOf(Array.from({ length: count }, (_, at) => sale(at + 1, 1)));
    let fail = 2;
    const ledger = ledgerOf((movements) => {
      fail -= 1;
      return fail === 0 ? new Error('connection reset') : movements.map(() => ({}));
    });
    const reporter = reporterOf(made, ledger);
    assert.equal(await reporter.flush(), false);
    assert.deepEqual(
      ledger.reports.map((report) => report.movements.length),
      [REPORT_BATCH, REPORT_BATCH],
    );
    assert.equal(ledger.reports[1]?.movements[0]?.id, id(REPORT_BATCH + 1));
    assert.equal(reporter.pending, REPORT_BATCH + 1);
    assert.match(
      made.logs.at(-1)?.text ?? '',
      /^float report of 100 movement\(s\): the ledger did not take it \(connection reset\); sent again later$/,
    );
    assert.equal(await reporter.flush(), true);
    assert.deepEqual(
      ledger.reports.slice(2).map((report) => report.movements.map((m) => m.id)),
      [Array.from({ length: REPORT_BATCH }, (_, at) => id(REPORT_BATCH + 1 + at)), [id(count)]],
    );
    assert.equal(reporter.pending, 0);
  });

  test('when exactly REPORT_BATCH sales wait, then they go in one report and no empty one follows', async () => {
    const made = bookOf(Array.from({ length: REPORT_BATCH }, (_, at) => sale(at + 1, 1)));
    const ledger = ledgerOf((movements) =>
      movements.length === 0
        ? new Error('400 InvalidReport: movements')
        : movements.map(() => ({})),
    );
    const reporter = reporterOf(made, ledger);
    assert.equal(await reporter.flush(), true, made.logs.map((log) => log.text).join('\n'));
    assert.deepEqual(
      ledger.reports.map((report) => report.movements.length),
      [REPORT_BATCH],
    );
    assert.equal(reporter.pending, 0);
  });

  test("when the ledger answers an id in other letters' case, or leaves one out, then the one answered is journaled and the other reported again", async () => {
    const made = bookOf([sale(1, 10), sale(2, 20)]);
    let leaveOut = true;
    const ledger = ledgerOf((movements) =>
      movements.map(() => ({})).slice(0, leaveOut ? 1 : undefined),
    );
    const upper = {
      reports: ledger.reports,
      reportFloatMovements: async (
        apiKey: string,
        report: { tillId: string; movements: FloatMovementReport[] },
      ) => {
        const answer = await ledger.reportFloatMovements(apiKey, report);
        return {
          results: answer.results.map((result) => ({ ...result, id: result.id.toUpperCase() })),
        };
      },
    };
    const reporter = reporterOf(made, upper as unknown as ReturnType<typeof ledgerOf>);
    await reporter.flush();
    assert.deepEqual(made.entries, [{ type: 'resolved', id: id(1), state: 'posted' }]);
    assert.equal(reporter.pending, 1);
    leaveOut = false;
    await reporter.flush();
    assert.deepEqual(
      ledger.reports.map((report) => report.movements.map((m) => m.id)),
      [[id(1), id(2)], [id(2)]],
    );
    assert.equal(reporter.pending, 0);
  });

  test('when the ledger records a movement with flags, then the till logs them and journals it as the ledger holds it', async () => {
    const made = bookOf([sale(1, 10), sale(2, 20, 'not-written')]);
    const ledger = ledgerOf(() => [
      { outcome: 'known', state: 'posted', flags: ['key-revoked', 'card-blocked'] },
      { outcome: 'recorded', state: 'voided', flags: [] },
    ]);
    await reporterOf(made, ledger).flush();
    assert.deepEqual(made.logs, [
      { level: 'warn', text: `float recharge ${id(1)}: recorded with key-revoked, card-blocked` },
    ]);
    assert.deepEqual(made.entries, [
      { type: 'resolved', id: id(1), state: 'posted' },
      { type: 'resolved', id: id(2), state: 'voided' },
    ]);
  });

  test('when the ledger answers an undecided sale posted or voided (another till found it on the card, an operator decided it), then it is journaled learnt from the ledger before it is resolved, for its card to decide when seen', async () => {
    // Seen in the shop simulation (seed 389428887 --floats): resolved without a card line, the
    // sale was done for the till; its Idempotency-Key, sent again with the card back, found
    // nothing to decide and no answer to replay, and sold a second time.
    const made = bookOf([sale(1, 10, 'undecided'), sale(2, 20, 'undecided')]);
    const ledger = ledgerOf(() => [
      { outcome: 'known', state: 'posted', flags: ['cost-estimated'] },
      { outcome: 'known', state: 'voided', flags: [] },
    ]);
    await reporterOf(made, ledger).flush();
    assert.deepEqual(made.entries, [
      { type: 'card', id: id(1), outcome: 'committed', learnt: true },
      { type: 'resolved', id: id(1), state: 'posted' },
      { type: 'card', id: id(2), outcome: 'not-written', learnt: true },
      { type: 'resolved', id: id(2), state: 'voided' },
    ]);
  });

  test('when the ledger refuses a written sale it holds voided (an operator voided it without the card), then a compensation is journaled before it is resolved voided', async () => {
    const made = bookOf([sale(1, 10)]);
    const ledger = ledgerOf(() => [{ outcome: 'refused', state: 'voided', flags: ['conflict'] }]);
    const compensated: string[] = [];
    await reporterOf(made, ledger, async (movement, state) => {
      compensated.push(`${movement.id} ${state} after ${made.entries.length} entries`);
    }).flush();
    assert.deepEqual(compensated, [`${id(1)} voided after 0 entries`]);
    assert.deepEqual(made.entries, [{ type: 'resolved', id: id(1), state: 'voided' }]);
  });

  test('when the ledger refuses a sale otherwise, then it is a conflict for an operator, logged with its flags and detail, and resolved as the ledger holds it (absent when it holds none)', async () => {
    const made = bookOf([
      sale(1, 10, 'not-written'),
      sale(2, 20),
      sale(3, 30),
      sale(4, 40, 'undecided'),
    ]);
    const ledger = ledgerOf(() => [
      {
        outcome: 'refused',
        state: 'voided',
        flags: ['conflict'],
        detail: 'the card account says no',
      },
      { outcome: 'refused', state: 'posted', flags: ['forged-id', 'other-shop'] },
      { outcome: 'refused', state: 'pending', flags: [] },
      { outcome: 'refused', state: undefined, flags: [] },
    ]);
    const compensated: string[] = [];
    await reporterOf(made, ledger, async (movement) => {
      compensated.push(movement.id);
    }).flush();
    assert.deepEqual(compensated, [], 'only a written sale the ledger voided is compensated');
    assert.deepEqual(made.entries, [
      { type: 'conflict', id: id(1), detail: 'conflict' },
      { type: 'resolved', id: id(1), state: 'voided' },
      { type: 'conflict', id: id(2), detail: 'forged-id, other-shop' },
      { type: 'resolved', id: id(2), state: 'posted' },
      { type: 'conflict', id: id(3), detail: 'refused' },
      { type: 'resolved', id: id(3), state: 'absent' },
      { type: 'conflict', id: id(4), detail: 'refused' },
      { type: 'resolved', id: id(4), state: 'absent' },
    ]);
    assert.deepEqual(
      made.logs.filter((log) => log.level === 'error').map((log) => log.text),
      [
        `float recharge ${id(1)}: refused (conflict): the card account says no`,
        `float recharge ${id(2)}: refused (forged-id, other-shop): `,
        `float recharge ${id(3)}: refused (): `,
        `float recharge ${id(4)}: refused (): `,
      ],
    );
  });

  test('when recharges of other floats were found on cards, then each is reported once as found and written, with the current key, a refusal only logged', async () => {
    const at = '2026-11-26T10:30:00.000Z';
    const made = bookOf([], {
      found: [
        ['f-1', { cardId: '04AA', credits: 7, at }],
        ['f-2', { cardId: '04BB', credits: 8, at, reportedAt: at }],
        ['f-3', { cardId: '04CC', credits: 9, at }],
      ],
    });
    const ledger = ledgerOf((movements) =>
      movements.map((movement) =>
        movement.id === 'f-3'
          ? { outcome: 'refused', flags: ['forged-id'], detail: 'never handed out' }
          : {},
      ),
    );
    const reporter = reporterOf(made, ledger);
    assert.equal(reporter.pending, 2);
    await reporter.flush();
    assert.deepEqual(ledger.reports[0]?.movements, [
      { id: 'f-1', cardId: '04AA', credits: 7, card: 'written', found: true },
      { id: 'f-3', cardId: '04CC', credits: 9, card: 'written', found: true },
    ]);
    assert.equal(ledger.reports[0]?.apiKey, 'key-1');
    assert.deepEqual(made.entries, [
      { type: 'found-reported', movementId: 'f-1' },
      { type: 'found-reported', movementId: 'f-3' },
    ]);
    assert.deepEqual(made.logs, [
      { level: 'warn', text: 'found float recharge f-3: forged-id (never handed out)' },
    ]);
    assert.equal(reporter.pending, 0);
    await reporter.flush();
    assert.equal(ledger.reports.length, 1, 'nothing left to report');
  });

  test('when the ledger refuses a found recharge with several flags and no detail, then the log names each flag and an empty detail', async () => {
    const at = '2026-11-26T10:30:00.000Z';
    const made = bookOf([], { found: [['f-1', { cardId: '04AA', credits: 7, at }]] });
    const ledger = ledgerOf(() => [{ outcome: 'refused', flags: ['forged-id', 'other-shop'] }]);
    await reporterOf(made, ledger).flush();
    assert.deepEqual(made.logs, [
      { level: 'warn', text: 'found float recharge f-1: forged-id, other-shop ()' },
    ]);
    assert.deepEqual(made.entries, [{ type: 'found-reported', movementId: 'f-1' }]);
  });

  test('when sales were made with a key no longer held, then they wait, the operator told, while the rest is reported with its own key', async () => {
    const made = bookOf([
      sale(1, 10, 'written', { keyFingerprint: 'fp-old' } as Partial<Movement>),
      sale(2, 20),
    ]);
    const ledger = ledgerOf();
    const reporter = reporterOf(made, ledger);
    assert.equal(await reporter.flush(), false);
    assert.deepEqual(
      ledger.reports.map((report) => [report.apiKey, report.movements.map((m) => m.id)]),
      [['key-1', [id(2)]]],
    );
    assert.deepEqual(made.logs, [
      {
        level: 'error',
        text: 'float report: 1 movement(s) were made with a key no longer held (fingerprint fp-old); set it again to report them',
      },
    ]);
    assert.equal(reporter.pending, 1);
    made.keys['fp-old'] = 'key-old';
    assert.equal(await reporter.flush(), true);
    assert.deepEqual(ledger.reports.at(-1)?.apiKey, 'key-old');
    assert.equal(reporter.pending, 0);
  });

  test('when a flush is asked during one, then the running one goes round again and reports what was sold meanwhile; both callers learn its outcome', async () => {
    const movements = [sale(1, 10)];
    const made = bookOf(movements);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let sent = 0;
    const ledger = ledgerOf();
    const gated = {
      reports: ledger.reports,
      reportFloatMovements: async (
        apiKey: string,
        report: { tillId: string; movements: FloatMovementReport[] },
      ) => {
        sent += 1;
        await gate;
        return ledger.reportFloatMovements(apiKey, report);
      },
    };
    const reporter = reporterOf(made, gated as unknown as ReturnType<typeof ledgerOf>);
    const counts: number[] = [];
    reporter.on('reported', (pending) => counts.push(pending));
    const first = reporter.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const second = sale(2, 20);
    made.movements.set(second.id, second);
    const again = reporter.flush();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sent, 1, 'one report on its way at a time');
    release();
    assert.deepEqual(await Promise.all([first, again]), [true, true]);
    assert.deepEqual(
      ledger.reports.map((report) => report.movements.map((m) => m.id)),
      [[id(1)], [id(2)]],
    );
    assert.deepEqual(counts, [0], 'one flush, told once, nothing left');
    // Done: a flush now is a new one.
    made.movements.set(id(3), sale(3, 30));
    assert.equal(await reporter.flush(), true);
    assert.equal(ledger.reports.length, 3);
  });
});
