/**
 * A browser-like client for the back office over real HTTP: a cookie jar (the session, CSRF
 * and device cookies as the ledger sets them), form posts with the page's CSRF token, and
 * redirects left for the test to see.
 */
import { Agent, fetch } from 'undici';

const noKeepAlive = new Agent({ pipelining: 0 });

export interface Page {
  status: number;
  location: string | null;
  text: string;
  headers: Headers;
  /** Set-Cookie headers of this answer, as sent. */
  setCookies: string[];
}

export class ConsoleClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async request(
    method: 'GET' | 'POST',
    path: string,
    {
      form,
      headers = {},
    }: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Page> {
    const sent: Record<string, string> = { ...headers };
    if (this.cookies.size > 0) {
      sent.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    let body: string | undefined;
    if (form) {
      sent['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: sent,
      body,
      redirect: 'manual',
      dispatcher: noKeepAlive,
    });
    const setCookies = response.headers.getSetCookie();
    for (const cookie of setCookies) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      location: response.headers.get('location'),
      text: await response.text(),
      headers: response.headers,
      setCookies,
    };
  }

  get(path: string, headers?: Record<string, string>): Promise<Page> {
    return this.request('GET', path, { headers });
  }

  /** Posts a form with the CSRF token of the page at `from` (or the one given). */
  async post(
    path: string,
    form: Record<string, string>,
    { from, csrf }: { from?: string; csrf?: string } = {},
  ): Promise<Page> {
    const token = csrf ?? (from ? csrfOf(await this.get(from)) : undefined);
    return this.request('POST', path, {
      form: token === undefined ? form : { _csrf: token, ...form },
    });
  }

  async logIn(login: string, password: string): Promise<Page> {
    const page = await this.post('/console/login', { login, password }, { from: '/console/login' });
    if (page.status !== 303)
      throw new Error(`log-in refused: ${page.status} ${page.text.slice(0, 300)}`);
    return page;
  }
}

/** The CSRF token of a page's first form. */
export function csrfOf(page: Page): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (!token)
    throw new Error(`no CSRF token on the page (${page.status}): ${page.text.slice(0, 300)}`);
  return token;
}

/** The text of a page without its markup, spaces collapsed (for "the page says ..."). */
export function textOf(page: Page): string {
  return page.text
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}
