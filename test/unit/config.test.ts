import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULT_PORT, originProblem, parseConfig } from '../../service/config.ts';
import { apiKeyMatches, keyFingerprint } from '../../service/http/api-key.ts';

const base = { apiKey: 'a-valid-key-0123456789', dataDir: '/tmp/x' };

describe('config', () => {
  test('when only the required settings are given, then the documented defaults apply', () => {
    const config = parseConfig(base);
    assert.equal(config.port, DEFAULT_PORT);
    assert.deepEqual(config.allowedOrigins, []);
    assert.equal(config.cardKey, 'FFFFFFFFFFFF');
    assert.equal(config.cardKeyType, 'A');
    assert.equal(config.walletSector, 1);
    assert.equal(config.cloudUrl, undefined);
  });

  test('when a card key is lowercase, then it is kept uppercase', () => {
    assert.equal(parseConfig({ ...base, cardKey: 'a0a1a2a3a4a5' }).cardKey, 'A0A1A2A3A4A5');
  });

  test('when several settings are wrong, then the error names each one', () => {
    assert.throws(
      () => parseConfig({ ...base, port: -1, walletSector: 0, cardKeyType: 'C' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /port/.test(error.message) &&
        /walletSector/.test(error.message) &&
        /cardKeyType/.test(error.message),
    );
  });

  for (const [origin, problem] of [
    ['https://pos.example.com', undefined],
    ['http://127.0.0.1:8080', undefined],
    ['https://pos.example.com/', /exact origin/],
    ['https://pos.example.com/till', /exact origin/],
    ['https://POS.example.com', /exact origin/],
    ['https://*.example.com', /wildcards/],
    ['pos.example.com', /not a URL/],
    ['ftp://pos.example.com', /scheme/],
    ['null', /not a URL/],
  ] as const) {
    test(`when the origin is ${origin}, then it is ${problem ? 'refused' : 'accepted'}`, () => {
      const found = originProblem(origin);
      if (problem) assert.match(found ?? '', problem);
      else assert.equal(found, undefined);
    });
  }
});

describe('api keys', () => {
  test('when keys differ in length or content, then they do not match; equal keys do', () => {
    assert.equal(apiKeyMatches('abc', 'abc'), true);
    assert.equal(apiKeyMatches('abc', 'abcd'), false);
    assert.equal(apiKeyMatches('abd', 'abc'), false);
  });

  test('when fingerprinted, then the key is not in the 8-hex-digit fingerprint', () => {
    const fingerprint = keyFingerprint('a-valid-key-0123456789');
    assert.match(fingerprint, /^[0-9a-f]{8}$/);
    assert.equal(fingerprint, keyFingerprint('a-valid-key-0123456789'));
  });
});
