// The error codes integrators see are listed in three places that must agree: the integrator
// guide's table (docs/integrators.md), the OpenAPI document (each operation's codes by
// status), and the service's one error table (service/errors.ts). A code added to one and not
// the others, or given another status, fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { AppError } from '../../service/errors.ts';
import { errors, SETTINGS_ONLY_CODES } from '../../service/errors.ts';
import { openApiPath } from '../../service/http/openapi.ts';

type Statuses = Map<string, Set<number>>;

function add(table: Statuses, code: string, status: number): void {
  table.set(code, (table.get(code) ?? new Set()).add(status));
}

function sorted(table: Statuses): Record<string, number[]> {
  return Object.fromEntries(
    [...table.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([code, statuses]) => [code, [...statuses].sort()]),
  );
}

/** The guide's table: a row's statuses hold for each code of the row. */
function guideTable(): Statuses {
  const guide = readFileSync(
    fileURLToPath(new URL('../../docs/integrators.md', import.meta.url)),
    'utf8',
  );
  const section = guide.slice(guide.indexOf('## Errors and what to do next'));
  const rows = section.slice(0, section.indexOf('\n\n', section.indexOf('| status'))).split('\n');
  const table: Statuses = new Map();
  for (const row of rows.filter((line) => /^\| \d/.test(line))) {
    const [statuses = '', codes = ''] = row.split('|').slice(1);
    for (const code of codes.matchAll(/`([^`]+)`/g)) {
      for (const status of statuses.split(',')) add(table, code[1] as string, Number(status));
    }
  }
  return table;
}

interface Schema {
  $ref?: string;
  properties?: { error?: { enum?: string[] } };
}

/** Every code the OpenAPI document gives any operation, with the statuses it comes with. */
function openApiTable(): Statuses {
  const doc = parse(readFileSync(openApiPath(), 'utf8')) as {
    paths: Record<
      string,
      Record<
        string,
        { responses: Record<string, Schema & { content?: Record<string, { schema: Schema }> }> }
      >
    >;
  };
  const resolve = <T extends { $ref?: string }>(object: T): T =>
    object.$ref
      ? resolve(
          object.$ref
            .slice(2)
            .split('/')
            .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], doc) as T,
        )
      : object;
  const table: Statuses = new Map();
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, reference] of Object.entries(operation.responses)) {
        const schema = resolve(reference).content?.['application/json']?.schema;
        if (Number(status) < 400 || !schema) continue;
        const codes = resolve(schema).properties?.error?.enum;
        assert.ok(codes, `a ${status} without its codes`);
        for (const code of codes) add(table, code, Number(status));
      }
    }
  }
  return table;
}

/** The service's error table, and what common/listen.ts answers before the app sees a request. */
function codeTable(): Statuses {
  const table: Statuses = new Map();
  for (const make of Object.values(errors) as ((...args: unknown[]) => AppError)[]) {
    const error = make();
    if (!SETTINGS_ONLY_CODES.includes(error.code)) add(table, error.code, error.status);
  }
  add(table, 'BadRequest', 400);
  add(table, 'BadRequest', 431);
  return table;
}

test('when the guide, the OpenAPI document and the service list their error codes, then they list the same codes', () => {
  const [guide, openApi, code] = [guideTable(), openApiTable(), codeTable()];
  assert.deepEqual([...openApi.keys()].sort(), [...guide.keys()].sort(), 'OpenAPI vs guide');
  assert.deepEqual([...code.keys()].sort(), [...guide.keys()].sort(), 'service vs guide');
});

test("when a code's statuses are compared, then the guide gives each code the statuses the OpenAPI document and the service give it", () => {
  const [guide, openApi, code] = [guideTable(), openApiTable(), codeTable()];
  const documented: Statuses = new Map();
  for (const table of [openApi, code]) {
    for (const [name, statuses] of table)
      for (const status of statuses) add(documented, name, status);
  }
  assert.deepEqual(sorted(guide), sorted(documented));
});
