/**
 * `card-wallet-cloud float ...` on a PGlite folder: the shop's float settings, what the ledger
 * shows of its tills and floats, and an operator closing a dead till's float with its final
 * report and a write-off; argument errors exit 2 naming the option.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { addCustomer } from '../../cloud/admin.ts';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { runCli } from '../../cloud/run-cli.ts';
import { floatMovementId } from '../../common/float-ids.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';

async function cli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    waitForStop: () => new Promise(() => undefined),
  });
  return { code, stdout, stderr };
}

describe('card-wallet-cloud float', () => {
  let folder: string;
  let customerId: string;
  const db = () => ['--database', folder];

  before(async () => {
    folder = await freshPgliteFolder();
    const database = await openDatabase(folder);
    customerId = (
      await addCustomer(database, { name: 'Float shop', credits: 1000, creditCost: 5000n })
    ).customerId;
    await database.close();
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  test('when an operator sets the float settings, then they print whole, and what is not given stays', async () => {
    const set = await cli([
      'float',
      'settings',
      '--customer',
      customerId,
      '--size',
      '400',
      '--low-water',
      '150',
      '--offline-cap',
      '60',
      '--offline-limit',
      '36h',
      '--card-types',
      'classic',
      ...db(),
    ]);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), {
      size: 400,
      lowWater: 150,
      offlineCap: 60,
      offlineLimitSeconds: 36 * 3600,
      cardTypes: ['classic'],
    });
    const again = await cli([
      'float',
      'settings',
      '--customer',
      customerId,
      '--offline-cap',
      'none',
      ...db(),
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      size: 400,
      lowWater: 150,
      offlineCap: null,
      offlineLimitSeconds: 36 * 3600,
      cardTypes: ['classic'],
    });
  });

  test('when the settings make no sense, then nothing changes and the message says why', async () => {
    const cases: [string[], number, RegExp][] = [
      [
        ['--low-water', '500'],
        1,
        /InvalidFloatSettings: the low-water mark \(500\) must not be above the float size \(400\)/,
      ],
      [['--offline-limit', '10s'], 2, /--offline-limit must be a duration from 1m to 30d/],
      [['--card-types', 'ultralight'], 2, /--card-types must list classic and\/or desfire/],
      [['--size', 'many'], 2, /--size must be an integer/],
    ];
    for (const [args, code, message] of cases) {
      const outcome = await cli(['float', 'settings', '--customer', customerId, ...args, ...db()]);
      assert.equal(outcome.code, code, `${args.join(' ')}: ${outcome.stderr}`);
      assert.match(outcome.stderr, message);
    }
  });

  test('when a till is gone with unreported float recharges, then the operator sees its float and closes it with a final report and a write-off', async () => {
    const database = await openDatabase(folder);
    const ledger = new Ledger(database);
    const tillId = randomUUID();
    const { float } = await ledger.floats.open(customerId, {
      tillId,
      requestId: randomUUID(),
      ids: 10,
    });
    await ledger.floats.report(customerId, randomUUID(), [
      {
        id: floatMovementId(float.idPrefix, 2),
        cardId: '04A1B2C3',
        credits: 30,
        card: 'written',
        found: true,
      },
    ]);
    await database.close();

    const shown = await cli(['float', 'show', '--customer', customerId, ...db()]);
    assert.equal(shown.code, 0, shown.stderr);
    const view = JSON.parse(shown.stdout);
    assert.equal(view.tills[0].tillId, tillId);
    assert.equal(view.tills[0].float.credits, 370);
    assert.deepEqual(view.tills[0].float.found, { count: 1, credits: 30 });
    assert.equal(view.tills[0].float.unaccountedIds, 9);

    const reportFile = join(mkdtempSync(join(tmpdir(), 'float-report-')), 'report.json');
    writeFileSync(
      reportFile,
      JSON.stringify([
        {
          id: floatMovementId(float.idPrefix, 1),
          cardId: '04A1B2C4',
          credits: 20,
          card: 'written',
          creditCost: '0.50',
        },
      ]),
    );
    const noReason = await cli([
      'float',
      'close',
      '--customer',
      customerId,
      '--float',
      float.id,
      '--write-off',
      '50',
      ...db(),
    ]);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /--reason must say/);
    const tooMuch = await cli([
      'float',
      'close',
      '--customer',
      customerId,
      '--float',
      float.id,
      '--write-off',
      '400',
      '--reason',
      'stolen',
      '--report',
      reportFile,
      ...db(),
    ]);
    assert.equal(tooMuch.code, 1);
    assert.match(
      tooMuch.stderr,
      /WriteOffBeyondFloat: float .* holds 350 credits after the final report/,
    );
    const closed = await cli([
      'float',
      'close',
      '--customer',
      customerId,
      '--float',
      float.id,
      '--write-off',
      '50',
      '--reason',
      'till stolen; its tray last showed 300 left',
      '--report',
      reportFile,
      ...db(),
    ]);
    assert.equal(closed.code, 0, closed.stderr);
    const closing = JSON.parse(closed.stdout);
    assert.equal(closing.results[0].outcome, 'recorded');
    assert.equal(closing.float.state, 'closed');
    assert.equal(closing.float.closedBy, 'operator');
    assert.equal(closing.float.writtenOff, 50);
    assert.equal(closing.float.returned, 300);

    const till = await cli(['float', 'show', '--customer', customerId, '--till', tillId, ...db()]);
    assert.equal(till.code, 0, till.stderr);
    assert.equal(JSON.parse(till.stdout).float, null);
    const check = await cli(['check', ...db()]);
    assert.equal(check.code, 0, check.stdout);
    assert.match(check.stdout, /1 floats; .* every shop's book sums to zero/);

    // The close and every settings change are in the shop's audit log, the write-off's reason
    // with it; closing the closed float again changes nothing and writes no row.
    const again = await cli([
      'float',
      'close',
      '--customer',
      customerId,
      '--float',
      float.id,
      '--write-off',
      '0',
      ...db(),
    ]);
    assert.equal(again.code, 0, again.stderr);
    const audit = await cli(['audit', 'list', '--shop', customerId, ...db()]);
    assert.equal(audit.code, 0, audit.stderr);
    const rows = (
      JSON.parse(audit.stdout) as {
        audit: {
          actor: string;
          action: string;
          subject: string | null;
          reason: string | null;
          detail: string;
        }[];
      }
    ).audit;
    assert.deepEqual(
      rows.map((row) => [row.actor, row.action, row.subject, row.reason]),
      [
        [
          'cli:unknown',
          'float.write-off',
          `float:${float.id}`,
          'till stolen; its tray last showed 300 left',
        ],
        ['cli:unknown', 'float.settings', customerId, null],
        ['cli:unknown', 'float.settings', customerId, null],
      ],
      audit.stdout,
    );
    assert.deepEqual(JSON.parse(rows[0]?.detail ?? '{}'), {
      tillId,
      reported: 1,
      writtenOff: 50,
      returned: 300,
    });
    assert.deepEqual(JSON.parse(rows[2]?.detail ?? '{}').to.size, 400);
  });

  test('when a report file is not a report, then nothing is closed and the message names the movement', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'float-report-')), 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify([{ id: randomUUID(), cardId: '04A1B2C3', credits: 0, card: 'written' }]),
    );
    const outcome = await cli([
      'float',
      'close',
      '--customer',
      customerId,
      '--float',
      randomUUID(),
      '--write-off',
      '0',
      '--report',
      bad,
      ...db(),
    ]);
    assert.equal(outcome.code, 2);
    assert.match(outcome.stderr, /--report .*: movements\[0\]\.credits: must be an integer from 1/);
  });
});
