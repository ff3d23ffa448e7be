import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertMatchesContract } from '../support/openapi-contract.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  text: JSON.stringify(body),
  json: body,
});
const url = (path: string) => `http://127.0.0.1:4178${path}`;
const limited = {
  ratelimit: '"readcard"; r=4; t=9',
  'ratelimit-policy': '"readcard"; q=5; w=10; pk=:abc:',
};

describe('the OpenAPI contract check', () => {
  test('when an answer is as documented, then it passes', () => {
    assertMatchesContract(
      'GET',
      url('/readcard'),
      json(200, { cardId: '04A1B2C3', credits: 5, rechargeAmount: null }, limited),
    );
    assertMatchesContract('GET', url('/nowhere'), json(404, { error: 'NotFound' }));
    assertMatchesContract(
      'POST',
      url('/readcard'),
      json(405, { error: 'MethodNotAllowed' }, { allow: 'GET, HEAD' }),
    );
  });

  const wrong: [string, string, string, ReturnType<typeof json>, RegExp][] = [
    [
      'credits as a string',
      'GET',
      '/readcard',
      json(200, { cardId: '04A1B2C3', credits: '5', rechargeAmount: null }, limited),
      /body/,
    ],
    [
      'a lowercase card id',
      'GET',
      '/readcard',
      json(200, { cardId: '04a1b2c3', credits: 5, rechargeAmount: null }, limited),
      /body/,
    ],
    ['an undocumented error code', 'GET', '/readcard', json(400, { error: 'Oops' }), /body/],
    [
      'an undocumented status',
      'GET',
      '/readcard',
      json(418, { error: 'Teapot' }),
      /not documented/,
    ],
    [
      'a missing RateLimit header',
      'GET',
      '/readcard',
      json(200, { cardId: '04A1B2C3', credits: 5, rechargeAmount: null }),
      /lacks header RateLimit/,
    ],
    [
      'a 429 without Retry-After',
      'GET',
      '/info',
      json(429, { error: 'TooManyRequests' }),
      /Retry-After/,
    ],
    [
      'info credits as a number',
      'GET',
      '/info',
      json(200, { credits: 5, creditCost: '0.50' }, limited),
      /body/,
    ],
    [
      'an extra field',
      'POST',
      '/dischargecard',
      json(
        200,
        { cardId: '04A1B2C3', dischargedCredits: 1, dischargedAmount: 0.5, stack: 'x' },
        limited,
      ),
      /body/,
    ],
  ];
  for (const [what, method, path, res, message] of wrong) {
    test(`when an answer has ${what}, then it fails`, () => {
      assert.throws(() => assertMatchesContract(method, url(path), res), message);
    });
  }
});
