import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatLogLine, lineLogger, redactSecrets, REDACTED } from '../../service/logger.ts';

const KEY = 'cww_Q2FyZFdhbGxldFdvcmtlcktleTEyMzQ1Njc4';
const MASTER = '00112233445566778899aabbccddeeff';

describe('the log format (headless stderr and the tray log file alike)', () => {
  test('when a line is written, then it is the ISO time, the level and the message; a stack keeps its lines, indented', () => {
    const at = new Date('2025-03-01T10:20:30.456Z');
    assert.equal(
      formatLogLine('warn', 'reader gone', at),
      '2025-03-01T10:20:30.456Z warn reader gone\n',
    );
    assert.equal(
      formatLogLine('error', 'boom\n    at a (x.js:1)\nat b', at),
      '2025-03-01T10:20:30.456Z error boom\n        at a (x.js:1)\n    at b\n',
    );
  });

  test('when a message holds a key, the master key or an X-Api-Key header, then the line has none of them', () => {
    const lines: string[] = [];
    const log = lineLogger((line) => lines.push(line), { secrets: () => [KEY, MASTER, null] });
    log.info(`key set to ${KEY}`);
    log.warn(`master ${MASTER.toUpperCase()} loaded`);
    log.error('request headers: {"x-api-key":"someone-elses-key-123456", "host":"x"}');
    log.info('X-Api-Key: another-key-0123456789 sent');
    const all = lines.join('');
    for (const secret of [
      KEY,
      MASTER,
      MASTER.toUpperCase(),
      'someone-elses-key-123456',
      'another-key-0123456789',
    ])
      assert.ok(!all.includes(secret), `${secret} leaked: ${all}`);
    assert.equal(all.split(REDACTED).length - 1, 4, all);
    assert.match(all, /"host":"x"/, 'the rest of the line stays');
  });

  test('when a "secret" is shorter than 8 characters (an unset or test value), then ordinary words are not redacted', () => {
    assert.equal(redactSecrets('the reader is ready', ['ready', '']), 'the reader is ready');
  });
});
