import type { HeldAndFlagged } from '../../cards/held-and-flagged.ts';
import { compensationDue } from '../../movements/decision-due.ts';
import type { Movement } from '../../records.ts';
import { ago, count, euros, localTime } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';
import { kindText, tillOf, type TillNames } from './movements.ts';

const FLAG_TEXT: Record<string, string> = {
  'discharge-exceeds-account': 'a payout for more than the shop put on it',
  'card-above-account': 'it held more than the shop put on it',
  'overdrawn-before-accounts': 'paid out more than loaded before card accounts existed',
  'compensation-refused': 'the books and the card disagree (a compensation was refused)',
};

function decideForm(ctx: { csrfToken: string }, shopId: string, m: Movement): Html {
  return html`<form
    method="post"
    action="/console/shops/${shopId}/movements/${m.id}/decide"
    class="stack decide"
  >
    ${csrfField(ctx)}
    <label
      >What the decision rests on (kept with the movement and in the audit log)
      <textarea
        name="evidence"
        required
        maxlength="500"
        rows="2"
        placeholder="card reported lost by the customer"
      ></textarea>
    </label>
    <div class="actions">
      <button type="submit" name="decision" value="post" class="secondary">
        Post: the card holds it
      </button>
      <button type="submit" name="decision" value="void" class="danger">
        Void: it did not happen
      </button>
    </div>
  </form>`;
}

/**
 * A compensation its till left pending past the bound (decision-due.ts): no card write decides
 * it, so it needs a decision.
 */
function dueNote(names: TillNames, m: Movement): Html {
  return html`<p class="flash flash-problem" data-testid="needs-decision-${m.id}">
    <strong>Needs a decision.</strong> A compensation ${tillOf(names, m.tillId)} made to set the
    books right, left pending for more than 24 hours: no card write decides it. Settle the card on
    the reader at any till (it posts it, the card as evidence), or post it here, saying why.
  </p>`;
}

export function cardsView(
  ctx: { csrfToken: string },
  shop: { id: string; timeZone: string },
  held: HeldAndFlagged,
  names: TillNames,
  now: Date,
): Html {
  const base = `/console/shops/${shop.id}`;
  return html`<section aria-labelledby="held">
      <h2 id="held">Movements waiting for a decision</h2>
      <p class="lead">
        Each holds its card: no other till recharges or pays it out until it is decided. The till
        that made it decides it when the card is back on its reader; any till can with
        <em>Settle the card on the reader</em>. Decide here only when the card will not come back
        (lost, its till gone for good): a decision without the card waits for the card and is set
        right if the card shows otherwise.
      </p>
      ${
        held.pending.length === 0
          ? html`<p>None.</p>`
          : held.pending.map(
              (m) =>
                html`<article class="card" data-testid="held-${m.id}">
                  <h3>
                    Card <code>${m.cardId}</code>: ${kindText(m)} of ${count(m.credits)} credits
                    (${euros(m.amount)})
                  </h3>
                  <p>
                    Started ${localTime(m.createdAt, shop.timeZone)} (${ago(m.createdAt, now)}) by
                    ${tillOf(names, m.tillId)}. <a href="${base}/movements/${m.id}">History</a>
                  </p>
                  ${compensationDue(m, now) ? dueNote(names, m) : html``}
                  ${decideForm(ctx, shop.id, m)}
                </article>`,
            )
      }
    </section>
    <section aria-labelledby="awaiting">
      <h2 id="awaiting">Decided without the card, waiting for it</h2>
      ${
        held.awaitingCard.length === 0
          ? html`<p>None.</p>`
          : html`<ul>
              ${held.awaitingCard.map(
                (m) =>
                  html`<li>
                    Card <code>${m.cardId}</code>:
                    <a href="${base}/movements/${m.id}"
                      >${kindText(m)} of ${m.credits} credits, ${m.state}</a
                    >
                    (“${m.evidence ?? ''}”)
                  </li>`,
              )}
            </ul>`
      }
    </section>
    <section aria-labelledby="flagged">
      <h2 id="flagged">Flagged cards</h2>
      ${
        held.flagged.length === 0
          ? html`<p>None.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Flagged cards">
              <table data-testid="flagged">
                <thead>
                  <tr>
                    <th scope="col">Card</th>
                    <th scope="col">Last flag</th>
                    <th scope="col">When</th>
                    <th scope="col" class="num">Flags</th>
                  </tr>
                </thead>
                <tbody>
                  ${held.flagged.map(
                    (card) =>
                      html`<tr>
                        <td>
                          <a href="${base}/movements?card=${card.cardId}"
                            ><code>${card.cardId}</code></a
                          >
                        </td>
                        <td>${FLAG_TEXT[card.lastKind] ?? card.lastKind}</td>
                        <td>${localTime(card.lastAt, shop.timeZone)}</td>
                        <td class="num">${card.flags}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
    </section>`;
}
