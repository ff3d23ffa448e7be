import { takingsByWeek, takingsOver, type TakingsDay } from '../../reports/takings-chart.ts';
import { euros, longDate } from './format.ts';
import { html, trusted, type Html } from './html.ts';

/** JSON inside a non-executed script element: `<` escaped so no `</script>` can end it. */
function jsonBlock(id: string, value: unknown): Html {
  return trusted(
    `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`,
  );
}

/** Past this many days the chart draws weeks: a bar a day would be too thin to read. */
const DAILY_BARS_UP_TO = 60;

/**
 * The takings chart (uPlot, drawn by /console/assets/takings-chart.js from the JSON in the
 * page): a bar a day, or a bar a week over longer spans; the days as a table for whoever
 * cannot see the chart or wants one day's figures.
 */
export function chartView(
  series: TakingsDay[],
  links: { days: number; other: string; otherDays: number; day: (date: string) => string },
  /** The shop's local date: a chart that ends on it shows its newest day or week "so far". */
  today: string,
): Html {
  const totals = takingsOver(series);
  const weekly = series.length > DAILY_BARS_UP_TO;
  const per = weekly ? 'week' : 'day';
  return html`<p class="lead" data-testid="takings-totals">
      ${longDate(totals.date)} to ${longDate(series[series.length - 1]?.date ?? '')}:
      ${euros(totals.taken)} taken, ${euros(totals.paidOut)} paid out, ${euros(totals.refunded)}
      refunded; net cash ${euros(totals.net)}.
      <a href="${links.other}">Show ${links.otherDays} days</a>
    </p>
    <figure class="chart">
      <div
        id="takings-chart"
        class="chart-area"
        role="img"
        aria-label="Euros taken, paid out, refunded and net cash per ${per}, ${links.days} days; the table below has the figures per day"
      ></div>
      <figcaption>
        Euros taken (bars), paid out and refunded (lines), and net cash (dashed line) per ${per}.
      </figcaption>
    </figure>
    ${jsonBlock('takings-data', { per, today, periods: weekly ? takingsByWeek(series) : series })}
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
