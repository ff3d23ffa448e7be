// docs/card-security.md's threat model names the test behind each row that says "refused" or
// "detected": each such row names at least one, and each named test exists, so the table
// cannot claim what no test shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/card-security.md', root), 'utf8');

interface Citation {
  row: string;
  file: string;
  name: string;
}

/** The table rows of the page, and what their last cell cites: `area/file.ts`: "test name". */
function rows(): { row: string; claims: boolean; citations: Citation[] }[] {
  return page
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| -'))
    .map((row) => {
      const cells = row.split(' | ');
      const last = cells.at(-1) ?? '';
      const citations: Citation[] = [];
      let file: string | undefined;
      for (const match of last.matchAll(/`([a-z]+\/[\w.-]+\.ts)`|"([^"]+)"/g)) {
        if (match[1]) file = match[1];
        else if (file && match[2]) citations.push({ row, file, name: match[2] });
      }
      return { row, claims: /\*\*(refused|detected)\*\*/.test(row), citations };
    });
}

test('when a threat model row says refused or detected, then it names a test', () => {
  const claiming = rows().filter((row) => row.claims);
  assert.ok(claiming.length >= 10, `only ${claiming.length} rows claim anything`);
  const bare = claiming.filter((row) => row.citations.length === 0).map((row) => row.row);
  assert.deepEqual(bare, []);
});

test('when the threat model names a test, then that test is in that file', () => {
  const citations = rows().flatMap((row) => row.citations);
  assert.ok(citations.length >= 10);
  const missing = citations.filter(({ file, name }) => {
    // A name cut short ends with "..."; what is before it must be the start of a test's name.
    const start = name.replace(/,? ?\.\.\.$/, '');
    return !readFileSync(new URL(`test/${file}`, root), 'utf8').includes(start);
  });
  assert.deepEqual(missing, []);
});
