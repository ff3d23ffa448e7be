import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { openDatabase } from '../../cloud/db/open-database.ts';
import { applySeed } from '../../cloud/seed.ts';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { NO_FLOAT } from './sim-floats.ts';
import { SimLedger } from './sim-ledger.ts';

// A shop's float settings as the provider gives them (the seed, cloud/seed.ts): the real ledger
// refuses an offline time limit outside 1 minute to 30 days, and so must the simulated one, or
// a simulation seed runs on the model with settings no real shop can have (float seed 7 on the
// real ledger found the model taking 45 s).
test('when a shop is given an offline time limit outside a minute to 30 days, then both ledgers refuse it, and take the bounds themselves', async () => {
  const folder = await freshPgliteFolder();
  const db = await openDatabase(folder);
  try {
    const shop = (n: number, offlineLimitSeconds: number) => ({
      id: `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`,
      name: `Shop ${n}`,
      credits: 100,
      creditCost: '0.50',
      float: { ...NO_FLOAT, size: 50, offlineLimitSeconds },
    });
    const model = new SimLedger(() => Date.now());
    for (const [n, limit, taken] of [
      [1, 59, false],
      [2, 60, true],
      [3, 2_592_000, true],
      [4, 2_592_001, false],
    ] as const) {
      const real = applySeed(db, {
        customers: [{ ...shop(n, limit), keys: [`key-${n}-0123456789`] }],
      });
      if (taken) {
        await real;
        model.addShop(shop(n, limit), [`key-${n}-0123456789`]);
      } else {
        await assert.rejects(real, /offlineLimitSeconds/);
        assert.throws(() => model.addShop(shop(n, limit), []), /offlineLimitSeconds/);
      }
    }
  } finally {
    await db.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
