/**
 * GET /info's use case: the shop's credits read fresh from the ledger, as the spec's strings;
 * refusals of the key keep their meaning, anything else is CustomerReadError.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CustomerDirectory } from '../../service/cloud/customer-directory.ts';
import {
  LedgerRefusal,
  type LedgerClient,
  type LedgerCustomer,
} from '../../service/cloud/ledger-client.ts';
import { errors, type AppError } from '../../service/errors.ts';
import { customerInfo } from '../../service/wallet/customer-info.ts';

const KEY = 'info-test-key-0123456789';
const SHOP: LedgerCustomer = {
  customerId: '00000000-0000-4000-8000-0000000000a1',
  name: 'A',
  credits: 1250,
  creditCost: '0.50',
};

/** A ledger whose GET /v1/customer answers `answer` (or throws it), counting the calls. */
function ledgerAnswering(answer: LedgerCustomer | Error) {
  const ledger = {
    calls: 0,
    reachability: { reachable: null, at: null },
    getCustomer: async () => {
      ledger.calls += 1;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return ledger;
}

const asClient = (ledger: object) => ledger as LedgerClient;

describe('customerInfo', () => {
  test('when the ledger answers, then credits and creditCost are strings, and the shop is remembered for key resolution', async () => {
    const ledger = ledgerAnswering(SHOP);
    const customers = new CustomerDirectory(asClient(ledger));
    assert.deepEqual(await customerInfo(asClient(ledger), customers, KEY), {
      credits: '1250',
      creditCost: '0.50',
    });
    assert.deepEqual(await customers.resolve(KEY), SHOP);
    assert.equal(ledger.calls, 1, 'resolve() used what GET /info read');
  });

  test('when the ledger refuses the key, then the refusal is the answer as it is', async () => {
    for (const refusal of [
      errors.missingApiKey(),
      errors.invalidApiKey(),
      errors.missingCustomer(),
    ]) {
      const ledger = ledgerAnswering(refusal);
      await assert.rejects(
        customerInfo(asClient(ledger), new CustomerDirectory(asClient(ledger)), KEY),
        (error: AppError) => error === refusal,
      );
    }
  });

  test('when the ledger cannot be read or refuses otherwise, then CustomerReadError with the cause', async () => {
    for (const failure of [
      errors.ledgerUnavailable(),
      new LedgerRefusal(404, 'NotFound'),
      new Error('socket hang up'),
    ]) {
      const ledger = ledgerAnswering(failure);
      const customers = new CustomerDirectory(asClient(ledger));
      await assert.rejects(customerInfo(asClient(ledger), customers, KEY), (error: AppError) => {
        assert.equal(error.code, 'CustomerReadError');
        assert.equal(error.status, 400);
        assert.equal(error.cause, failure);
        return true;
      });
    }
  });
});
