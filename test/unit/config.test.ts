import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { resolveCliRequest } from '../../service/cli-options.ts';
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

  test('when no card master key is given, then there is none; when given, then it is kept uppercase', () => {
    assert.equal(parseConfig(base).cardMasterKey, undefined);
    assert.equal(
      parseConfig({ ...base, cardMasterKey: '000102030405060708090a0b0c0d0e0f' }).cardMasterKey,
      '000102030405060708090A0B0C0D0E0F',
    );
  });

  test('when the card master key comes from the file, the environment and a flag, then the flag wins over the environment, which wins over the file', () => {
    const [fromFile, fromEnv, fromFlag] = ['11'.repeat(16), '22'.repeat(16), '33'.repeat(16)];
    const host = (env: Record<string, string>) => ({
      env,
      platform: 'linux' as const,
      home: '/h',
      cwd: '/',
    });
    const file = join(mkdtempSync(join(tmpdir(), 'cww-config-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ apiKey: base.apiKey, dataDir: '/tmp/x', cardMasterKey: fromFile }),
    );
    const masterKey = (argv: string[], env: Record<string, string>) => {
      const request = resolveCliRequest(['--config', file, ...argv], host(env));
      return request.kind === 'run' ? request.config.cardMasterKey : undefined;
    };
    try {
      assert.equal(masterKey([], {}), fromFile);
      assert.equal(masterKey([], { CARD_WALLET_CARD_MASTER_KEY: fromEnv }), fromEnv);
      assert.equal(
        masterKey(['--card-master-key', fromFlag], { CARD_WALLET_CARD_MASTER_KEY: fromEnv }),
        fromFlag,
      );
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
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
