import { startPostgres } from '../support/postgres.ts';
import { defineLedgerSuite } from './ledger-suite.ts';

defineLedgerSuite('ledger on PostgreSQL (a real server)', async () => {
  const postgres = await startPostgres();
  return { database: postgres.url, cleanup: () => postgres.stop() };
});
