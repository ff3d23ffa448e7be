import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/**
 * The JSON of the first ```json fence after a `## heading` of a page in docs/: test vectors kept
 * in the document integrators read, so that the page and the code cannot drift apart.
 */
export function readDocVectors<T>(page: string, heading: string): T {
  const doc = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');
  const escaped = heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = doc.search(new RegExp(`^## ${escaped}[ \\t]*$`, 'm'));
  assert.ok(at >= 0, `docs/${page} has a "## ${heading}" heading`);
  const fence = /^```json\n([\s\S]*?)^```/m.exec(doc.slice(at));
  assert.ok(fence?.[1], `a \`\`\`json fence follows the "${heading}" heading`);
  return JSON.parse(fence[1]) as T;
}
