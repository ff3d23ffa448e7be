import { rmSync } from 'node:fs';
import { freshPgliteFolder } from '../support/ledger-process.ts';
import { defineLedgerSuite } from './ledger-suite.ts';

defineLedgerSuite('ledger on PGlite (a data folder)', async () => {
  const folder = await freshPgliteFolder();
  return {
    database: folder,
    cleanup: async () => rmSync(folder, { recursive: true, force: true }),
  };
});
