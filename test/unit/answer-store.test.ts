/**
 * What the caller is told for a movement that landed (answerOf); the replays themselves are in
 * wallet-use-cases.test.ts, over the engine.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerOf } from '../../service/wallet/answer-store.ts';

describe('answerOf', () => {
  test('when a movement has no planned write, then there is no answer to give, and the error names the movement', () => {
    assert.throws(
      () =>
        answerOf({
          id: 'm1',
          kind: 'recharge',
          cardId: '04A1B2C3',
          keyFingerprint: 'k1',
          startedAt: '2024-01-01T00:00:00.000Z',
        }),
      { message: 'movement m1 has no planned write' },
    );
  });
});
