import type { DayReport } from '../../reports/day-report.ts';
import type { Shop } from '../../shops/shops.ts';
import type { Till } from '../../tills/tills.ts';
import { count, euros } from './format.ts';
import { html, type Html } from './html.ts';
import { cardRuleLines } from './day-report-card-lines.ts';
import { headline, tillTable } from './day-report.ts';
import { quietWarning, tillsGlance } from './tills.ts';

export function shopListView(shops: Shop[]): Html {
  if (shops.length === 0) {
    return html`<p>
      There is no shop yet. The provider adds shops with
      <code>card-wallet-cloud customer add</code>.
    </p>`;
  }
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Shops">
    <table data-testid="shops">
      <thead>
        <tr>
          <th scope="col">Shop</th>
          <th scope="col" class="num">Pool (credits)</th>
          <th scope="col" class="num">Credit cost</th>
          <th scope="col">Time zone</th>
        </tr>
      </thead>
      <tbody>
        ${shops.map(
          (shop) =>
            html`<tr>
              <th scope="row"><a href="/console/shops/${shop.id}">${shop.name}</a></th>
              <td class="num">${count(shop.credits)}</td>
              <td class="num">${euros(shop.creditCost)}</td>
              <td>${shop.timeZone}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function shopOverview(
  shop: Shop,
  today: DayReport,
  tills: Till[],
  held: { held: number; flagged: number },
  now: Date,
): Html {
  const base = `/console/shops/${shop.id}`;
  return html`${quietWarning(tills, shop.tillQuietMinutes, shop.id)}
    <p class="lead">
      So far today (${today.date}, ${shop.timeZone}).
      <a href="${base}/day">The full day report</a>
    </p>
    ${headline(today.totals)} ${tillTable(today)} ${cardRuleLines(today.totals)}
    <h2>Tills</h2>
    ${tillsGlance(tills, now, shop.timeZone)}
    <h2>The shop</h2>
    <dl class="facts">
      <dt>Credits in the pool</dt>
      <dd data-testid="pool">${count(shop.credits)}</dd>
      <dt>Credit cost</dt>
      <dd>${euros(shop.creditCost)}</dd>
      <dt>Pending movements</dt>
      <dd data-testid="pending-movements">
        <a href="${base}/cards"
          >${
            held.held === 0
              ? 'none holds a card'
              : `${count(held.held)} ${held.held === 1 ? 'holds its card' : 'hold their cards'}`
          }</a
        >: a till settles each when the card is back on a reader; decide one without its card only
        when the card will not come back.
      </dd>
      <dt>Flagged cards</dt>
      <dd><a href="${base}/cards">${held.flagged}</a></dd>
    </dl>`;
}
