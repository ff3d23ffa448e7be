// Writes client/src/api.ts from docs/openapi.yaml: the API's schemas as TypeScript types, and
// every operation's method, path, answer and error codes by status, so the client's typed
// errors come from the document and cannot drift from it (test/unit/client-types.test.ts
// fails when the committed file is not what this writes). Run: npm run client:types
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
export const API_TYPES_FILE = `${root}client/src/api.ts`;

interface Schema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  allOf?: Schema[];
  description?: string;
}
interface Response {
  $ref?: string;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  operationId: string;
  summary?: string;
  responses: Record<string, Response>;
}
interface Document {
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Response> };
}

/** The error schemas are folded into each operation's codes; the rest become types. */
const isErrorSchema = (name: string) => /Error(\d{3})?$/.test(name) && name !== 'ErrorDetail';

export async function generateApiTypes(yamlText: string): Promise<string> {
  const doc = parse(yamlText) as Document;
  const resolve = <T extends { $ref?: string }>(object: T): T => {
    if (!object.$ref) return object;
    const target = object.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, part) => (at as Record<string, unknown>)[part], doc);
    return resolve(target as T);
  };

  const typeOf = (schema: Schema): string => {
    if (schema.$ref) return schema.$ref.split('/').pop() as string;
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
    if (schema.oneOf) return schema.oneOf.map(typeOf).join(' | ');
    if (schema.allOf) return schema.allOf.map((part) => `(${typeOf(part)})`).join(' & ');
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    return types.map((type) => singleType(type, schema)).join(' | ');
  };
  const singleType = (type: string | undefined, schema: Schema): string => {
    switch (type) {
      case 'integer':
      case 'number':
        return 'number';
      case 'string':
        return 'string';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return `Array<${schema.items ? typeOf(schema.items) : 'unknown'}>`;
      case 'object': {
        const properties = Object.entries(schema.properties ?? {});
        if (properties.length === 0) return 'Record<string, unknown>';
        const required = new Set(schema.required ?? []);
        const fields = properties.map(
          ([name, property]) =>
            `${comment(property.description)}${name}${required.has(name) ? '' : '?'}: ${typeOf(property)};`,
        );
        return `{\n${fields.join('\n')}\n}`;
      }
      default:
        return 'unknown';
    }
  };

  const schemas = Object.entries(doc.components.schemas)
    .filter(([name]) => !isErrorSchema(name))
    .map(
      ([name, schema]) => `${comment(schema.description)}export type ${name} = ${typeOf(schema)};`,
    );

  const operations: string[] = [];
  const answers: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const errors: string[] = [];
      let answer = 'unknown';
      for (const [status, reference] of Object.entries(operation.responses)) {
        const response = resolve(reference);
        const json = response.content?.['application/json']?.schema;
        if (status.startsWith('2')) {
          answer = json
            ? typeOf(json)
            : response.content?.['text/event-stream']
              ? 'string'
              : 'unknown';
          continue;
        }
        const error = json ? resolve(json).properties?.error : undefined;
        const codes = error?.enum ?? (error?.const === undefined ? [] : [error.const]);
        errors.push(`${status}: ${JSON.stringify(codes)},`);
      }
      operations.push(
        `${comment(operation.summary)}${operation.operationId}: { method: '${method.toUpperCase()}', path: '${path}', errors: {\n${errors.join('\n')}\n} },`,
      );
      answers.push(`${operation.operationId}: ${answer};`);
    }
  }

  const text = `// Generated from docs/openapi.yaml by scripts/generate-client-types.ts (npm run client:types).
// Do not edit: test/unit/client-types.test.ts fails when this file and the document disagree.

/** The version of the API these types describe (the document's info.version). */
export const API_VERSION = ${JSON.stringify(doc.info.version)};

${schemas.join('\n\n')}

/** Every operation: its method and path, and its documented error codes by HTTP status. */
export const operations = {
${operations.join('\n')}
} as const;

/** What each operation answers with a 2xx. */
export interface Answers {
${answers.join('\n')}
}
`;
  return format(text, {
    parser: 'typescript',
    printWidth: 100,
    singleQuote: true,
    trailingComma: 'all',
  });
}

function comment(text: string | undefined): string {
  if (!text) return '';
  return `/** ${text
    .trim()
    .replace(/\s*\n\s*/g, ' ')
    .replaceAll('*/', '*\\/')} */\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const yamlText = readFileSync(`${root}docs/openapi.yaml`, 'utf8');
  writeFileSync(API_TYPES_FILE, await generateApiTypes(yamlText));
  process.stdout.write(`wrote ${API_TYPES_FILE}\n`);
}
