/** A tiny HTTP client for the ledger tests: every answer as { status, body } (JSON parsed). */
import { Agent, fetch } from 'undici';

/**
 * A connection per request. With keep-alive, a POST sent on an idle connection just as the
 * ledger closes it (its keepAliveTimeout, 5 s) fails with "other side closed", and undici
 * retries only idempotent methods: on a busy machine the gaps between a test's steps reach those
 * 5 s. The ledger's own answers are what these tests are about, not connection reuse.
 */
const noKeepAlive = new Agent({ pipelining: 0 });

export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  contentType: string | null;
  etag?: string | null;
}

export interface CallOptions {
  apiKey?: string;
  body?: unknown;
  /** A raw body sent as is (with its own content type). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body, dispatcher: noKeepAlive });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return {
    status: response.status,
    body: parsed,
    contentType: response.headers.get('content-type'),
    etag: response.headers.get('etag'),
  };
}

/** Calls bound to one ledger URL and one API key. */
export class LedgerClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  withKey(apiKey: string | undefined): LedgerClient {
    return new LedgerClient(this.baseUrl, apiKey);
  }

  get(path: string, options: CallOptions = {}): Promise<Answer> {
    return call('GET', `${this.baseUrl}${path}`, { apiKey: this.apiKey, ...options });
  }

  post(path: string, body?: unknown, options: CallOptions = {}): Promise<Answer> {
    return call('POST', `${this.baseUrl}${path}`, { apiKey: this.apiKey, body, ...options });
  }

  customer(): Promise<Answer> {
    return this.get('/v1/customer');
  }

  create(movement: Record<string, unknown>): Promise<Answer> {
    return this.post('/v1/movements', movement);
  }

  /** A post or void, with the resolving till and its evidence when given. */
  resolve(
    id: string,
    action: 'post' | 'void',
    by?: { tillId?: string; evidence?: string; occurredAt?: unknown },
  ): Promise<Answer> {
    return this.post(`/v1/movements/${id}/${action}`, by);
  }

  movement(id: string): Promise<Answer> {
    return this.get(`/v1/movements/${id}`);
  }
}
