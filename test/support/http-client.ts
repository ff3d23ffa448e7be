import { request } from 'node:http';
import { assertMatchesContract } from './openapi-contract.ts';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** Status and body of an answer, for assertion messages: a failing test says what came back. */
export function shown(res: HttpResponse): string {
  return `${res.status} ${res.text}`;
}

export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send no Host header at all (node:http adds one unless told not to). */
  omitHost?: boolean;
  /** Check the answer against docs/openapi.yaml (default true: every worker answer is). */
  contract?: boolean;
}

/**
 * A raw HTTP/1.1 call with exactly the headers given: unlike fetch, it can send any Host (or
 * none), Origin or Content-Type, which the security tests need. Every answer is checked
 * against docs/openapi.yaml unless `contract: false`.
 */
export function httpRequest(url: string, options: HttpRequestOptions = {}): Promise<HttpResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers,
        setHost: !options.omitHost && options.headers?.Host === undefined,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const response = { status: res.statusCode ?? 0, headers: res.headers, text, json };
          try {
            if (options.contract !== false) {
              assertMatchesContract(options.method ?? 'GET', url, response);
            }
          } catch (error) {
            reject(error);
            return;
          }
          resolve(response);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<HttpResponse>;

/**
 * Calls to a service's API with one key: a JSON body (a string is sent as is, for malformed
 * ones) with its Content-Type, extra headers on top. `baseUrl` is read per call (a service may
 * move or restart).
 */
export function apiCaller(baseUrl: () => string, apiKey: string): ApiCall {
  return (method, path, body, headers = {}) =>
    httpRequest(`${baseUrl()}${path}`, {
      method,
      headers: {
        'X-Api-Key': apiKey,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
}

/**
 * A money answer without its receipt (`movementId`, `occurredAt`, `reference`), for tests
 * that check the spec's fields; anything else is given back as it is.
 */
export function withoutReceipt(answer: unknown): unknown {
  if (typeof answer !== 'object' || answer === null || !('movementId' in answer)) return answer;
  const { movementId, occurredAt, reference, ...spec } = answer as Record<string, unknown>;
  void [movementId, occurredAt, reference];
  return spec;
}
