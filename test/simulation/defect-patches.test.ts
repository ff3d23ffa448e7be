import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The defects put back to measure the simulation (docs/testing.md, "Defects put back") are
// patches against the production code: one that no longer applies measures nothing, so each is
// checked against today's code (git apply --check: the working tree is not touched).
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const patches = readdirSync(join(here, 'defects')).filter((name) => name.endsWith('.patch'));

test('when each defect patch is checked against the code, then it still applies', () => {
  assert.ok(patches.length > 0, 'no patches in test/simulation/defects');
  const stale: string[] = [];
  for (const name of patches) {
    try {
      execFileSync('git', ['apply', '--check', join('test', 'simulation', 'defects', name)], {
        cwd: root,
        stdio: 'pipe',
      });
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
      stale.push(`${name}: ${stderr || (error as Error).message}`);
    }
  }
  assert.deepEqual(stale, [], `these patches no longer apply:\n${stale.join('\n')}`);
});
