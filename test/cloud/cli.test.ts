/**
 * The `card-wallet-cloud` command line on a PGlite folder: admin commands, argument errors
 * (exit 2, the option named), check, serve with a seed (idempotent), signals.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { Ledger } from '../../cloud/ledger.ts';
import { runCli } from '../../cloud/run-cli.ts';
import { freshPgliteFolder, startLedgerProcess, type Seed } from '../support/ledger-process.ts';
import { LedgerClient } from './ledger-client.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The commands in-process (fast): what the bin does, minus the process around it. */
async function cli(args: string[]): Promise<Outcome> {
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

/** The real bin, as a child process. */
function spawnCli(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cloud/cli.ts', ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('card-wallet-cloud CLI', () => {
  let folder: string;

  before(async () => {
    folder = await freshPgliteFolder();
  });

  after(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  describe('invalid arguments', () => {
    const cases: [string, string[], RegExp][] = [
      ['no command', [], /a command is required/],
      ['an unknown command', ['launch'], /unknown command "launch"/],
      [
        'serve with a bad --port',
        ['serve', '--port', 'eighty', '--database', 'x'],
        /--port must be an integer/,
      ],
      [
        'serve with --port 70000',
        ['serve', '--port', '70000', '--database', 'x'],
        /--port must be an integer/,
      ],
      ['serve without --database', ['serve', '--port', '0'], /--database is required/],
      [
        'customer add without --name',
        ['customer', 'add', '--credits', '1', '--credit-cost', '1'],
        /--name is required/,
      ],
      [
        'a bad --credit-cost',
        ['customer', 'add', '--name', 'x', '--credits', '1', '--credit-cost', '0.00001'],
        /--credit-cost must be/,
      ],
      [
        'a zero --credit-cost',
        ['customer', 'set-cost', '--customer', randomUUID(), '--credit-cost', '0'],
        /--credit-cost must be/,
      ],
      [
        'negative --credits',
        ['customer', 'topup', '--customer', randomUUID(), '--credits=-5'],
        /--credits must be an integer/,
      ],
      [
        'a --customer that is not a UUID',
        ['key', 'assign', '--key', 'k'.repeat(20), '--customer', 'shop-1'],
        /--customer must be/,
      ],
      ['a short --key', ['key', 'issue', '--key', 'short'], /--key must be 16 to 256/],
      ['an unknown option', ['check', '--verbose'], /Unknown option '--verbose'/],
      ['a bad --state', ['movements', 'list', '--state', 'done'], /--state must be/],
      ['a bad --till', ['movements', 'list', '--till', 'till-1'], /--till must be a UUID/],
      [
        'a --limit over what the HTTP API gives',
        ['movements', 'list', '--limit', '5000'],
        /--limit must be an integer from 1 to 1000 \(got "5000"\)/,
      ],
      [
        'movements void without --evidence',
        ['movements', 'void', '--customer', randomUUID(), '--id', randomUUID()],
        /--evidence is required/,
      ],
      [
        'movements post with a blank --evidence',
        ['movements', 'post', '--customer', randomUUID(), '--id', randomUUID(), '--evidence', ' '],
        /--evidence must say/,
      ],
      ['an unknown movements command', ['movements', 'delete'], /use list, post or void/],
      [
        'card show with a bad --card',
        ['card', 'show', '--customer', randomUUID(), '--card', '04A1'],
        /--card must be a card id/,
      ],
      ['card import without --file', ['card', 'import', '--customer', randomUUID()], /--file/],
    ];
    for (const [what, args, message] of cases) {
      test(`when given ${what}, then it exits 2 with a message naming the problem`, async () => {
        const outcome = await cli(args);
        assert.equal(outcome.code, 2, outcome.stderr);
        assert.match(outcome.stderr, message);
        assert.equal(outcome.stdout, '');
      });
    }

    test('when the bin is run with --help, then it prints the usage and exits 0', async () => {
      const outcome = await spawnCli(['--help']);
      assert.equal(outcome.code, 0);
      assert.match(outcome.stdout, /customer add --name NAME --credits N --credit-cost D/);
    });

    test('when the bin is run with an invalid option, then it exits 2 naming the option', async () => {
      const outcome = await spawnCli(['serve', '--port', '-1', '--database', folder]);
      assert.equal(outcome.code, 2);
      assert.match(outcome.stderr, /--port/);
    });

    test('when the seed file is invalid, then serve exits 2 naming --seed and the field', async () => {
      const outcome = await cli([
        'serve',
        '--port',
        '0',
        '--database',
        folder,
        '--seed',
        '/nonexistent/seed.json',
      ]);
      assert.equal(outcome.code, 2);
      assert.match(outcome.stderr, /--seed .*seed\.json/);
    });
  });

  describe('admin commands', () => {
    let customerId: string;

    test('when a customer is added, then it prints JSON with its customerId', async () => {
      const outcome = await cli([
        'customer',
        'add',
        '--name',
        'Corner shop',
        '--credits',
        '500',
        '--credit-cost',
        '0.25',
        '--database',
        folder,
      ]);
      assert.equal(outcome.code, 0, outcome.stderr);
      const customer = JSON.parse(outcome.stdout);
      assert.match(customer.customerId, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...customer, customerId: 'x' },
        {
          customerId: 'x',
          name: 'Corner shop',
          credits: 500,
          creditCost: '0.25',
          // A new shop gives its tills no float until its operator sets a size.
          float: {
            size: 0,
            lowWater: 0,
            offlineCap: null,
            offlineLimitSeconds: 86_400,
            cardTypes: ['classic', 'desfire'],
          },
          // Nor bonus tiers; a cashier may undo a recharge for 10 minutes.
          cards: { undoWindowSeconds: 600, bonusTiers: [], bonusSpend: 'bonus-first' },
        },
      );
      customerId = customer.customerId;
    });

    test('when credits are topped up and the cost is set, then the customer shows both', async () => {
      const topup = await cli([
        'customer',
        'topup',
        '--customer',
        customerId,
        '--credits',
        '250',
        '--reason',
        'invoice 41 paid',
        '--database',
        folder,
      ]);
      assert.equal(topup.code, 0, topup.stderr);
      assert.equal(JSON.parse(topup.stdout).credits, 750);
      const cost = await cli([
        'customer',
        'set-cost',
        '--customer',
        customerId,
        '--credit-cost',
        '0.125',
        '--database',
        folder,
      ]);
      assert.equal(JSON.parse(cost.stdout).creditCost, '0.125');
    });

    test('when an unknown customer is topped up, then it exits 1 with CustomerNotFound', async () => {
      const outcome = await cli([
        'customer',
        'topup',
        '--customer',
        randomUUID(),
        '--credits',
        '1',
        '--reason',
        'a test',
        '--database',
        folder,
      ]);
      assert.equal(outcome.code, 1);
      assert.match(outcome.stderr, /CustomerNotFound/);
    });

    test('when keys are issued, registered, assigned and revoked, then each prints JSON and the rules hold', async () => {
      const why = ['--reason', 'a new till'];
      const issued = JSON.parse(
        (await cli(['key', 'issue', '--customer', customerId, ...why, '--database', folder]))
          .stdout,
      );
      assert.match(issued.apiKey, /^cwk_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.customerId, customerId);

      const loose = JSON.parse((await cli(['key', 'issue', ...why, '--database', folder])).stdout);
      assert.equal(loose.customerId, null);

      const provided = 'provider-handed-out-key-0001';
      const registered = await cli([
        'key',
        'issue',
        '--key',
        provided,
        ...why,
        '--database',
        folder,
      ]);
      assert.deepEqual(JSON.parse(registered.stdout), { apiKey: provided, customerId: null });
      const twice = await cli(['key', 'issue', '--key', provided, ...why, '--database', folder]);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /KeyConflict/);

      const assigned = await cli([
        'key',
        'assign',
        '--key',
        provided,
        '--customer',
        customerId,
        ...why,
        '--database',
        folder,
      ]);
      assert.equal(assigned.code, 0, assigned.stderr);
      assert.deepEqual(JSON.parse(assigned.stdout), { customerId });

      const revoked = await cli([
        'key',
        'revoke',
        '--key',
        loose.apiKey,
        ...why,
        '--database',
        folder,
      ]);
      assert.deepEqual(JSON.parse(revoked.stdout), { revoked: true, customerId: null });
      const reassign = await cli([
        'key',
        'assign',
        '--key',
        loose.apiKey,
        '--customer',
        customerId,
        ...why,
        '--database',
        folder,
      ]);
      assert.equal(reassign.code, 1);
      assert.match(reassign.stderr, /revoked/);

      const unknown = await cli([
        'key',
        'revoke',
        '--key',
        'never-issued-key-000000',
        ...why,
        '--database',
        folder,
      ]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /KeyNotFound/);
    });

    test('when a top-up or a key change gives no reason, then it exits 2 naming --reason and changes nothing', async () => {
      for (const args of [
        ['customer', 'topup', '--customer', customerId, '--credits', '5'],
        ['key', 'issue', '--customer', customerId],
        ['key', 'revoke', '--key', 'never-issued-key-000000'],
        ['customer', 'topup', '--customer', customerId, '--credits', '5', '--reason', '  '],
      ]) {
        const outcome = await cli([...args, '--database', folder]);
        assert.equal(outcome.code, 2, `${args.join(' ')}: ${outcome.stderr}`);
        assert.match(outcome.stderr, /--reason is required/);
      }
      const db = await openDatabase(folder);
      try {
        const { rows } = await db.query<{ credits: string | number }>(
          'SELECT credits FROM customers WHERE id = $1',
          [customerId],
        );
        assert.equal(Number(rows[0]?.credits), 750);
      } finally {
        await db.close();
      }
    });

    test('when the ledger is consistent, then check exits 0; when a balance is tampered with, then it exits 1 with a report', async () => {
      const ok = await cli(['check', '--database', folder]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /^ok: 1 customers/);

      const db = await openDatabase(folder);
      await db.query('UPDATE customers SET credits = credits + 3 WHERE id = $1', [customerId]);
      await db.close();
      const failed = await cli(['check', '--database', folder]);
      assert.equal(failed.code, 1);
      assert.match(failed.stdout, /FAILED/);
      assert.match(
        failed.stdout,
        new RegExp(`customer ${customerId}: balance 753 != sum of entries 750`),
      );

      const fix = await openDatabase(folder);
      await fix.query('UPDATE customers SET credits = credits - 3 WHERE id = $1', [customerId]);
      await fix.close();
    });
  });

  describe('tills', () => {
    test("when another till's compensation has been pending for more than 24 hours, then movements list marks it as needing a decision, and nothing else", async () => {
      const shop = JSON.parse(
        (
          await cli([
            'customer',
            'add',
            '--name',
            'Shop with a compensation left pending',
            '--credits',
            '100',
            '--credit-cost',
            '1',
            '--database',
            folder,
          ])
        ).stdout,
      ) as { customerId: string };
      const [front, back] = [randomUUID(), randomUUID()];
      const [recharge, fix, fresh] = [randomUUID(), randomUUID(), randomUUID()];
      const db = await openDatabase(folder, { poolSize: 1 });
      try {
        const ledger = new Ledger(db);
        const card = { kind: 'recharge' as const, cardId: '04A1B2C4', credits: 10 };
        await ledger.createMovement(shop.customerId, { id: recharge, ...card, tillId: front });
        await ledger.postMovement(shop.customerId, recharge, { tillId: front });
        // Till B read the card, found the recharge not on it, and never posted its compensation.
        await ledger.createMovement(shop.customerId, {
          id: fix,
          kind: 'discharge',
          cardId: card.cardId,
          credits: 10,
          tillId: back,
          compensates: recharge,
        });
        await ledger.createMovement(shop.customerId, {
          id: fresh,
          ...card,
          cardId: '04A1B2C5',
          tillId: back,
        });
        await db.query(
          `UPDATE movements SET created_at = now() - interval '25 hours' WHERE id = ANY($1)`,
          [[fix, fresh]],
        );
      } finally {
        await db.close();
      }
      const listed = await cli([
        'movements',
        'list',
        '--state',
        'pending',
        '--customer',
        shop.customerId,
        '--database',
        folder,
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      const movements = (
        JSON.parse(listed.stdout) as { movements: { id: string; needsDecision?: string }[] }
      ).movements;
      assert.deepEqual(movements.map((m) => m.id).sort(), [fix, fresh].sort());
      const marked = movements.find((m) => m.id === fix)?.needsDecision ?? '';
      assert.match(marked, new RegExp(`compensation of till ${back} \\(of ${recharge}\\)`));
      assert.match(marked, /movements post --evidence/);
      // A plain movement waits for its card, however long: not marked.
      assert.equal(movements.find((m) => m.id === fresh)?.needsDecision, undefined);
      // Decided, so that the folder's other tests see no pending movement of this shop.
      for (const [id, till] of [
        [fix, back],
        [fresh, back],
      ] as const) {
        const db2 = await openDatabase(folder, { poolSize: 1 });
        try {
          await new Ledger(db2).voidMovement(shop.customerId, id, { tillId: till });
        } finally {
          await db2.close();
        }
      }
    });

    test("when an operator voids a gone till's pending movement with evidence, then it is voided, the evidence is kept, and the till's pending list no longer shows it", async () => {
      const shop = JSON.parse(
        (
          await cli([
            'customer',
            'add',
            '--name',
            'Shop with a dead till',
            '--credits',
            '100',
            '--credit-cost',
            '1',
            '--database',
            folder,
          ])
        ).stdout,
      ) as { customerId: string };
      const till = randomUUID();
      const id = randomUUID();
      const db = await openDatabase(folder, { poolSize: 1 });
      try {
        await new Ledger(db).createMovement(shop.customerId, {
          id,
          kind: 'recharge',
          cardId: '04A1B2C3',
          credits: 40,
          tillId: till,
        });
      } finally {
        await db.close();
      }
      const pendingArgs = ['movements', 'list', '--state', 'pending', '--till', till];
      const pending = await cli([...pendingArgs, '--database', folder]);
      assert.equal(pending.code, 0, pending.stderr);
      assert.deepEqual(
        (JSON.parse(pending.stdout) as { movements: { id: string }[] }).movements.map((m) => m.id),
        [id],
      );

      const evidence = 'the till burnt down; the customer never got the card back';
      const voided = await cli([
        'movements',
        'void',
        '--customer',
        shop.customerId,
        '--id',
        id,
        '--evidence',
        evidence,
        '--database',
        folder,
      ]);
      assert.equal(voided.code, 0, voided.stderr);
      const movement = JSON.parse(voided.stdout) as Record<string, unknown>;
      assert.equal(movement.state, 'voided');
      assert.equal(movement.evidence, evidence);
      assert.equal(movement.tillId, till);
      assert.equal(movement.customerCredits, 100);
      const after = await cli([...pendingArgs, '--database', folder]);
      assert.deepEqual(JSON.parse(after.stdout), { movements: [] });

      const again = await cli([
        'movements',
        'post',
        '--customer',
        shop.customerId,
        '--id',
        id,
        '--evidence',
        'changed my mind',
        '--database',
        folder,
      ]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /MovementAlreadyVoided/);
    });
  });

  describe('card accounts', () => {
    const csvFolder = mkdtempSync(join(tmpdir(), 'cwc-csv-'));
    after(() => rmSync(csvFolder, { recursive: true, force: true }));
    const csvFile = (name: string, text: string): string => {
      const path = join(csvFolder, `${name}.csv`);
      writeFileSync(path, text);
      return path;
    };

    test('when a CSV of cards is imported twice, then the first run imports them, the second changes nothing, the pool is untouched and card show prints the account', async () => {
      const shop = JSON.parse(
        (
          await cli([
            'customer',
            'add',
            '--name',
            'Importing shop',
            '--credits',
            '100',
            '--credit-cost',
            '1',
            '--database',
            folder,
          ])
        ).stdout,
      ) as { customerId: string };
      const file = csvFile('ok', 'cardId,credits\r\n04a1b2c3,40\r\n\r\n04A1B2C3D4E5F6, 0\r\n');
      const args = ['card', 'import', '--customer', shop.customerId, '--file', file];
      const first = await cli([...args, '--database', folder]);
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(JSON.parse(first.stdout), { cards: 2, imported: 2, unchanged: 0 });
      const second = await cli([...args, '--database', folder]);
      assert.deepEqual(JSON.parse(second.stdout), { cards: 2, imported: 0, unchanged: 2 });

      const list = JSON.parse((await cli(['customer', 'list', '--database', folder])).stdout);
      const listed = list.customers.find(
        (customer: { customerId: string }) => customer.customerId === shop.customerId,
      );
      assert.equal(listed.credits, 100, 'imported cards were sold already: the pool is untouched');

      const shown = await cli([
        'card',
        'show',
        '--customer',
        shop.customerId,
        '--card',
        '04a1b2c3',
        '--database',
        folder,
      ]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.deepEqual(JSON.parse(shown.stdout), {
        cardId: '04A1B2C3',
        credits: 40,
        // Imported credits are valued at the shop's credit cost then (1.00).
        bonusCredits: 0,
        paidAmount: '40.00',
        blocked: null,
        changes: [],
        holderLabel: null,
        importedCredits: 40,
        suspect: false,
        flags: [],
        movements: [],
      });

      const conflict = csvFile('conflict', '04A1B2C3,41\n0A0B0C0D,5\n');
      const refused = await cli([
        'card',
        'import',
        '--customer',
        shop.customerId,
        '--file',
        conflict,
        '--database',
        folder,
      ]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /CardImportConflict: nothing imported: 04A1B2C3 was imported with 40 credits/,
      );
      const untouched = await cli([
        'card',
        'show',
        '--customer',
        shop.customerId,
        '--card',
        '0A0B0C0D',
        '--database',
        folder,
      ]);
      assert.equal(JSON.parse(untouched.stdout).credits, 0);
    });

    test('when an operator blocks, labels and sets the rules of a card at the command line, then each change is in the audit log with the user and the reason, and a bad holder label or a missing reason exits 2', async () => {
      const run = (args: string[]) => cli([...args, '--database', folder]);
      const { customerId } = JSON.parse(
        (
          await run([
            'customer',
            'add',
            '--name',
            'Card rules shop',
            '--credits',
            '10',
            '--credit-cost',
            '1',
          ])
        ).stdout,
      ) as { customerId: string };
      const on = ['--customer', customerId, '--card', '04A1B2C4'];
      const blocked = await run(['card', 'block', ...on, '--reason', 'lost at the pool']);
      assert.equal(blocked.code, 0, blocked.stderr);
      assert.equal(JSON.parse(blocked.stdout).blocked.by, 'cli:unknown');
      assert.equal((await run(['card', 'block', ...on])).code, 2, 'no reason, no block');
      const labelled = await run(['card', 'holder', ...on, '--label', 'Léa, 0470 11 22 33']);
      assert.equal(labelled.code, 0, labelled.stderr);
      assert.equal(JSON.parse(labelled.stdout).holderLabel, 'Léa, 0470 11 22 33');
      const long = await run(['card', 'holder', ...on, '--label', 'x'.repeat(101)]);
      assert.deepEqual([long.code, /--label: must be 1 to 100/.test(long.stderr)], [2, true]);
      assert.equal((await run(['card', 'holder', ...on])).code, 2, '--label or --delete');
      const deleted = await run(['card', 'holder', ...on, '--delete']);
      assert.equal(JSON.parse(deleted.stdout).holderLabel, null);
      const rules = await run([
        'card',
        'rules',
        '--customer',
        customerId,
        '--bonus-tiers',
        '20.00=2',
      ]);
      assert.equal(rules.code, 0, rules.stderr);
      const { audit } = JSON.parse((await run(['audit', 'list', '--shop', customerId])).stdout) as {
        audit: { action: string; actor: string; reason: string | null }[];
      };
      const rows = audit.map((row) => [row.action, row.actor, row.reason]);
      assert.deepEqual(rows.reverse().slice(-4), [
        ['card.block', 'cli:unknown', 'lost at the pool'],
        ['card.holder-label', 'cli:unknown', null],
        ['card.holder-label', 'cli:unknown', null],
        ['card.rules', 'cli:unknown', null],
      ]);
    });

    test('when the CSV has bad lines, then it exits 2 naming each line and imports nothing', async () => {
      const file = csvFile(
        'bad',
        '04A1B2C3,10\n04A1B2,5\n0A0B0C0D,-1\n0A0B0C0E,1,2\n04A1B2C3,11\n',
      );
      const outcome = await cli([
        'card',
        'import',
        '--customer',
        randomUUID(),
        '--file',
        file,
        '--database',
        folder,
      ]);
      assert.equal(outcome.code, 2, outcome.stderr);
      for (const line of [2, 3, 4, 5]) assert.match(outcome.stderr, new RegExp(`line ${line}: `));
      assert.doesNotMatch(outcome.stderr, /line 1: /);
    });

    test('when card show names an unknown customer, then it exits 1 with CustomerNotFound', async () => {
      const outcome = await cli([
        'card',
        'show',
        '--customer',
        randomUUID(),
        '--card',
        '04A1B2C3',
        '--database',
        folder,
      ]);
      assert.equal(outcome.code, 1);
      assert.match(outcome.stderr, /CustomerNotFound/);
    });
  });

  describe('serve', () => {
    const key = 'cli-serve-key-0123456789';
    const seed: Seed = {
      customers: [{ name: 'Seeded shop', credits: 40, creditCost: '0.50', keys: [key] }],
      unassignedKeys: ['cli-serve-unassigned-0123456789'],
    };

    test('when served twice with the same seed, then the second start changes nothing', async () => {
      const first = await startLedgerProcess({ database: folder, seed });
      const shop = new LedgerClient(first.url, key);
      const customer = (await shop.customer()).body;
      assert.equal(customer.credits, 40);
      const movement = await shop.create({
        id: randomUUID(),
        kind: 'recharge',
        cardId: '04A1B2C3',
        credits: 15,
      });
      assert.equal(movement.status, 201);

      const busy = await cli(['movements', 'list', '--database', folder]);
      assert.equal(busy.code, 1, 'an admin command must not open a folder a server holds');
      assert.match(busy.stderr, /DatabaseInUse/);

      assert.equal(await first.stop(), 0);

      const second = await startLedgerProcess({ database: folder, seed });
      const again = await new LedgerClient(second.url, key).customer();
      assert.deepEqual(again.body, { ...customer, credits: 25 });
      second.kill('SIGINT');
      assert.equal(await second.exited, 0);

      const list = await cli(['movements', 'list', '--state', 'pending', '--database', folder]);
      const { movements } = JSON.parse(list.stdout);
      assert.equal(movements.length, 1);
      assert.equal(movements[0].customerId, customer.customerId);
      const customers = JSON.parse((await cli(['customer', 'list', '--database', folder])).stdout);
      assert.equal(
        customers.customers.filter((c: { name: string }) => c.name === 'Seeded shop').length,
        1,
      );
    });

    test('when the port is taken, then serve exits 1 with a message', async () => {
      const second = await freshPgliteFolder();
      const holder = await startLedgerProcess({ database: second });
      try {
        const other = await cli(['serve', '--port', String(holder.port), '--database', folder]);
        assert.equal(other.code, 1);
        assert.match(other.stderr, /EADDRINUSE/);
      } finally {
        await holder.stop();
        rmSync(second, { recursive: true, force: true });
      }
    });
  });
});
