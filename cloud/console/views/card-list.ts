import type { CardOverview } from '../../cards/card-overview.ts';
import { count, localTime } from './format.ts';
import { html, type Html } from './html.ts';

/**
 * The shop's cards page: find a card, its blocked cards and the changes waiting for cards,
 * each a link to its card page.
 */
export function cardListView(
  shop: { id: string; timeZone: string },
  overview: CardOverview,
  typed: string,
  found: { cardId: string; label: string }[] | null,
): Html {
  const base = `/console/shops/${shop.id}/card-accounts`;
  return html`<p class="lead">
      A card's page shows its account and blocks, replaces or corrects it. Its id is what the tray
      shows when the card is on the reader, and what every movement of it names; a card with a
      holder label is found by a part of it (a name, a phone number).
    </p>
    <form method="get" action="${base}" class="card row" role="search">
      <label
        >Card id or holder
        <input
          name="card"
          required
          maxlength="100"
          autocomplete="off"
          spellcheck="false"
          placeholder="04A1B2C3"
          value="${typed}"
      /></label>
      <button type="submit">Find the card</button>
    </form>
    ${found === null ? '' : foundList(base, typed, found)}

    <section aria-labelledby="blocked">
      <h2 id="blocked">Blocked cards</h2>
      ${
        overview.blocked.length === 0
          ? html`<p>None.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Blocked cards">
              <table data-testid="blocked">
                <thead>
                  <tr>
                    <th scope="col">Card</th>
                    <th scope="col">Since</th>
                    <th scope="col">By</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  ${overview.blocked.map(
                    (block) =>
                      html`<tr>
                        <th scope="row">
                          <a href="${base}/${block.cardId}"
                            ><code class="card-id">${block.cardId}</code></a
                          >
                        </th>
                        <td>${localTime(block.since, shop.timeZone)}</td>
                        <td><code>${block.by}</code></td>
                        <td>${block.reason}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
    </section>
    <section aria-labelledby="waiting">
      <h2 id="waiting">Changes waiting for their card</h2>
      <p class="lead">
        A replacement or a correction is written onto its card by the next till that reads it.
      </p>
      ${
        overview.waiting.length === 0
          ? html`<p>None.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Changes waiting">
              <table data-testid="waiting">
                <thead>
                  <tr>
                    <th scope="col">For card</th>
                    <th scope="col">Change</th>
                    <th scope="col" class="num">Credits</th>
                    <th scope="col">Since</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  ${overview.waiting.map(
                    (change) =>
                      html`<tr>
                        <th scope="row">
                          <a href="${base}/${change.cardId}"
                            ><code class="card-id">${change.cardId}</code></a
                          >
                        </th>
                        <td>
                          ${
                            change.kind === 'replacement'
                              ? html`replacement of
                                  <a href="${base}/${change.fromCard ?? ''}"
                                    ><code class="card-id">${change.fromCard}</code></a
                                  >`
                              : 'correction'
                          }
                        </td>
                        <td class="num">${count(change.credits)}</td>
                        <td>${localTime(change.createdAt, shop.timeZone)}</td>
                        <td>${change.reason}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
    </section>`;
}

function foundList(base: string, typed: string, found: { cardId: string; label: string }[]): Html {
  return html`<section aria-labelledby="found">
    <h2 id="found">Holders matching “${typed}”</h2>
    ${
      found.length === 0
        ? html`<p data-testid="found">No card id, and no holder label holds it.</p>`
        : html`<ul data-testid="found">
            ${found.map(
              (card) =>
                html`<li>
                  <a href="${base}/${card.cardId}"><code class="card-id">${card.cardId}</code></a>
                  ${card.label}
                </li>`,
            )}
          </ul>`
    }
  </section>`;
}
