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
import type { FloatStatus } from '../../service/wallet/float-status.ts';
import type { TillFloats } from '../../service/wallet/till-floats.ts';

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

/** A till's float as GET /info sees it: its status and its unreported recharges' credits. */
function floatsOf(status: Partial<FloatStatus>, unreportedCredits = 0) {
  const whole: FloatStatus = {
    state: 'online',
    online: true,
    floatId: 'f-1',
    size: 500,
    left: 340,
    toReport: 0,
    offlineSince: null,
    offlineSalesStopAt: null,
    line: '',
    ...status,
  };
  return {
    status: () => whole,
    account: { unreportedCredits: () => unreportedCredits },
  } as unknown as TillFloats;
}

/** The CustomerReadError GET /info answers with the ledger down and the till's float as given. */
async function offlineDetail(floats: TillFloats): Promise<string | undefined> {
  const ledger = ledgerAnswering(errors.ledgerUnavailable());
  const customers = new CustomerDirectory(asClient(ledger));
  const error = await customerInfo(asClient(ledger), customers, KEY, floats).then(
    (answer) => assert.fail(`answered ${JSON.stringify(answer)}`),
    (error: AppError) => error,
  );
  assert.deepEqual([error.code, error.status], ['CustomerReadError', 400]);
  return error.detail;
}

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

  test('when the shop has floats and this till has unreported float recharges, then credits are the pool plus the floats less those recharges', async () => {
    const ledger = ledgerAnswering({ ...SHOP, floatCredits: 300 });
    const customers = new CustomerDirectory(asClient(ledger));
    const info = await customerInfo(asClient(ledger), customers, KEY, floatsOf({}, 45));
    assert.deepEqual(info, { credits: String(1250 + 300 - 45), creditCost: '0.50' });
  });

  test('when the till is offline with its float, then the detail says since when, what the float can still sell and until when', async () => {
    const floats = floatsOf({
      state: 'offline',
      online: false,
      left: 340,
      offlineSince: '2026-11-27T10:42:00.000Z',
      offlineSalesStopAt: '2026-11-28T10:42:00.000Z',
    });
    assert.equal(
      await offlineDetail(floats),
      'the ledger cannot be reached since 2026-11-27T10:42:00.000Z; this till sells from its float: 340 credits left, until 2026-11-28T10:42:00.000Z',
    );
  });

  test('when the till has never heard the ledger and has no stop time, then the detail states neither', async () => {
    const floats = floatsOf({ state: 'offline', online: false, left: 12 });
    assert.equal(
      await offlineDetail(floats),
      'the ledger cannot be reached; this till sells from its float: 12 credits left',
    );
  });

  test('when the till’s float sells nothing (stopped or held), then the detail says so with the state', async () => {
    for (const state of ['stopped', 'held'] as const) {
      const floats = floatsOf({ state, online: false, offlineSince: '2026-11-27T10:42:00.000Z' });
      assert.equal(
        await offlineDetail(floats),
        `the ledger cannot be reached since 2026-11-27T10:42:00.000Z; this till's float sells nothing now (${state})`,
      );
    }
  });

  test('when the shop gives its tills no float, then the CustomerReadError has the spec’s message and no detail', async () => {
    assert.equal(await offlineDetail(floatsOf({ state: 'off', online: false })), undefined);
    assert.equal(await offlineDetail(undefined as unknown as TillFloats), undefined);
  });

  test('when the ledger refuses the key of a till with a float, then the refusal is the answer as it is', async () => {
    const refusal = errors.invalidApiKey();
    const ledger = ledgerAnswering(refusal);
    const customers = new CustomerDirectory(asClient(ledger));
    const floats = floatsOf({ state: 'offline', online: false });
    await assert.rejects(customerInfo(asClient(ledger), customers, KEY, floats), (error) => {
      assert.equal(error, refusal);
      return true;
    });
  });
});
