import type { DayTotals, Tally } from '../../reports/day-report.ts';
import { count, euros } from './format.ts';
import { html, type Html } from './html.ts';

/** "2 refunds: 54 credits, €25.00". */
function tallyText(tally: Tally, noun: string): string {
  const plural = tally.count === 1 ? '' : 's';
  return `${count(tally.count)} ${noun}${plural}: ${count(tally.credits)} credits, ${euros(tally.euros)}`;
}

/**
 * The day report's lines of the shop's card rules: refunds and corrections (euros given back,
 * counted in the net cash), bonus credits given and forfeited, replacements picked up and
 * blocked cards emptied (no cash). Shown when the day has any.
 */
export function cardRuleLines(totals: DayTotals): Html {
  const { refunds, corrections, replacements } = totals;
  const rows: Html[] = [];
  const line = (name: string, figure: string, value: string, note: string) =>
    html`<dt>${name}</dt>
      <dd>
        <span data-figure="${figure}">${value}</span>
        <span class="hint">${note}</span>
      </dd>`;
  if (refunds.count > 0) {
    rows.push(
      line(
        'Refunds',
        'refunds',
        tallyText(refunds, 'refund'),
        'cashiers undid a recharge and gave the euros back',
      ),
    );
  }
  if (corrections.count > 0) {
    rows.push(
      line(
        'Corrections',
        'corrections',
        tallyText(corrections, 'correction'),
        'an operator took back part of a recharge; a till applied it and gave the euros back',
      ),
    );
  }
  if (totals.bonusGiven > 0) {
    rows.push(
      line(
        'Bonus given',
        'bonus-given',
        `${count(totals.bonusGiven)} credits`,
        'free credits the bonus tiers added to recharges (from the pool, no cash)',
      ),
    );
  }
  if (totals.bonusForfeited > 0) {
    rows.push(
      line(
        'Bonus forfeited',
        'bonus-forfeited',
        `${count(totals.bonusForfeited)} credits`,
        'bonus credits that payouts took off cards without paying them out (back to the pool)',
      ),
    );
  }
  if (replacements.count > 0) {
    rows.push(
      line(
        'Replacements',
        'replacements',
        `${count(replacements.count)} replacement${replacements.count === 1 ? '' : 's'}: ${count(replacements.credits)} credits`,
        'lost cards’ accounts picked up by their new cards (no cash)',
      ),
    );
  }
  if (totals.blockClears > 0) {
    rows.push(
      line(
        'Blocked cards emptied',
        'block-clears',
        `${count(totals.blockClears)}`,
        'a blocked card was presented at a till and emptied (no cash)',
      ),
    );
  }
  if (rows.length === 0) return html``;
  return html`<section aria-labelledby="card-rules-lines">
    <h2 id="card-rules-lines">Refunds, corrections and bonuses</h2>
    <p>
      Refunds and corrections are the euros in <em>Refunded</em> above, taken off the net cash.
      Bonus credits cost no cash.
    </p>
    <dl class="facts card" data-testid="card-rule-lines">${rows}</dl>
  </section>`;
}
