import { MAX_BONUS_TIERS } from '../../../common/bonus-tiers.ts';
import type { BonusTier, CardRules } from '../../../common/ledger-contract.ts';
import type { BlocklistKey } from '../../cards/blocklist-feed.ts';
import type { TierRow } from '../schemas/cards.ts';
import { euros } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

/** The rows a form shows for tiers: one per tier, then blank ones, 10 in all. */
export function tierRowsFor(tiers: readonly TierRow[] | readonly BonusTier[]): TierRow[] {
  const rows = tiers.map((tier) =>
    'amount' in tier
      ? tier
      : {
          amount: tier.minAmount,
          bonus:
            tier.bonusCredits !== undefined
              ? String(tier.bonusCredits)
              : `${percentText(tier.bonusPercent)}%`,
        },
  );
  const shown = Math.min(MAX_BONUS_TIERS, Math.max(rows.length, tiers.length + BLANK_ROWS));
  while (rows.length < shown) rows.push({ amount: '', bonus: '' });
  return rows;
}

/** Blank rows a form shows after the tiers, for new ones (10 rows at most in all). */
const BLANK_ROWS = 3;

/** "10.00" -> "10", "12.50" -> "12.5". */
function percentText(percent: string | undefined): string {
  return (percent ?? '0').replace(/\.?0+$/, '');
}

/** A tier as an owner reads it: "from €20.00 paid: +2 credits". */
function tierText(tier: BonusTier): string {
  const bonus =
    tier.bonusCredits !== undefined
      ? `+${tier.bonusCredits} credit${tier.bonusCredits === 1 ? '' : 's'}`
      : `+${percentText(tier.bonusPercent)}% of the credits paid for`;
  return `from ${euros(tier.minAmount)} paid: ${bonus}`;
}

export interface CardRulesForm {
  undoMinutes: string;
  bonusSpend: CardRules['bonusSpend'];
  rows: TierRow[];
  /** What was wrong with what was sent (the form is shown again as typed), or null. */
  problem: string | null;
}

export function cardRulesFormOf(rules: CardRules): CardRulesForm {
  return {
    undoMinutes: String(Math.round(rules.undoWindowSeconds / 60)),
    bonusSpend: rules.bonusSpend,
    rows: tierRowsFor(rules.bonusTiers),
    problem: null,
  };
}

export function cardRulesView(
  ctx: { csrfToken: string },
  shop: { id: string },
  rules: CardRules,
  form: CardRulesForm,
  feed: { key: BlocklistKey; url: string },
): Html {
  const base = `/console/shops/${shop.id}`;
  const spend = (value: CardRules['bonusSpend'], label: string, hint: string) =>
    html`<label class="check"
      ><input
        type="radio"
        name="bonusSpend"
        value="${value}"
        ${form.bonusSpend === value ? html`checked` : ''}
      />
      <span><strong>${label}</strong>: ${hint}</span></label
    >`;
  return html`<section aria-labelledby="now">
      <h2 id="now">The rules now</h2>
      <ul data-testid="rules-now">
        ${
          rules.bonusTiers.length === 0
            ? html`<li>No bonus: every recharge buys its amount at the credit price.</li>`
            : rules.bonusTiers.map((tier) => html`<li>Bonus ${tierText(tier)}</li>`)
        }
        <li>
          A payout spends bonus credits ${rules.bonusSpend === 'bonus-first' ? 'first' : 'last'}.
        </li>
        <li>
          ${
            rules.undoWindowSeconds === 0
              ? 'Cashiers cannot undo a recharge.'
              : `A cashier may undo a recharge for ${
                  rules.undoWindowSeconds % 60 === 0
                    ? `${rules.undoWindowSeconds / 60} minutes`
                    : `${rules.undoWindowSeconds} seconds`
                } after it.`
          }
        </li>
      </ul>
    </section>
    <form method="post" action="${base}/card-rules" class="stack" novalidate>
      ${csrfField(ctx)}
      ${
        form.problem
          ? html`<p class="flash flash-problem" role="alert" id="rules-problem">
              ${form.problem} Nothing was changed.
            </p>`
          : ''
      }
      <fieldset class="card stack">
        <legend>Bonus tiers</legend>
        <p class="lead">
          A recharge by amount whose amount paid reaches a tier gets its bonus: a number of credits,
          or a percentage of the credits paid for (rounded down). The highest tier reached counts.
          Recharges by a number of credits get no bonus. Up to ${MAX_BONUS_TIERS} tiers, in any
          order (they are kept lowest first); empty every row for no bonus at all.
        </p>
        <div class="table-wrap">
          <table data-testid="tiers" class="tiers">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">From an amount paid of (€)</th>
                <th scope="col">Bonus: credits (2) or percent (10%)</th>
              </tr>
            </thead>
            <tbody>
              ${form.rows.map(
                (row, index) =>
                  html`<tr>
                    <th scope="row">${index + 1}</th>
                    <td>
                      <input
                        name="tierAmount${index}"
                        value="${row.amount}"
                        inputmode="decimal"
                        size="9"
                        maxlength="16"
                        aria-label="Tier ${index + 1}: from an amount paid of (euros)"
                        ${form.problem ? html`aria-describedby="rules-problem"` : ''}
                      />
                    </td>
                    <td>
                      <input
                        name="tierBonus${index}"
                        value="${row.bonus}"
                        size="7"
                        maxlength="16"
                        aria-label="Tier ${index + 1}: bonus"
                      />
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
      </fieldset>
      <fieldset class="card stack">
        <legend>Payouts of bonus credits</legend>
        ${spend(
          'bonus-first',
          'Bonus first',
          'a payout takes bonus credits before paid ones (the customer who tops up with a bonus and asks for the cash back gets only what was paid)',
        )}
        ${spend(
          'bonus-last',
          'Bonus last',
          'a payout takes paid credits first; bonus credits left on a card paid out whole are forfeited',
        )}
      </fieldset>
      <fieldset class="card stack">
        <legend>Cashier's undo</legend>
        <div class="row">
          <label
            >Minutes after a recharge its cashier may undo it (0: never; at most 1440)
            <input
              name="undoMinutes"
              value="${form.undoMinutes}"
              inputmode="numeric"
              size="5"
              maxlength="4"
          /></label>
        </div>
      </fieldset>
      <p class="actions"><button type="submit">Save the card rules</button></p>
    </form>
    <section aria-labelledby="feed">
      <h2 id="feed">Blocklist feed for machines</h2>
      <p class="lead">
        Vending machines and washers can refuse blocked cards on their own: their maker fetches the
        shop's signed list of blocked cards, with no API key, and checks it with this public key
        (Ed25519). Give them these two addresses and the key.
      </p>
      <dl class="facts card" data-testid="feed">
        <dt>Feed</dt>
        <dd><code>${feed.url}</code></dd>
        <dt>Key</dt>
        <dd><code>${feed.url}/key</code></dd>
        <dt>Key id</dt>
        <dd><code>${feed.key.keyId}</code></dd>
        <dt>Public key (hex)</dt>
        <dd><code data-testid="public-key">${feed.key.publicKey}</code></dd>
        <dt>Public key (PEM)</dt>
        <dd><pre class="pem">${feed.key.publicKeyPem}</pre></dd>
      </dl>
    </section>`;
}
