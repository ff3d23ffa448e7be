import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { FETCH_BLOCKED_PORTS } from '../../service/blocked-ports.ts';
import { operatorSettingsSchema, parseConfig } from '../../service/config.ts';

const require = createRequire(import.meta.url);

test('when compared with the bad ports of Node’s fetch (undici), then the list is the same', () => {
  const { badPorts } = require('undici/lib/web/fetch/constants.js') as { badPorts: string[] };
  assert.deepEqual(
    [...FETCH_BLOCKED_PORTS].sort((a, b) => a - b),
    badPorts.map(Number),
  );
});

test('when a blocked port is configured, in the CLI’s settings or the tray’s, then it is refused naming the rule; its neighbours are not', () => {
  const base = { apiKey: 'a-key-of-sixteen-chars', dataDir: '/tmp/x' };
  assert.throws(
    () => parseConfig({ ...base, port: 4190 }),
    /port: port 4190 is one that browsers and fetch refuse/,
  );
  assert.equal(parseConfig({ ...base, port: 4191 }).port, 4191);
  assert.equal(parseConfig({ ...base, port: 0 }).port, 0);
  const tray = operatorSettingsSchema.shape.port;
  assert.equal(tray.safeParse(6667).success, false);
  assert.equal(tray.safeParse(4178).success, true);
});
