/** HTTP behaviour that needs no real database: unexpected failures never leak. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startLedgerServer } from '../../cloud/create-ledger-server.ts';
import type { Database } from '../../cloud/db/database.ts';
import { call } from './ledger-client.ts';

/** A database that fails every call with a message that must never reach a client. */
const brokenDatabase: Database = {
  kind: 'postgres',
  description: 'broken',
  query: () => Promise.reject(new Error('connect ECONNREFUSED secret-host:5432 password=hunter2')),
  exec: () => Promise.reject(new Error('broken')),
  transaction: () => Promise.reject(new Error('broken')),
  close: () => Promise.resolve(),
};

describe('ledger HTTP errors', () => {
  test('when the database fails unexpectedly, then the answer is a bare 500 InternalError and the error is logged', async () => {
    const logged: string[] = [];
    const server = await startLedgerServer({
      database: brokenDatabase,
      log: { error: (message) => logged.push(message) },
    });
    try {
      const answer = await call('GET', `${server.url}/v1/customer`, {
        apiKey: 'any-key-0123456789abc',
      });
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { error: 'InternalError' });
      assert.ok(logged.some((line) => line.includes('ECONNREFUSED')));

      const health = await call('GET', `${server.url}/health`);
      assert.equal(health.status, 503);
      assert.deepEqual(health.body, { error: 'DatabaseUnavailable' });
    } finally {
      await server.close();
    }
  });
});
