import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { openApiPath } from '../../service/http/openapi.ts';

// Every answer the tests get from the service is checked against docs/openapi.yaml, so the
// document cannot drift from what the service does.

interface MediaType {
  schema?: unknown;
}
interface HeaderObject {
  required?: boolean;
  schema?: unknown;
  $ref?: string;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}
type Operation = { responses: Record<string, ResponseObject> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
};

const ID = 'urn:card-wallet-worker:openapi';
const doc = parse(readFileSync(openApiPath(), 'utf8')) as Document;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: ID, ...doc });
const validators = new Map<unknown, ValidateFunction>();

function validatorFor(schema: unknown): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    // Local refs (#/components/...) resolve inside the document registered under ID.
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${ID}#/`));
    validate = ajv.compile(rebased as object);
    validators.set(schema, validate);
  }
  return validate;
}

function resolve<T extends { $ref?: string }>(object: T): T {
  if (!object.$ref) return object;
  const parts = object.$ref.replace(/^#\//, '').split('/');
  let target: unknown = doc;
  for (const part of parts) target = (target as Record<string, unknown>)[part];
  return resolve(target as T);
}

export interface ContractResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** Throws when the answer is not one the document allows for this method and path. */
export function assertMatchesContract(method: string, url: string, res: ContractResponse): void {
  const upper = method.toUpperCase();
  // Preflights belong to CORS, not to the API.
  if (upper === 'OPTIONS') return;
  const path = new URL(url).pathname;
  const item = doc.paths[path];
  const where = `${upper} ${path} -> ${res.status}`;
  let response: ResponseObject | undefined;
  const malformed =
    (res.status === 400 || res.status === 431) &&
    (res.json as { error?: unknown })?.error === 'BadRequest';
  if (malformed) {
    response = doc.components.responses?.BadRequest as ResponseObject;
  } else if (!item) {
    response =
      res.status === 404
        ? (doc.components.responses?.NotFound as ResponseObject)
        : res.status === 403
          ? (doc.components.responses?.Forbidden as ResponseObject)
          : undefined;
  } else {
    const operation = item[upper === 'HEAD' ? 'get' : upper.toLowerCase()];
    if (!operation) {
      response =
        res.status === 405
          ? (doc.components.responses?.MethodNotAllowed as ResponseObject)
          : res.status === 403
            ? (doc.components.responses?.Forbidden as ResponseObject)
            : undefined;
    } else {
      response = operation.responses[String(res.status)];
    }
  }
  if (!response) throw new Error(`OpenAPI: ${where} is not documented`);
  response = resolve(response);

  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const definition = resolve(header);
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (definition.required) throw new Error(`OpenAPI: ${where} lacks header ${name}`);
      continue;
    }
    const validate = validatorFor(definition.schema ?? {});
    if (!validate(Array.isArray(value) ? value.join(', ') : value)) {
      throw new Error(`OpenAPI: ${where} header ${name}: ${ajv.errorsText(validate.errors)}`);
    }
  }

  if (upper === 'HEAD' || !response.content) return;
  const type =
    String(res.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() ?? '';
  const media = response.content[type];
  if (!media)
    throw new Error(`OpenAPI: ${where} has undocumented content type ${type || '(none)'}`);
  const body = type === 'application/json' ? res.json : res.text;
  const validate = validatorFor(media.schema ?? {});
  if (!validate(body)) {
    throw new Error(
      `OpenAPI: ${where} body ${res.text.slice(0, 200)}: ${ajv.errorsText(validate.errors)}`,
    );
  }
}
