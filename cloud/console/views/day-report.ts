import {
  cardRuleTotal,
  type CardRuleCounts,
  type DayReport,
  type DayTotals,
  type ListedMovement,
} from '../../reports/day-report.ts';
import { cardRuleLines } from './day-report-card-lines.ts';
import { count, euros, localTime, longDate, tillName } from './format.ts';
import { html, type Html } from './html.ts';
import { movementTable } from './movements.ts';
import { emptyRow } from './table.ts';

function tillLabel(name: string | null, id: string | null): string {
  return id === null ? (name ?? 'no till (before tills were named)') : tillName(name, id);
}

/** The four figures a shop owner looks for first. */
export function headline(totals: DayTotals): Html {
  return html`<dl class="figures">
    <div>
      <dt>Euros taken</dt>
      <dd data-figure="taken">${euros(totals.eurosTaken)}</dd>
    </div>
    <div>
      <dt>Paid out</dt>
      <dd data-figure="paid-out">${euros(totals.eurosPaidOut)}</dd>
    </div>
    <div>
      <dt>Refunded</dt>
      <dd data-figure="refunded">${euros(totals.eurosRefunded)}</dd>
    </div>
    <div class="net">
      <dt>Net cash expected</dt>
      <dd data-figure="net">${euros(totals.netCashExpected)}</dd>
    </div>
  </dl>`;
}

function tallyCells(t: { count: number; credits: number; euros: string }): Html {
  return html`<td class="num">${count(t.count)}</td>
    <td class="num">${count(t.credits)}</td>
    <td class="num">${euros(t.euros)}</td>`;
}

/** Per till: the cash each till should hold first, then its recharges, payouts, compensations. */
export function tillTable(report: DayReport): Html {
  // Refunds (and corrections) have a column on the days they happened, so each row adds up.
  const refunds = report.totals.eurosRefunded !== '0.00';
  const row = (label: Html | string, totals: DayTotals, total = false) =>
    html`<tr class="${total ? 'total' : ''}">
      <th scope="row">${label}</th>
      <td class="num net-cash">${euros(totals.netCashExpected)}</td>
      ${tallyCells(totals.recharges)} ${tallyCells(totals.payouts)}
      ${refunds ? html`<td class="num">${euros(totals.eurosRefunded)}</td>` : ''}
      <td class="num">${count(compensationCount(totals))}</td>
    </tr>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Figures by till">
    <table class="figures-table" data-testid="till-table">
      <caption>
        By till
      </caption>
      <thead>
        <tr>
          <th scope="col" rowspan="2">Till</th>
          <th scope="col" rowspan="2">Net cash</th>
          <th scope="colgroup" colspan="3">Recharges</th>
          <th scope="colgroup" colspan="3">Payouts</th>
          ${refunds ? html`<th scope="col" rowspan="2">Refunded</th>` : ''}
          <th scope="col" rowspan="2">Compen&shy;sations</th>
        </tr>
        <tr>
          <th scope="col">count</th>
          <th scope="col">credits</th>
          <th scope="col">euros</th>
          <th scope="col">count</th>
          <th scope="col">credits</th>
          <th scope="col">euros</th>
        </tr>
      </thead>
      <tbody>
        ${report.tills.map((till) => row(tillLabel(till.tillName, till.tillId), till.totals))}
        ${report.tills.length === 0 ? emptyRow(refunds ? 10 : 9, 'Nothing was sold or paid out this day.') : ''}
      </tbody>
      <tfoot>
        ${row('All tills', report.totals, true)}
      </tfoot>
    </table>
  </div>`;
}

/** Every compensation of the day, whatever it set right. */
function compensationCount(totals: DayTotals): number {
  const { recharges, payouts, redone, undone } = totals.compensations;
  return recharges.count + payouts.count + cardRuleTotal(redone) + cardRuleTotal(undone);
}

const CARD_RULE_NOUNS: Record<keyof CardRuleCounts, [string, string]> = {
  refunds: ['refund', 'refunds'],
  corrections: ['correction', 'corrections'],
  replacements: ['replacement pickup', 'replacement pickups'],
  blockClears: ['blocked card emptied', 'blocked cards emptied'],
};

/** "1 refund redone: …" per kind with any; the line the kind counts in says the rest. */
function cardRuleCompensationItems(counts: CardRuleCounts, what: string): Html[] {
  return (Object.keys(CARD_RULE_NOUNS) as (keyof CardRuleCounts)[])
    .filter((kind) => counts[kind] > 0)
    .map((kind) => {
      const [one, many] = CARD_RULE_NOUNS[kind];
      return html`<li data-compensation="${what}-${kind}">
        ${count(counts[kind])} ${counts[kind] === 1 ? one : many} ${what}
      </li>`;
    });
}

function compensationsNote(totals: DayTotals): Html {
  const { recharges, payouts, redone, undone } = totals.compensations;
  if (compensationCount(totals) === 0) return html``;
  const cardRules = cardRuleTotal(redone) + cardRuleTotal(undone) > 0;
  return html`<section aria-labelledby="compensations">
    <h2 id="compensations">Compensations</h2>
    <p>
      Where a card and the ledger disagreed, a till set the books right. They are counted in the
      figures above the way they move money:
    </p>
    <ul>
      ${
        recharges.count > 0
          ? html`<li>
              ${count(recharges.count)} as recharges: ${count(recharges.credits)} credits,
              ${euros(recharges.euros)} taken
            </li>`
          : ''
      }
      ${
        payouts.count > 0
          ? html`<li>
              ${count(payouts.count)} as payouts: ${count(payouts.credits)} credits,
              ${euros(payouts.euros)} paid out
            </li>`
          : ''
      }
      ${cardRuleCompensationItems(redone, 'redone')} ${cardRuleCompensationItems(undone, 'undone')}
    </ul>
    ${
      cardRules
        ? html`<p class="hint">
            <em>Redone</em>: the ledger had voided it but its card held it, so it counts after all.
            <em>Undone</em>: the ledger had posted it but its card did not hold it, so it is taken
            away again (a refund undone is no refund). The lines of their kinds below count them so
            already.
          </p>`
        : ''
    }
  </section>`;
}

/**
 * Today's float sales the ledger has not heard of yet, as each till's last heartbeat said: their
 * cash is in the drawer already, and they join the figures above once reported. Only today's
 * report has them (a heartbeat tells how things stand when it is sent, not at a past day's end).
 */
export function floatNotReportedSection(report: DayReport): Html {
  const float = report.floatRechargesNotReported;
  if (float === null) return html``;
  const intro = html`<p>
    Tills sell from their float and report those sales to the ledger in batches. Until a sale is
    reported it is in no figure above, though its cash is in the drawer. As each till said in its
    last heartbeat:
  </p>`;
  if (float.tills.length === 0) {
    return html`<section aria-labelledby="float-not-reported">
      <h2 id="float-not-reported">Float sales not reported yet</h2>
      <p data-testid="float-not-reported">
        None: every till has reported its float sales, as of its last heartbeat.
      </p>
    </section>`;
  }
  const zone = report.shop.timeZone;
  return html`<section aria-labelledby="float-not-reported">
    <h2 id="float-not-reported">Float sales not reported yet</h2>
    ${intro}
    <div class="table-wrap" tabindex="0" role="region" aria-label="Float sales not reported yet">
      <table data-testid="float-not-reported">
        <thead>
          <tr>
            <th scope="col">Till</th>
            <th scope="col" class="num">Sales</th>
            <th scope="col" class="num">Credits</th>
            <th scope="col">As of</th>
          </tr>
        </thead>
        <tbody>
          ${float.tills.map(
            (till) =>
              html`<tr>
                <th scope="row">${tillLabel(till.tillName, till.tillId)}</th>
                <td class="num">${count(till.movements)}</td>
                <td class="num">${count(till.credits)}</td>
                <td>${localTime(till.asOf, zone)}</td>
              </tr>`,
          )}
        </tbody>
        <tfoot>
          <tr class="total">
            <th scope="row">All tills</th>
            <td class="num">${count(float.movements)}</td>
            <td class="num">${count(float.credits)}</td>
            <td></td>
          </tr>
        </tfoot>
      </table>
    </div>
  </section>`;
}

export function movementList(
  title: string,
  id: string,
  movements: ListedMovement[],
  shop: { id: string; timeZone: string },
): Html {
  if (movements.length === 0) return html``;
  return html`<section aria-labelledby="${id}">
    <h2 id="${id}">${title}</h2>
    ${movementTable(
      shop,
      movements.map((movement) => ({
        movement,
        till: tillLabel(movement.tillName, movement.tillId),
      })),
      { label: title, testId: id, empty: '' },
    )}
  </section>`;
}

export function dayReportView(
  report: DayReport,
  links: {
    previous: string;
    next: string | null;
    csv: string;
    shopId: string;
    chart: string | null;
  },
): Html {
  const shop = { id: links.shopId, timeZone: report.shop.timeZone };
  const hoursNote =
    report.hours === 24
      ? ''
      : html`<p class="note">
          This day had ${report.hours} hours: the clocks
          ${report.hours === 23 ? 'went forward' : 'went back'} in ${report.shop.timeZone}.
        </p>`;
  return html`<form method="get" class="day-picker">
      <a href="${links.previous}" rel="prev">← Day before</a>
      <label
        >Day <input type="date" name="date" value="${report.date}" required min="2000-01-01"
      /></label>
      <button type="submit">Show</button>
      ${links.next ? html`<a href="${links.next}" rel="next">Day after →</a>` : ''}
    </form>
    <p class="lead">
      ${longDate(report.date)} in ${report.shop.timeZone}: movements whose card was written from
      ${localTime(report.from, report.shop.timeZone)} to
      ${localTime(report.to, report.shop.timeZone)}.
    </p>
    ${hoursNote} ${headline(report.totals)} ${tillTable(report)} ${compensationsNote(report.totals)}
    ${floatNotReportedSection(report)} ${cardRuleLines(report.totals)}
    <p class="actions">
      <a class="button" href="${links.csv}" download>Download CSV</a>
      ${links.chart ? html`<a href="${links.chart}">Daily takings chart</a>` : ''}
    </p>
    ${movementList('Still pending (not counted)', 'pending', report.pending, shop)}
    ${movementList('Voided (not counted)', 'voided', report.voided, shop)}`;
}
