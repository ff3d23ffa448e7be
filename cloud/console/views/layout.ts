import type { Operator } from '../../operators/operators.ts';
import type { Shop } from '../../shops/shops.ts';
import { html, type Html } from './html.ts';

export interface Flash {
  kind: 'done' | 'problem';
  text: string;
}

/** What every page of a logged-in operator is drawn with. */
export interface PageContext {
  operator: Operator;
  /** The shop the page is about, if any. */
  shop: Shop | null;
  /** Shops the operator sees (for the shop switcher). */
  shopCount: number;
  csrfToken: string;
  flash: Flash | null;
  /** The request's path, to mark the current page in the menu. */
  path: string;
  /** The cache-busting suffix of the stylesheet's URL. */
  assetVersion: string;
}

const ROLE_NAMES = { admin: 'provider admin', owner: 'shop owner', staff: 'staff' } as const;

export function roleName(operator: Operator): string {
  return ROLE_NAMES[operator.role];
}

/** A POST form's hidden CSRF token. */
export function csrfField(ctx: { csrfToken: string }): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}" />`;
}

export function flashBox(flash: Flash | null): Html {
  if (!flash) return html``;
  return html`<p
    class="flash flash-${flash.kind}"
    role="${flash.kind === 'problem' ? 'alert' : 'status'}"
  >
    ${flash.text}
  </p>`;
}

interface MenuItem {
  href: string;
  label: string;
}

/** The shop's pages this operator may open (staff: the day report only). */
export function shopMenu(operator: Operator, shop: Shop): MenuItem[] {
  const base = `/console/shops/${shop.id}`;
  if (operator.role === 'staff') return [{ href: `${base}/day`, label: 'Day report' }];
  return [
    { href: base, label: 'Today' },
    { href: `${base}/day`, label: 'Day report' },
    { href: `${base}/chart`, label: 'Takings' },
    { href: `${base}/tills`, label: 'Tills' },
    { href: `${base}/movements`, label: 'Movements' },
    { href: `${base}/cards`, label: 'Held & flagged' },
    { href: `${base}/card-accounts`, label: 'Cards' },
    { href: `${base}/card-rules`, label: 'Card rules' },
    { href: `${base}/keys`, label: 'Keys & prices' },
    { href: `${base}/settings`, label: 'Settings' },
    { href: `${base}/people`, label: 'People' },
    { href: `${base}/audit`, label: 'Audit log' },
  ];
}

function menu(ctx: PageContext): Html {
  if (!ctx.shop) return html``;
  const items = shopMenu(ctx.operator, ctx.shop);
  // The longest matching prefix is the current page (/shops/X/day/... is the day report).
  const current = items
    .filter((item) => ctx.path === item.href || ctx.path.startsWith(`${item.href}/`))
    .sort((a, b) => b.href.length - a.href.length)[0];
  return html`<nav class="shop-menu" aria-label="${ctx.shop.name}">
    <ul>
      ${items.map(
        (item) =>
          html`<li>
            <a href="${item.href}" ${item === current ? html`aria-current="page"` : ''}
              >${item.label}</a
            >
          </li>`,
      )}
    </ul>
  </nav>`;
}

/** Scripts and stylesheets a page loads besides console.css (all served by the ledger). */
export interface PageAssets {
  scripts?: readonly string[];
  styles?: readonly string[];
}

/** A whole page for a logged-in operator. */
export function page(ctx: PageContext, title: string, body: Html, assets: PageAssets = {}): Html {
  const shopsLink =
    ctx.operator.role === 'admin' || ctx.shopCount > 1
      ? html`<a href="/console/shops"
          >${ctx.operator.role === 'admin' ? 'All shops' : 'My shops'}</a
        >`
      : '';
  return document(
    title,
    ctx.assetVersion,
    html`<header class="top">
        <a class="brand" href="/console">Card Wallet <span>back office</span></a>
        ${ctx.shop ? html`<span class="shop-name">${ctx.shop.name}</span>` : ''}
        <div class="who">
          ${shopsLink}
          <a href="/console/account">${ctx.operator.name} (${roleName(ctx.operator)})</a>
          <form method="post" action="/console/logout" class="inline">
            ${csrfField(ctx)}
            <button type="submit" class="link">Log out</button>
          </form>
        </div>
      </header>
      ${menu(ctx)}
      <main id="main">
        <h1>${title}</h1>
        ${flashBox(ctx.flash)} ${body}
      </main>`,
    assets,
  );
}

/** The page shell: one stylesheet, no inline script or style (strict CSP). */
export function document(
  title: string,
  assetVersion: string,
  body: Html,
  { scripts = [], styles = [] }: PageAssets = {},
): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Card Wallet back office</title>
        ${styles.map((href) => html`<link rel="stylesheet" href="${href}?v=${assetVersion}" />`)}
        <link rel="stylesheet" href="/console/assets/console.css?v=${assetVersion}" />
        ${scripts.map((src) => html`<script src="${src}?v=${assetVersion}" defer></script>`)}
      </head>
      <body>
        <a class="skip" href="#main">Skip to the page</a>
        ${body}
      </body>
    </html>`;
}

/** A page for someone not logged in (the log-in and setup pages, errors before log-in). */
export function publicPage(
  title: string,
  assetVersion: string,
  body: Html,
  flash: Flash | null = null,
): Html {
  return document(
    title,
    assetVersion,
    html`<header class="top">
        <span class="brand">Card Wallet <span>back office</span></span>
      </header>
      <main id="main" class="narrow">
        <h1>${title}</h1>
        ${flashBox(flash)} ${body}
      </main>`,
  );
}
