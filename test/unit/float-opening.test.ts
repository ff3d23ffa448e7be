/**
 * Opening the till's float (service/wallet/float-opening.ts) over a scripted ledger: the open
 * request journaled before it is sent and sent again with the same id; a float of this till the
 * journal does not know held as lost (the operator told how to end it); a ledger failure other
 * than "no such float" never taken for one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ledgerErrorCodes } from '../../common/ledger-contract.ts';
import { LedgerRefusal, type LedgerFloat } from '../../service/cloud/ledger-client.ts';
import { errors } from '../../service/errors.ts';
import { FloatOpening, IDS_PER_REQUEST } from '../../service/wallet/float-opening.ts';
import type { MovementBook } from '../../service/wallet/movement-book.ts';
import { PREFIX, TILL } from '../support/float-fixtures.ts';

const notFound = () => new LedgerRefusal(404, ledgerErrorCodes.floatNotFound.code);
const FLOAT = {
  id: 'float-1',
  idPrefix: PREFIX,
  idsIssued: 100,
  granted: 200,
  credits: 200,
} as unknown as LedgerFloat;

function bookOf(opening?: { requestId: string; keyFingerprint: string }) {
  const entries: Record<string, unknown>[] = [];
  const logs: { level: string; text: string }[] = [];
  let ids = 0;
  const floats: { opening?: { requestId: string; keyFingerprint: string } } = { opening };
  const book = {
    tillId: TILL,
    newId: () => `request-${(ids += 1)}`,
    journal: { floats },
    log: {
      info: (text: string) => logs.push({ level: 'info', text }),
      warn: (text: string) => logs.push({ level: 'warn', text }),
      error: (text: string) => logs.push({ level: 'error', text }),
    },
    append: async (entry: Record<string, unknown>) => {
      entries.push(entry);
      if (entry.type === 'float-open') {
        floats.opening = {
          requestId: entry.requestId as string,
          keyFingerprint: entry.keyFingerprint as string,
        };
      }
    },
  };
  return { book: book as unknown as MovementBook, entries, logs };
}

/** A ledger whose getTillFloat and openFloat answer (or throw) as scripted, recording calls. */
function ledgerOf(
  tillFloat: () => Promise<LedgerFloat>,
  openFloat: () => Promise<LedgerFloat> = async () => FLOAT,
) {
  const calls: string[] = [];
  const opened: unknown[] = [];
  return {
    calls,
    opened,
    getTillFloat: async (_key: string, tillId: string) => {
      calls.push(`getTillFloat ${tillId}`);
      return tillFloat();
    },
    openFloat: async (_key: string, request: unknown) => {
      calls.push('openFloat');
      opened.push(request);
      return openFloat();
    },
  };
}

describe('FloatOpening', () => {
  test('when the ledger holds no float of this till, then the open request is journaled, sent, and its float journaled', async () => {
    const { book, entries, logs } = bookOf();
    const ledger = ledgerOf(async () => Promise.reject(notFound()));
    await new FloatOpening(book, ledger).open('key', 'fp');
    assert.deepEqual(ledger.calls, [`getTillFloat ${TILL}`, 'openFloat']);
    assert.deepEqual(ledger.opened, [
      { tillId: TILL, requestId: 'request-1', ids: IDS_PER_REQUEST },
    ]);
    assert.deepEqual(
      entries.map((e) => e.type),
      ['float-open', 'float'],
    );
    assert.deepEqual(entries[1], {
      type: 'float',
      floatId: 'float-1',
      requestId: 'request-1',
      keyFingerprint: 'fp',
      prefix: PREFIX,
      idsIssued: 100,
      granted: 200,
    });
    assert.match(logs[0]?.text ?? '', /float float-1 opened: 200 credits/);
  });

  test('when an open request of this key is journaled already, then it is sent again with its id, without asking for a lost float', async () => {
    const { book, entries } = bookOf({ requestId: 'earlier', keyFingerprint: 'fp' });
    const ledger = ledgerOf(async () => assert.fail('not asked'));
    await new FloatOpening(book, ledger).open('key', 'fp');
    assert.deepEqual(ledger.calls, ['openFloat']);
    assert.deepEqual(ledger.opened, [{ tillId: TILL, requestId: 'earlier', ids: IDS_PER_REQUEST }]);
    assert.deepEqual(
      entries.map((e) => e.type),
      ['float'],
    );
  });

  test("when the journaled request was another key's, then a new one is made", async () => {
    const { book } = bookOf({ requestId: 'earlier', keyFingerprint: 'old' });
    const ledger = ledgerOf(async () => Promise.reject(notFound()));
    await new FloatOpening(book, ledger).open('key', 'fp');
    assert.deepEqual(ledger.opened, [
      { tillId: TILL, requestId: 'request-1', ids: IDS_PER_REQUEST },
    ]);
  });

  test('when the ledger holds an open float of this till that the journal does not know, then it is held as lost, no new one is opened, and the operator is told how to close it', async () => {
    const { book, entries, logs } = bookOf();
    const ledger = ledgerOf(async () => FLOAT);
    await new FloatOpening(book, ledger).open('key', 'fp');
    assert.deepEqual(ledger.calls, [`getTillFloat ${TILL}`]);
    assert.deepEqual(entries, [{ type: 'float-lost', floatId: 'float-1', lost: true }]);
    assert.equal(logs[0]?.level, 'error');
    assert.match(logs[0]?.text ?? '', /float float-1 .*card-wallet-cloud float close/);
  });

  test('when asking for a lost float fails otherwise (the ledger down, a refused key), then the open fails and nothing is journaled', async () => {
    for (const failure of [errors.ledgerUnavailable(), new LedgerRefusal(401, 'InvalidApiKey')]) {
      const { book, entries } = bookOf();
      const ledger = ledgerOf(async () => Promise.reject(failure));
      await assert.rejects(new FloatOpening(book, ledger).open('key', 'fp'), (error) => {
        assert.equal(error, failure);
        return true;
      });
      assert.deepEqual(entries, []);
    }
  });

  test('when the ledger answers that this till has a float open already, then that float is held as lost; any other refusal is thrown', async () => {
    const { book, entries } = bookOf();
    let asked = 0;
    const ledger = ledgerOf(
      async () => {
        asked += 1;
        if (asked === 1) throw notFound();
        return FLOAT;
      },
      async () => Promise.reject(new LedgerRefusal(409, ledgerErrorCodes.floatOpen.code)),
    );
    await new FloatOpening(book, ledger).open('key', 'fp');
    assert.deepEqual(
      entries.map((e) => e.type),
      ['float-open', 'float-lost'],
    );

    const other = bookOf();
    const refusing = ledgerOf(
      async () => Promise.reject(notFound()),
      async () => Promise.reject(new LedgerRefusal(422, 'InvalidRequest')),
    );
    await assert.rejects(
      new FloatOpening(other.book, refusing).open('key', 'fp'),
      /InvalidRequest/,
    );
    assert.deepEqual(
      other.entries.map((e) => e.type),
      ['float-open'],
    );
  });

  test('when a lost float is still open at the ledger, then it stays lost; closed (or another open), then it is let go and the log says a new one follows', async () => {
    const still = bookOf();
    await new FloatOpening(
      still.book,
      ledgerOf(async () => FLOAT),
    ).stillLost('key', 'float-1');
    assert.deepEqual(still.entries, []);

    for (const answer of [async () => Promise.reject(notFound()), async () => FLOAT]) {
      const gone = bookOf();
      await new FloatOpening(gone.book, ledgerOf(answer)).stillLost('key', 'float-0');
      assert.deepEqual(gone.entries, [{ type: 'float-lost', floatId: 'float-0', lost: false }]);
      assert.match(gone.logs[0]?.text ?? '', /float float-0, unknown to .* is closed: a new one/);
    }
  });
});
