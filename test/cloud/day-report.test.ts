import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { addCustomer } from '../../cloud/admin.ts';
import { checkLedger } from '../../cloud/check.ts';
import { importCards } from '../../cloud/card-accounts.ts';
import type { Database } from '../../cloud/db/database.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { Cards } from '../../cloud/cards/cards.ts';
import { setCardRules } from '../../cloud/cards/card-rules.ts';
import { dayReport } from '../../cloud/reports/day-report.ts';
import { dayReportCsv } from '../../cloud/reports/report-csv.ts';
import { takingsByDay } from '../../cloud/reports/takings-chart.ts';
import { readShop, setTimeZone, shopToday } from '../../cloud/shops/shops.ts';
import { recordHeartbeat, renameTill } from '../../cloud/tills/tills.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

// The day report counts posted movements by when their card write was proven at the till
// (occurredAt), in the shop's local day: a day when summer time begins has 23 hours, one when
// it ends 25, and a movement a millisecond either side of local midnight lands in its own day.

const FRONT = '11111111-1111-4111-8111-111111111111';
const BACK = '22222222-2222-4222-8222-222222222222';
const BY = { actor: { kind: 'cli' as const, user: 'test' }, reason: 'test' };

let folder: string;
let db: Database;
let ledger: Ledger;
let shopId: string;

before(async () => {
  folder = await freshPgliteFolder();
  db = await openDatabase(folder);
  ledger = new Ledger(db);
  const shop = await addCustomer(db, {
    name: 'Laverie du Parc',
    credits: 100_000,
    creditCost: 5000n,
  });
  shopId = shop.customerId;
  await setTimeZone(db, shopId, 'Europe/Brussels', BY);
});

after(async () => {
  await db?.close();
  rmSync(folder, { recursive: true, force: true });
});

let card = 0;
/** A posted movement at `till`, its card write proven at `occurredAt` by the till's clock. */
async function posted(
  kind: 'recharge' | 'discharge',
  credits: number,
  occurredAt: string,
  till = FRONT,
  compensates?: { id: string; cardId: string },
): Promise<{ id: string; cardId: string }> {
  const cardId =
    compensates?.cardId ?? (0x04a10000 + (card += 1)).toString(16).toUpperCase().padStart(8, '0');
  if (kind === 'discharge' && !compensates) await importCards(db, shopId, [{ cardId, credits }]);
  const id = randomUUID();
  await ledger.createMovement(shopId, {
    id,
    kind,
    cardId,
    credits,
    tillId: till,
    compensates: compensates?.id,
  });
  await ledger.postMovement(shopId, id, { tillId: till, occurredAt });
  return { id, cardId };
}

describe('the day report, Europe/Brussels', () => {
  test('when summer time begins (29 March 2026), then the day has 23 hours and a sale a millisecond either side of local midnight counts in its own day', async () => {
    await posted('recharge', 10, '2026-03-28T22:59:59.999Z'); // 23:59:59.999 on the 28th (CET)
    await posted('recharge', 20, '2026-03-28T23:00:00.000Z'); // 00:00 on the 29th
    await posted('recharge', 40, '2026-03-29T21:59:59.999Z', BACK); // 23:59:59.999 CEST
    await posted('recharge', 80, '2026-03-29T22:00:00.000Z'); // 00:00 on the 30th
    const shop = await readShop(db, shopId);
    const report = await dayReport(db, shop, '2026-03-29');
    assert.equal(report.hours, 23);
    assert.equal(report.from, '2026-03-28T23:00:00.000Z');
    assert.equal(report.to, '2026-03-29T22:00:00.000Z');
    assert.deepEqual(report.totals.recharges, {
      count: 2,
      credits: 60,
      euros: '30.00',
      bonusCredits: 0,
    });
    assert.equal((await dayReport(db, shop, '2026-03-28')).totals.recharges.credits, 10);
    assert.equal((await dayReport(db, shop, '2026-03-30')).totals.recharges.credits, 80);
  });

  test('when summer time ends (25 October 2026), then the day has 25 hours, the repeated hour counted once', async () => {
    await posted('recharge', 1, '2026-10-24T21:59:59.999Z'); // 23:59:59.999 CEST on the 24th
    await posted('recharge', 2, '2026-10-24T22:00:00.000Z'); // 00:00 CEST on the 25th
    await posted('recharge', 4, '2026-10-25T00:30:00.000Z'); // 02:30 CEST, the first 02:30
    await posted('recharge', 8, '2026-10-25T01:30:00.000Z'); // 02:30 CET, the second
    await posted('recharge', 16, '2026-10-25T22:59:59.999Z'); // 23:59:59.999 CET on the 25th
    await posted('recharge', 32, '2026-10-25T23:00:00.000Z'); // 00:00 on the 26th
    const report = await dayReport(db, await readShop(db, shopId), '2026-10-25');
    assert.equal(report.hours, 25);
    assert.deepEqual(report.totals.recharges, {
      count: 4,
      credits: 30,
      euros: '15.00',
      bonusCredits: 0,
    });
  });

  test('when tills sell, pay out and compensate, then each till and the shop show recharges, payouts, compensations netted and the cash expected, and pending and voided ones apart', async () => {
    const day = '2026-06-10'; // CEST: the day runs from 2026-06-09T22:00Z
    await renameTill(db, shopId, FRONT, 'front counter', BY);
    await posted('recharge', 30, '2026-06-10T07:00:00Z'); // 15.00 taken at the front
    await posted('recharge', 10, '2026-06-10T08:00:00Z', BACK); // 5.00 at the back
    const payout = await posted('discharge', 6, '2026-06-10T09:00:00Z'); // 3.00 paid at the front
    // The card does not show the payout after all: a compensation of the opposite kind.
    await posted('recharge', 6, '2026-06-10T10:00:00Z', BACK, payout); // 3.00, as taken
    const pending = randomUUID();
    await ledger.createMovement(shopId, {
      id: pending,
      kind: 'recharge',
      cardId: '04B00001',
      credits: 7,
      tillId: BACK,
    });
    const voided = randomUUID();
    await ledger.createMovement(shopId, {
      id: voided,
      kind: 'recharge',
      cardId: '04B00002',
      credits: 9,
      tillId: FRONT,
    });
    await ledger.voidMovement(shopId, voided, { tillId: FRONT });
    await db.query(
      `UPDATE movements SET created_at = '2026-06-10T11:00:00Z' WHERE id IN ($1, $2)`,
      [pending, voided],
    );

    const report = await dayReport(db, await readShop(db, shopId), day);
    assert.equal(report.hours, 24);
    const none = { count: 0, credits: 0, euros: '0.00', bonusCredits: 0 };
    const noCardRules = { refunds: 0, corrections: 0, replacements: 0, blockClears: 0 };
    assert.deepEqual(report.totals, {
      recharges: { count: 2, credits: 40, euros: '20.00', bonusCredits: 0 },
      payouts: { count: 1, credits: 6, euros: '3.00', bonusCredits: 0 },
      compensations: {
        recharges: { count: 1, credits: 6, euros: '3.00', bonusCredits: 0 },
        payouts: none,
        redone: noCardRules,
        undone: noCardRules,
      },
      refunds: none,
      corrections: none,
      replacements: none,
      blockClears: 0,
      eurosTaken: '23.00',
      eurosPaidOut: '3.00',
      eurosRefunded: '0.00',
      netCashExpected: '20.00',
      bonusGiven: 0,
      bonusForfeited: 0,
      pending: 1,
      voided: 1,
    });
    assert.deepEqual(
      report.tills.map((till) => [till.tillName ?? till.tillId, till.totals.netCashExpected]),
      [
        ['front counter', '12.00'],
        [BACK, '8.00'],
      ],
    );
    assert.deepEqual(
      report.pending.map((m) => m.id),
      [pending],
    );
    assert.deepEqual(
      report.voided.map((m) => [m.id, m.tillName]),
      [[voided, 'front counter']],
    );
    assert.equal(report.floatRechargesNotReported, null);

    const csv = dayReportCsv(report).split('\r\n');
    assert.match(csv[0] ?? '', /^date,time_zone,till,till_id,recharges,/);
    assert.equal(
      csv[1],
      `2026-06-10,Europe/Brussels,front counter,${FRONT},1,30,15.00,1,6,3.00,0,0,0.00,0,0,0.00,15.00,3.00,0.00,12.00,0,1,0,0,0.00,0,0,0.00,0,0,0,0,0,,,,0,0`,
    );
    assert.equal(
      csv[3],
      '2026-06-10,Europe/Brussels,all tills,,2,40,20.00,1,6,3.00,1,6,3.00,0,0,0.00,23.00,3.00,0.00,20.00,1,1,0,0,0.00,0,0,0.00,0,0,0,0,0,,,,0,0',
    );
  });

  test('when a post reaches the ledger days later, then the sale counts on the day its card was written', async () => {
    const cardId = '04C00001';
    const id = randomUUID();
    await ledger.createMovement(shopId, {
      id,
      kind: 'recharge',
      cardId,
      credits: 3,
      tillId: FRONT,
    });
    // Posted now (the ledger's clock), but written to the card on 1 February at 10:00 local.
    await ledger.postMovement(shopId, id, { tillId: FRONT, occurredAt: '2026-02-01T09:00:00Z' });
    const shop = await readShop(db, shopId);
    assert.equal((await dayReport(db, shop, '2026-02-01')).totals.recharges.credits, 3);
  });

  test("when tills' last heartbeats hold float recharges not reported yet, then today's report lists them per till with the heartbeat's time and their sum, in JSON and CSV, and another day's report has none", async () => {
    const THIRD = '33333333-3333-4333-8333-333333333333';
    const heartbeat = (
      float: { unreportedMovements: number; unreportedCredits: number } | null,
    ) => ({
      version: '2.1.0',
      reader: { state: 'ready' as const, name: null, problem: null },
      pendingMovements: 0,
      waitingMovements: 0,
      float: float && { credits: 100, offlineSince: null, ...float },
    });
    await recordHeartbeat(
      db,
      shopId,
      FRONT,
      heartbeat({ unreportedMovements: 2, unreportedCredits: 15 }),
      null,
    );
    await recordHeartbeat(
      db,
      shopId,
      BACK,
      heartbeat({ unreportedMovements: 0, unreportedCredits: 0 }),
      null,
    );
    await recordHeartbeat(
      db,
      shopId,
      THIRD,
      heartbeat({ unreportedMovements: 1, unreportedCredits: 4 }),
      null,
    );
    const shop = await readShop(db, shopId);
    const today = await shopToday(db, shop);
    const now = Date.now();
    await posted('recharge', 8, new Date(now).toISOString(), FRONT);

    const report = await dayReport(db, shop, today);
    const float = report.floatRechargesNotReported;
    assert.ok(float, `today's report has the float: ${JSON.stringify(report)}`);
    assert.deepEqual(
      { ...float, tills: float.tills.map(({ asOf: _, ...till }) => till) },
      {
        movements: 3,
        credits: 19,
        tills: [
          { tillId: FRONT, tillName: 'front counter', movements: 2, credits: 15 },
          { tillId: THIRD, tillName: null, movements: 1, credits: 4 },
        ],
      },
    );
    for (const till of float.tills) {
      assert.ok(Math.abs(Date.parse(till.asOf) - now) < 3_600_000, till.asOf);
    }
    const [front, third] = float.tills;
    const csv = dayReportCsv(report).split('\r\n');
    assert.match(
      csv[0] ?? '',
      /,pending,voided,refunds,refund_credits,refund_euros,corrections,correction_credits,correction_euros,bonus_given,bonus_forfeited,replacements,replacement_credits,block_clears,float_not_reported,float_not_reported_credits,float_as_of,card_rule_compensations_redone,card_rule_compensations_undone$/,
    );
    assert.equal(
      csv[1],
      `${today},Europe/Brussels,front counter,${FRONT},1,8,4.00,0,0,0.00,0,0,0.00,0,0,0.00,4.00,0.00,0.00,4.00,0,0,0,0,0.00,0,0,0.00,0,0,0,0,0,2,15,${front?.asOf},0,0`,
    );
    assert.equal(
      csv[2],
      `${today},Europe/Brussels,unnamed till,${THIRD},0,0,0.00,0,0,0.00,0,0,0.00,0,0,0.00,0.00,0.00,0.00,0.00,0,0,0,0,0.00,0,0,0.00,0,0,0,0,0,1,4,${third?.asOf},0,0`,
    );
    assert.equal(
      csv[3],
      `${today},Europe/Brussels,all tills,,1,8,4.00,0,0,0.00,0,0,0.00,0,0,0.00,4.00,0.00,0.00,4.00,0,0,0,0,0.00,0,0,0.00,0,0,0,0,0,3,19,,0,0`,
    );

    const past = await dayReport(db, shop, '2026-06-10');
    assert.equal(past.floatRechargesNotReported, null);
    assert.match(
      dayReportCsv(past).split('\r\n')[1] ?? '',
      /,0,1,0,0,0.00,0,0,0.00,0,0,0,0,0,,,,0,0$/,
    );
    await recordHeartbeat(db, shopId, FRONT, heartbeat(null), null);
    await recordHeartbeat(db, shopId, THIRD, heartbeat(null), null);
  });

  test('when the chart asks for 30 days, then it has one entry per local day, days without sales at 0, the same euros as the day reports', async () => {
    const shop = await readShop(db, shopId);
    const days = await takingsByDay(db, shop, '2026-03-30', 30);
    assert.equal(days.length, 30);
    assert.equal(days[0]?.date, '2026-03-01');
    const byDate = new Map(days.map((day) => [day.date, day]));
    for (const date of ['2026-03-28', '2026-03-29', '2026-03-30']) {
      const report = await dayReport(db, shop, date);
      assert.equal(byDate.get(date)?.taken, report.totals.eurosTaken, date);
    }
    assert.equal(byDate.get('2026-03-15')?.taken, '0.00');
  });

  test('when the shop moves to another time zone, then its days are counted anew: the next report counts the new local days, and check finds them equal to the movements', async () => {
    await setTimeZone(db, shopId, 'America/New_York', BY);
    const shop = await readShop(db, shopId);
    // 2026-03-28T22:59:59.999Z and 23:00Z are both the 28th in New York (EDT, UTC-4).
    const report = await dayReport(db, shop, '2026-03-28');
    assert.equal(report.totals.recharges.credits, 30);
    assert.deepEqual((await checkLedger(db)).problems, []);
    await setTimeZone(db, shopId, 'Europe/Brussels', BY);
    assert.deepEqual((await checkLedger(db)).problems, []);
  });

  test('when the daily takings differ from the movements (a row changed, one missing), then check names the shop, the day and both figures', async () => {
    assert.deepEqual((await checkLedger(db)).problems, []);
    await db.query(
      `UPDATE daily_takings SET euros = euros + 1 WHERE customer_id = $1 AND day = '2026-03-29' AND kind = 'recharge' AND till_id = $2`,
      [shopId, FRONT],
    );
    await db.query(`DELETE FROM daily_takings WHERE customer_id = $1 AND day = '2026-03-28'`, [
      shopId,
    ]);
    const problems = (await checkLedger(db)).problems;
    assert.deepEqual(problems, [
      `daily takings of customer ${shopId} on 2026-03-28 (till ${FRONT}, recharge): kept nothing, the movements make 1 movements, 10 credits, 5.0000 euros, 0 bonus credits`,
      `daily takings of customer ${shopId} on 2026-03-29 (till ${FRONT}, recharge): kept 1 movements, 20 credits, 11.0000 euros, 0 bonus credits, the movements make 1 movements, 20 credits, 10.0000 euros, 0 bonus credits`,
    ]);
    await db.query('SELECT ledger_rebuild_daily_takings($1)', [shopId]);
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
});

describe('the day report of refunds, corrections and bonuses, on the 25-hour day', () => {
  // Tiers: 20.00 paid gives 4 bonus credits; 0.50 a credit. 25 October 2026 in Brussels runs
  // from 2026-10-24T22:00Z to 2026-10-25T23:00Z (25 hours; 02:00-03:00 comes twice).
  const day = '2026-10-25';
  let bonusShop: string;

  before(async () => {
    bonusShop = (
      await addCustomer(db, { name: 'Laverie des Bonus', credits: 10_000, creditCost: 5000n })
    ).customerId;
    await setTimeZone(db, bonusShop, 'Europe/Brussels', BY);
    await setCardRules(db, bonusShop, { bonusTiers: [{ minAmount: '20.00', bonusCredits: 4 }] });
  });

  async function recharge(
    cardId: string,
    what: { amount: string } | { credits: number },
    at: string,
    till = FRONT,
  ) {
    const id = randomUUID();
    await ledger.createMovement(bonusShop, { id, kind: 'recharge', cardId, tillId: till, ...what });
    return ledger.postMovement(bonusShop, id, { tillId: till, occurredAt: at });
  }

  test('when a bonus recharge, a payout forfeiting its bonus, a cashier’s refund and an operator’s correction are posted, then each is its own line, the refunded euros come off the net cash, and check proves the bonus counted', async () => {
    // A: 20.00 buys 40 + 4 bonus at 02:30 CEST; paid out whole at 02:30 CET (the hour again):
    // bonus first, its 4 bonus credits forfeited, 20.00 back (what was paid).
    await recharge('04D00001', { amount: '20.00' }, '2026-10-25T00:30:00Z');
    const payout = randomUUID();
    await ledger.createMovement(bonusShop, {
      id: payout,
      kind: 'discharge',
      cardId: '04D00001',
      credits: 44,
      tillId: FRONT,
    });
    await ledger.postMovement(bonusShop, payout, {
      tillId: FRONT,
      occurredAt: '2026-10-25T01:30:00Z',
    });
    // B: 25.00 buys 50 + 4; the cashier undoes it 5 minutes later: 54 credits, 25.00 back.
    const mistaken = await recharge('04D00002', { amount: '25.00' }, '2026-10-25T09:00:00Z');
    const refund = randomUUID();
    await ledger.createMovement(bonusShop, {
      id: refund,
      kind: 'refund',
      cardId: '04D00002',
      refunds: mistaken.id,
      tillId: FRONT,
      cardCredits: 54,
      tillTime: '2026-10-25T09:05:00Z',
    });
    await ledger.postMovement(bonusShop, refund, {
      tillId: FRONT,
      occurredAt: '2026-10-25T09:05:00Z',
    });
    // C: 30 credits (by credits: no bonus) at the back; an operator takes 10 back, which the
    // card's next till POST applies: 5.00 back.
    const keyed = await recharge('04D00003', { credits: 30 }, '2026-10-25T10:00:00Z', BACK);
    const change = randomUUID();
    await new Cards(db).correct(
      bonusShop,
      { id: change, cardId: '04D00003', recharge: keyed.id, credits: 10 },
      { actor: BY.actor, reason: 'keyed 30 for 20' },
    );
    const correction = randomUUID();
    await ledger.createMovement(bonusShop, {
      id: correction,
      kind: 'correction',
      cardId: '04D00003',
      applies: change,
      tillId: BACK,
      cardCredits: 30,
    });
    await ledger.postMovement(bonusShop, correction, {
      tillId: BACK,
      occurredAt: '2026-10-25T22:59:59.999Z', // 23:59:59.999 CET: still the 25th
    });

    const report = await dayReport(db, await readShop(db, bonusShop), day);
    assert.equal(report.hours, 25);
    const totals = report.totals;
    assert.deepEqual(
      {
        recharges: totals.recharges,
        payouts: totals.payouts,
        refunds: totals.refunds,
        corrections: totals.corrections,
        bonusGiven: totals.bonusGiven,
        bonusForfeited: totals.bonusForfeited,
        eurosTaken: totals.eurosTaken,
        eurosPaidOut: totals.eurosPaidOut,
        eurosRefunded: totals.eurosRefunded,
        netCashExpected: totals.netCashExpected,
      },
      {
        recharges: { count: 3, credits: 128, euros: '60.00', bonusCredits: 8 },
        payouts: { count: 1, credits: 44, euros: '20.00', bonusCredits: 4 },
        refunds: { count: 1, credits: 54, euros: '25.00', bonusCredits: 4 },
        corrections: { count: 1, credits: 10, euros: '5.00', bonusCredits: 0 },
        bonusGiven: 8,
        bonusForfeited: 4,
        eurosTaken: '60.00',
        eurosPaidOut: '20.00',
        eurosRefunded: '30.00',
        netCashExpected: '10.00',
      },
    );
    assert.deepEqual(
      report.tills.map((till) => [
        till.tillId,
        till.totals.eurosRefunded,
        till.totals.netCashExpected,
      ]),
      [
        [FRONT, '25.00', '0.00'],
        [BACK, '5.00', '10.00'],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const csv = dayReportCsv(report).split('\r\n');
    assert.equal(
      csv.at(-2),
      '2026-10-25,Europe/Brussels,all tills,,3,128,60.00,1,44,20.00,0,0,0.00,0,0,0.00,60.00,20.00,30.00,10.00,0,0,1,54,25.00,1,10,5.00,8,4,0,0,0,,,,0,0',
    );
    // The takings chart counts the day alike: the refund and the correction come off its net.
    const [chartDay] = await takingsByDay(db, await readShop(db, bonusShop), day, 1);
    assert.deepEqual(chartDay, {
      date: day,
      taken: '60.00',
      paidOut: '20.00',
      refunded: '30.00',
      net: '10.00',
      movements: 6, // three recharges, the payout, the refund and the correction
    });
    assert.deepEqual((await checkLedger(db)).problems, []);
  });

  test('when a till undoes a posted refund its card lacks and redoes a voided one its card holds, then the refunds line counts one, the compensations count one of each by till, and the CSV and check agree', async () => {
    const date = '2026-10-27'; // CET: from 2026-10-26T23:00Z
    /** A refund of a fresh 20-credit recharge at the front, decided by `decision`. */
    const refund = async (cardId: string, hour: number, decision: 'post' | 'void') => {
      const sale = await recharge(cardId, { credits: 20 }, `${date}T${hour}:00:00Z`);
      const id = randomUUID();
      await ledger.createMovement(bonusShop, {
        id,
        kind: 'refund',
        cardId,
        refunds: sale.id,
        tillId: FRONT,
        cardCredits: 20,
        tillTime: `${date}T${hour}:05:00Z`,
      });
      const by = { tillId: FRONT, occurredAt: `${date}T${hour}:05:00Z` };
      if (decision === 'post') await ledger.postMovement(bonusShop, id, by);
      else await ledger.voidMovement(bonusShop, id, by);
      return id;
    };
    /** The back till's compensation of `of`, as its card shows it. */
    const compensate = async (of: string, cardId: string, hour: number) => {
      const id = randomUUID();
      await ledger.createMovement(bonusShop, {
        id,
        kind: 'refund',
        cardId,
        tillId: BACK,
        compensates: of,
      });
      await ledger.postMovement(bonusShop, id, {
        tillId: BACK,
        occurredAt: `${date}T${hour}:30:00Z`,
      });
    };
    // Posted by an operator, but the card never lost the credits: undone.
    await compensate(await refund('04D00011', 10, 'post'), '04D00011', 10);
    // Voided by an operator, but the card did lose them: redone.
    await compensate(await refund('04D00012', 12, 'void'), '04D00012', 12);

    const report = await dayReport(db, await readShop(db, bonusShop), date);
    const { refunds, compensations } = report.totals;
    const noCardRules = { refunds: 0, corrections: 0, replacements: 0, blockClears: 0 };
    assert.deepEqual(
      { refunds, redone: compensations.redone, undone: compensations.undone },
      {
        refunds: { count: 1, credits: 20, euros: '10.00', bonusCredits: 0 },
        redone: { ...noCardRules, refunds: 1 },
        undone: { ...noCardRules, refunds: 1 },
      },
      JSON.stringify(report.totals),
    );
    assert.deepEqual(
      report.tills.map((till) => [
        till.tillId,
        till.totals.refunds.count,
        till.totals.compensations.redone.refunds,
        till.totals.compensations.undone.refunds,
      ]),
      [
        [FRONT, 1, 0, 0], // the refund posted by the operator (the voided one counts nowhere)
        [BACK, 0, 1, 1], // one redone, one undone: no refund on balance
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const csv = dayReportCsv(report).split('\r\n');
    assert.match(csv.at(-2) ?? '', /^2026-10-27,Europe\/Brussels,all tills,.*,,,,1,1$/);
    assert.deepEqual((await checkLedger(db)).problems, []);
  });

  test('when a day’s bonus credits in the daily takings differ from the movements, then check says so, and a rebuild sets them right', async () => {
    await db.query(
      `UPDATE daily_takings SET bonus_credits = bonus_credits + 1
       WHERE customer_id = $1 AND day = $2 AND kind = 'recharge' AND till_id = $3`,
      [bonusShop, day, FRONT],
    );
    const problems = (await checkLedger(db)).problems;
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(
      problems[0] ?? '',
      /kept 2 movements, 98 credits, 45\.0000 euros, 9 bonus credits, the movements make 2 movements, 98 credits, 45\.0000 euros, 8 bonus credits/,
    );
    await db.query('SELECT ledger_rebuild_daily_takings($1)', [bonusShop]);
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
});
