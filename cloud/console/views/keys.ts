import type { ListedKey } from '../../admin.ts';
import type { Shop } from '../../shops/shops.ts';
import { count, euros, localTime } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

const reasonField = (placeholder: string) =>
  html`<label
    >Why (required, goes in the audit log)
    <input name="reason" required maxlength="500" placeholder="${placeholder}"
  /></label>`;

export function keysView(
  ctx: { csrfToken: string },
  shop: Shop,
  keys: ListedKey[],
  unassigned: ListedKey[] | null,
  provider: boolean,
): Html {
  const base = `/console/shops/${shop.id}`;
  return html`<section aria-labelledby="keys">
      <h2 id="keys">API keys</h2>
      <p class="lead">
        The tills' POS send one of these in <code>X-Api-Key</code>. The ledger keeps only a hash of
        each key, so a key is named here by its fingerprint (the tray shows the same) and shown in
        full only once, when it is issued.
      </p>
      <div class="table-wrap" tabindex="0" role="region" aria-label="API keys">
        <table data-testid="keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Issued</th>
              <th scope="col">State</th>
              <th scope="col">Revoke</th>
            </tr>
          </thead>
          <tbody>
            ${keys.map(
              (key) =>
                html`<tr>
                  <th scope="row"><code>${key.fingerprint}</code></th>
                  <td>${localTime(key.createdAt, shop.timeZone)}</td>
                  <td>
                    ${
                      key.revokedAt
                        ? html`<span class="badge badge-bad"
                            >revoked ${localTime(key.revokedAt, shop.timeZone)}</span
                          >`
                        : html`<span class="badge badge-good">in use</span>`
                    }
                  </td>
                  <td>
                    ${
                      key.revokedAt
                        ? ''
                        : html`<form method="post" action="${base}/keys/revoke" class="row">
                            ${csrfField(ctx)}
                            <input type="hidden" name="key" value="${key.hash}" />
                            <label
                              >Why
                              <input
                                name="reason"
                                required
                                maxlength="500"
                                aria-label="Why revoke key ${key.fingerprint}"
                                placeholder="till replaced"
                            /></label>
                            <button
                              type="submit"
                              class="danger"
                              aria-label="Revoke key ${key.fingerprint}"
                            >
                              Revoke
                            </button>
                          </form>`
                    }
                  </td>
                </tr>`,
            )}
            ${
              keys.length === 0
                ? html`<tr>
                    <td colspan="4" class="empty">This shop has no key.</td>
                  </tr>`
                : ''
            }
          </tbody>
        </table>
      </div>
      <form method="post" action="${base}/keys/issue" class="card row">
        ${csrfField(ctx)} ${reasonField('a new till at the counter')}
        <button type="submit">Issue a new key</button>
      </form>
      ${
        provider && unassigned
          ? html`<form method="post" action="${base}/keys/assign" class="card row">
              ${csrfField(ctx)}
              <label
                >A key issued to no shop yet
                <select name="key" required>
                  ${unassigned.map((key) => html`<option value="${key.hash}">${key.fingerprint}</option>`)}
                </select></label
              >
              ${reasonField('the shop’s till uses this key')}
              <button type="submit" ${unassigned.length === 0 ? html`disabled` : ''}>
                Assign to this shop
              </button>
            </form>`
          : ''
      }
    </section>
    <section aria-labelledby="price">
      <h2 id="price">Price of a credit</h2>
      <form method="post" action="${base}/credit-cost" class="card row">
        ${csrfField(ctx)}
        <label
          >Euros per credit (now ${euros(shop.creditCost)})
          <input
            name="creditCost"
            required
            inputmode="decimal"
            pattern="[0-9]{1,8}([.][0-9]{1,4})?"
            value="${shop.creditCost}"
        /></label>
        <label>Why (optional) <input name="reason" maxlength="500" /></label>
        <button type="submit" class="secondary">Set the price</button>
      </form>
    </section>
    <section aria-labelledby="pool">
      <h2 id="pool">The shop's pool</h2>
      <p>
        <strong data-testid="pool">${count(shop.credits)}</strong> credits that the tills can put on
        cards. ${provider ? '' : 'Top-ups come from your provider.'}
      </p>
      ${
        provider
          ? html`<form method="post" action="${base}/pool/top-up" class="card row">
              ${csrfField(ctx)}
              <label
                >Credits to add
                <input name="credits" required inputmode="numeric" pattern="[0-9]{1,12}"
              /></label>
              ${reasonField('invoice 2026-041 paid')}
              <button type="submit">Top up</button>
            </form>`
          : ''
      }
    </section>`;
}

export function newKeyView(shopId: string, apiKey: string, fingerprint: string): Html {
  return html`<p class="flash flash-done" role="status">
      A new key (<code>${fingerprint}</code>) is issued. Copy it now: it is not shown again.
    </p>
    <code class="secret" data-testid="new-key">${apiKey}</code>
    <p>Enter it in the till's settings (<strong>API key</strong>) and in its POS.</p>
    <p><a class="button" href="/console/shops/${shopId}/keys">Done</a></p>`;
}
