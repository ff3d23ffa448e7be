import { formatDecimal, parseStoredDecimal } from '../../../common/decimal.ts';
import type { TakingsDay } from '../../reports/takings-chart.ts';
import { euros, longDate } from './format.ts';
import { html, trusted, type Html } from './html.ts';

/** JSON inside a non-executed script element: `<` escaped so no `</script>` can end it. */
function jsonBlock(id: string, value: unknown): Html {
  return trusted(
    `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`,
  );
}

/**
 * The daily takings chart (uPlot, drawn by /console/assets/takings-chart.js from the JSON in
 * the page) with the same figures as a table for whoever cannot see the chart.
 */
export function chartView(
  series: TakingsDay[],
  links: { days: number; other: string; otherDays: number; day: (date: string) => string },
): Html {
  const first = series[0]?.date ?? '';
  const last = series[series.length - 1]?.date ?? '';
  let taken = 0n;
  let paid = 0n;
  let refunded = 0n;
  for (const day of series) {
    taken += parseStoredDecimal(day.taken);
    paid += parseStoredDecimal(day.paidOut);
    refunded += parseStoredDecimal(day.refunded);
  }
  const total = formatDecimal;
  return html`<p class="lead" data-testid="takings-totals">
      ${longDate(first)} to ${longDate(last)}: ${euros(total(taken))} taken, ${euros(total(paid))}
      paid out, ${euros(total(refunded))} refunded; net cash
      ${euros(total(taken - paid - refunded))}.
      <a href="${links.other}">Show ${links.otherDays} days</a>
    </p>
    <figure class="chart">
      <div
        id="takings-chart"
        class="chart-area"
        role="img"
        aria-label="Euros taken, paid out, refunded and net cash per day, ${links.days} days; the table below has the same figures"
      ></div>
      <figcaption>
        Euros taken (bars), paid out and refunded (lines), and net cash (dashed line) per day.
      </figcaption>
    </figure>
    ${jsonBlock('takings-data', series)}
    <details>
      <summary>The figures as a table</summary>
      <div class="table-wrap" tabindex="0" role="region" aria-label="Takings per day">
        <table data-testid="takings-table">
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col" class="num">Taken</th>
              <th scope="col" class="num">Paid out</th>
              <th scope="col" class="num">Refunded</th>
              <th scope="col" class="num">Net cash</th>
              <th scope="col" class="num">Movements</th>
            </tr>
          </thead>
          <tbody>
            ${[...series].reverse().map(
              (day) =>
                html`<tr>
                  <td><a href="${links.day(day.date)}">${day.date}</a></td>
                  <td class="num">${euros(day.taken)}</td>
                  <td class="num">${euros(day.paidOut)}</td>
                  <td class="num">${euros(day.refunded)}</td>
                  <td class="num">${euros(day.net)}</td>
                  <td class="num">${day.movements}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>`;
}
