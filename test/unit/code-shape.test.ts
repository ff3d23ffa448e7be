import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The project's rules on the shape of its code (README, "Development"): the money engine's
// files stay under 300 lines, and no import cycle joins any files of the deployables (two files
// that import each other, or a longer ring), type-only imports included.
const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [normalize(path)] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/g;

/** Each file's relative imports, as paths from the root. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((match) =>
      normalize(join(dirname(file), match[1] as string)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Every cycle the depth-first search closes, as a path of files. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

test('when the money engine is measured, then every file of service/wallet/ is under 300 lines', () => {
  const long = sourceFiles('service/wallet')
    .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length }))
    .filter(({ lines }) => lines >= 300)
    .map(({ file, lines }) => `${relative(root, join(root, file))}: ${lines} lines`);
  assert.deepEqual(long, []);
});

test('when the imports of common/, service/ and cloud/ are followed, then no cycle joins any files', () => {
  const graph = importGraph([
    ...sourceFiles('common'),
    ...sourceFiles('service'),
    ...sourceFiles('cloud'),
  ]);
  assert.ok(graph.size > 100, `only ${graph.size} files found`);
  assert.deepEqual(
    cycles(graph).map((cycle) => cycle.join(' -> ')),
    [],
  );
});
