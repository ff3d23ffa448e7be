// One version everywhere: the package, the client package, the API (the OpenAPI document's
// info.version and the client's API_VERSION), `card-wallet-worker --version` and the newest
// release in CHANGELOG.md.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { API_VERSION } from '../../client/src/api.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

test('when the versions are read, then the package, the client, the API, --version and the changelog say the same semantic version', async () => {
  const version = (JSON.parse(read('package.json')) as { version: string }).version;
  assert.match(version, SEMVER);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'service/cli.ts', '--version'],
    { cwd: root },
  );
  const released = /^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'))?.[1];
  assert.deepEqual(
    {
      client: (JSON.parse(read('client/package.json')) as { version: string }).version,
      openapi: (parse(read('docs/openapi.yaml')) as { info: { version: string } }).info.version,
      clientApi: API_VERSION,
      cli: stdout.trim(),
      changelog: released,
    },
    { client: version, openapi: version, clientApi: version, cli: version, changelog: version },
  );
});
