/**
 * POST /cards/holder's use case (docs/integrators.md, "Holder labels"): the body's parsing,
 * and the label set at the ledger for the card on the reader, a refusal in the worker's words.
 * The http area tests the route; these reach the use case from the unit tests alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LedgerRefusal } from '../../service/cloud/ledger-client.ts';
import { AppError, errors } from '../../service/errors.ts';
import {
  MAX_HOLDER_LABEL,
  parseHolderLabelBody,
  setHolderLabel,
} from '../../service/wallet/holder-label.ts';
import { CARD, cardOnReader } from '../support/money-rig.ts';

const seen = (error: unknown) =>
  error instanceof AppError
    ? { code: error.code, status: error.status, detail: error.detail }
    : { not: String(error) };

function refusedBody(body: unknown) {
  try {
    const parsed = parseHolderLabelBody(body);
    return { parsed };
  } catch (error) {
    return seen(error);
  }
}

const invalid = (detail: string) => ({ code: 'InvalidBody', status: 400, detail });
const NOT_AN_OBJECT =
  'the body must be {"label": "a name or phone number"} to set it, or {"label": null} to delete it';
const BOUNDS = `label: must be 1 to ${MAX_HOLDER_LABEL} characters on one line, or null to delete it`;

describe('parseHolderLabelBody', () => {
  test('when the label is text, then it is trimmed; null deletes it', () => {
    assert.deepEqual(refusedBody({ label: '  Ana +34 600 ' }), { parsed: 'Ana +34 600' });
    assert.deepEqual(refusedBody({ label: null }), { parsed: null });
    assert.equal(MAX_HOLDER_LABEL, 100);
    const longest = 'x'.repeat(100);
    assert.deepEqual(refusedBody({ label: longest }), { parsed: longest });
  });

  test('when the body is not an object, null or an array, then InvalidBody saying what it takes', () => {
    assert.deepEqual(refusedBody('Ana'), invalid(NOT_AN_OBJECT));
    assert.deepEqual(refusedBody(null), invalid(NOT_AN_OBJECT));
    assert.deepEqual(refusedBody(['Ana']), invalid(NOT_AN_OBJECT));
  });

  test('when the body has another field, then InvalidBody naming it, with the near one', () => {
    assert.deepEqual(
      refusedBody({ label: 'Ana', labels: 'x' }),
      invalid('"labels": not a field of /cards/holder, which takes label; did you mean label?'),
    );
    assert.deepEqual(
      refusedBody({ label: 'Ana', phoneNumber: 'x' }),
      invalid('"phoneNumber": not a field of /cards/holder, which takes label'),
    );
  });

  test('when the label is missing, then InvalidBody saying it is required', () => {
    assert.deepEqual(
      refusedBody({}),
      invalid('label: required (a name or phone number, or null to delete it)'),
    );
  });

  test('when the label is empty, blank, too long, on two lines, with a control character or not text, then InvalidBody naming the bounds', () => {
    for (const label of [
      '',
      '   ',
      'x'.repeat(101),
      'Ana\nBel',
      'Ana\u0000',
      'Ana\u007f',
      'a\u001fb',
      7,
    ]) {
      assert.deepEqual(refusedBody({ label }), invalid(BOUNDS), JSON.stringify(label));
    }
  });
});

describe('setHolderLabel', () => {
  test("when the ledger takes the label, then its answer, for the card on the reader and the caller's key", async () => {
    const card = cardOnReader(30);
    const calls: unknown[] = [];
    const answer = await setHolderLabel(
      card.access,
      {
        setHolderLabel: async (apiKey, cardId, label) => {
          calls.push([apiKey, cardId, label]);
          return { changed: true, cardId, holderLabel: label };
        },
      },
      'the-key',
      'Ana',
    );
    assert.deepEqual(answer, { changed: true, cardId: CARD, holderLabel: 'Ana' });
    assert.deepEqual(calls, [['the-key', CARD, 'Ana']]);
  });

  test("when the ledger refuses the label, then HolderLabelRefused with the card, the ledger's code and words", async () => {
    const card = cardOnReader(30);
    const refused = (error: Error) =>
      setHolderLabel(card.access, { setHolderLabel: () => Promise.reject(error) }, 'k', 'Ana').then(
        (answer) => ({ answered: answer }),
        seen,
      );
    assert.deepEqual(await refused(new LedgerRefusal(422, 'CardNotFound', 'no such card')), {
      code: 'HolderLabelRefused',
      status: 500,
      detail: `the ledger refused the label of card ${CARD}: CardNotFound (no such card)`,
    });
    assert.deepEqual(await refused(new LedgerRefusal(422, 'CardNotFound')), {
      code: 'HolderLabelRefused',
      status: 500,
      detail: `the ledger refused the label of card ${CARD}: CardNotFound`,
    });
    const outage = await refused(errors.ledgerUnavailable());
    assert.equal((outage as { code?: string }).code, 'LedgerUnavailable', JSON.stringify(outage));
  });
});
