import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AppError, errors } from '../../service/errors.ts';
import { LedgerClient, LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { cardAccountRefusal } from '../../service/cloud/ledger-refusals.ts';
import {
  importCardBalance,
  startTestLedger,
  TEST_API_KEY,
  type TestLedger,
} from '../support/test-ledger.ts';

describe('cardAccountRefusal', () => {
  test('when the ledger refuses a discharge with CardAccountExceeded, then the worker answers 500 CardAccountExceeded', () => {
    const mapped = cardAccountRefusal(new LedgerRefusal(422, 'CardAccountExceeded'));
    assert.ok(mapped instanceof AppError);
    assert.equal(mapped.code, 'CardAccountExceeded');
    assert.equal(mapped.status, 500);
  });

  test('when the failure is anything else, then it is left to the caller', () => {
    for (const error of [
      new LedgerRefusal(422, 'NoCredits'),
      new LedgerRefusal(409, 'MovementIdConflict'),
      errors.ledgerUnavailable(),
      new Error('CardAccountExceeded'),
      { code: 'CardAccountExceeded' },
      undefined,
    ]) {
      assert.equal(cardAccountRefusal(error), undefined, String(error));
    }
  });
});

describe('cardAccountRefusal against a real ledger', () => {
  let ledger: TestLedger;
  let client: LedgerClient;
  before(async () => {
    ledger = await startTestLedger();
    client = new LedgerClient({ baseUrl: ledger.url, retries: 0 });
  });
  after(() => ledger.close());

  const discharge = (cardId: string, credits: number) =>
    client.createMovement(TEST_API_KEY, { id: randomUUID(), kind: 'discharge', cardId, credits });

  test('when a discharge asks for more than the card account, then the client rejects with what cardAccountRefusal maps to CardAccountExceeded', async () => {
    await importCardBalance(ledger, '04CAFE01', 10);
    const refused = await discharge('04CAFE01', 11).then(
      () => assert.fail('the ledger took a discharge above the card account'),
      (error: unknown) => error,
    );
    assert.equal(cardAccountRefusal(refused)?.code, 'CardAccountExceeded', String(refused));
    const taken = await discharge('04CAFE01', 10);
    assert.equal(taken.state, 'pending');
  });
});
