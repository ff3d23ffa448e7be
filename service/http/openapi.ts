import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * docs/openapi.yaml, the contract of the local API, found from this module whether it runs from
 * the sources (service/http), the build (dist/service/http) or an app bundle.
 */
export function openApiPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth += 1) {
    const candidate = join(dir, 'docs', 'openapi.yaml');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('docs/openapi.yaml not found');
}

let document: unknown;

/** The OpenAPI document as JSON (parsed once, on first use). */
export function openApiDocument(): unknown {
  document ??= parse(readFileSync(openApiPath(), 'utf8')) as unknown;
  return document;
}
