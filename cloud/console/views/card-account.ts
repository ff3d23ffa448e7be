import { randomUUID } from 'node:crypto';
import type { CardAccount, CardChange, Movement } from '../../../common/ledger-contract.ts';
import { count, euros, KIND_TEXT, localTime } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';
import { stateBadge, tillOf, type TillNames } from './movements.ts';

/**
 * One card at the shop: its account (paid credits, bonus credits, euros paid), its block, the
 * changes waiting for it or made from it, its latest movements and flags; and what an owner
 * does with it: block or unblock it, replace it onto a new card, correct a recharge, cancel a
 * change still waiting. Each action asks why (the audit log keeps it).
 */

const FLAG_TEXT: Record<string, string> = {
  'discharge-exceeds-account': 'a payout for more than the shop put on it',
  'card-above-account': 'it held more than the shop put on it',
  'overdrawn-before-accounts': 'paid out more than loaded before card accounts existed',
  'compensation-refused': 'the books and the card disagree (a compensation was refused)',
  'card-above-record': 'it held more than its newest record says',
  'record-of-voided-movement': 'its newest record is of a movement the ledger voided',
  'card-blocked': 'a float recharge was sold offline after it was blocked',
  'bonus-above-tiers': 'an offline recharge gave more bonus than the tiers',
};

const CHANGE_STATE: Record<CardChange['state'], Html> = {
  waiting: html`<span class="badge badge-warn">waiting for its card</span>`,
  applied: html`<span class="badge badge-good">picked up</span>`,
  cancelled: html`<span class="badge badge-bad">cancelled</span>`,
};

export function reasonField(label: string, placeholder: string): Html {
  return html`<label
    >${label} <input name="reason" required maxlength="500" placeholder="${placeholder}"
  /></label>`;
}

function accountFacts(account: CardAccount): Html {
  const bonus = account.bonusCredits ?? 0;
  return html`<dl class="figures" data-testid="card-account">
    <div>
      <dt>Credits on its account</dt>
      <dd data-figure="credits">${count(account.credits)}</dd>
    </div>
    <div>
      <dt>Paid credits</dt>
      <dd data-figure="paid-credits">${count(account.credits - bonus)}</dd>
    </div>
    <div>
      <dt>Bonus credits</dt>
      <dd data-figure="bonus-credits">${count(bonus)}</dd>
    </div>
    <div>
      <dt>Euros paid for them</dt>
      <dd data-figure="paid-amount">${euros(account.paidAmount ?? '0.00')}</dd>
    </div>
  </dl>`;
}

function holderSection(ctx: { csrfToken: string }, base: string, account: CardAccount): Html {
  const label = account.holderLabel ?? null;
  return html`<section aria-labelledby="holder">
    <h2 id="holder">Holder</h2>
    <p data-testid="holder">
      ${
        label === null
          ? 'No holder label: the card is anonymous.'
          : html`Labelled <strong>${label}</strong>.`
      }
      A label (a name or a phone number, up to 100 characters) lets the shop find the card when its
      customer loses it. Delete it when its holder asks.
    </p>
    <form method="post" action="${base}/holder" class="card row">
      ${csrfField(ctx)}
      <label
        >Holder label <input name="label" maxlength="100" autocomplete="off" value="${label ?? ''}"
      /></label>
      <button type="submit" name="action" value="set" class="secondary">Save the label</button>
      ${
        label === null
          ? ''
          : html`<button type="submit" name="action" value="delete" class="danger" formnovalidate>
              Delete the label
            </button>`
      }
    </form>
  </section>`;
}

function blockSection(
  ctx: { csrfToken: string },
  base: string,
  account: CardAccount,
  timeZone: string,
): Html {
  const block = account.blocked ?? null;
  if (!block) {
    return html`<section aria-labelledby="block">
      <h2 id="block">Not blocked</h2>
      <p class="lead">
        Block a card its customer lost: every till refuses it, the ledger pays nothing out of it,
        and a till that sees it empties it. Its account stays, to be moved onto a new card.
      </p>
      <form method="post" action="${base}/block" class="card row">
        ${csrfField(ctx)} ${reasonField('Why block it', 'lost by the customer')}
        <button type="submit" class="danger">Block the card</button>
      </form>
    </section>`;
  }
  return html`<section aria-labelledby="block">
    <h2 id="block">Blocked <span class="badge badge-bad">refused at every till</span></h2>
    <p data-testid="block">
      Since ${localTime(block.since, timeZone)}, by <code>${block.by}</code>: “${block.reason}”.
    </p>
    <form method="post" action="${base}/unblock" class="card row">
      ${csrfField(ctx)} ${reasonField('Why lift the block', 'found by the customer')}
      <button type="submit" class="secondary">Unblock the card</button>
    </form>
  </section>`;
}

function replaceSection(ctx: { csrfToken: string }, base: string, account: CardAccount): Html {
  if (!account.blocked) return html``;
  if (account.credits === 0) {
    return html`<section aria-labelledby="replace">
      <h2 id="replace">Replace it onto a new card</h2>
      <p>Nothing to replace: its account holds no credits.</p>
    </section>`;
  }
  return html`<section aria-labelledby="replace">
    <h2 id="replace">Replace it onto a new card</h2>
    <p class="lead">
      Moves this card's account (${count(account.credits)} credits,
      ${euros(account.paidAmount ?? '0')} paid) to the new card. It waits at the ledger until a
      till's next recharge, payout or settle with the new card on the reader writes it onto the
      card, once. What machines spent from the lost card before it was blocked cannot be known: the
      account moves, not what the card held.
    </p>
    <form method="post" action="${base}/replace" class="card row">
      ${csrfField(ctx)}
      <input type="hidden" name="id" value="${randomUUID()}" />
      <label
        >New card id
        <input
          name="newCardId"
          required
          maxlength="20"
          autocomplete="off"
          spellcheck="false"
          placeholder="04A1B2C3"
      /></label>
      ${reasonField('Why', 'replaces a lost card')}
      <button type="submit">Replace</button>
    </form>
  </section>`;
}

function correctSection(
  ctx: { csrfToken: string },
  base: string,
  account: CardAccount,
  timeZone: string,
): Html {
  const recharges = account.movements.filter(
    (m) => m.kind === 'recharge' && m.state === 'posted' && !m.compensates,
  );
  if (recharges.length === 0 || account.blocked) return html``;
  return html`<section aria-labelledby="correct">
    <h2 id="correct">Correct a recharge</h2>
    <p class="lead">
      Takes credits of a recharge back, refunded at that recharge's price (bonus credits first, for
      nothing). It waits for the card: the next till that reads it takes back what the card still
      holds of them, and its cashier gives the euros back.
    </p>
    <form method="post" action="${base}/correct" class="card row">
      ${csrfField(ctx)}
      <input type="hidden" name="id" value="${randomUUID()}" />
      <label
        >Recharge
        <select name="recharge" required>
          ${recharges.map(
            (m) =>
              html`<option value="${m.id}">
                ${localTime(m.occurredAt ?? m.createdAt, timeZone)}: ${count(m.credits)} credits,
                ${euros(m.amount)}
              </option>`,
          )}
        </select></label
      >
      <label
        >Credits to take back
        <input name="credits" required inputmode="numeric" pattern="[0-9]{1,10}" size="6"
      /></label>
      ${reasonField('Why', 'the cashier keyed 50 for 5')}
      <button type="submit">Correct</button>
    </form>
  </section>`;
}

function changeRows(
  ctx: { csrfToken: string },
  base: string,
  shopBase: string,
  changes: readonly CardChange[],
  cardId: string,
  timeZone: string,
): Html {
  return html`${changes.map(
    (change) =>
      html`<tr data-change="${change.id}">
        <th scope="row">
          ${change.kind === 'replacement' ? 'replacement' : 'correction'}
          ${
            change.kind === 'replacement'
              ? change.fromCard === cardId
                ? html`onto
                    <a href="${shopBase}/card-accounts/${change.cardId}"
                      ><code>${change.cardId}</code></a
                    >`
                : html`from
                    <a href="${shopBase}/card-accounts/${change.fromCard ?? ''}"
                      ><code>${change.fromCard}</code></a
                    >`
              : ''
          }
        </th>
        <td class="num">
          ${count(change.credits)}${change.bonusCredits > 0 ? ` (${count(change.bonusCredits)} bonus)` : ''}
        </td>
        <td>
          ${CHANGE_STATE[change.state]}
          ${
            change.movementId
              ? html` <a href="${shopBase}/movements/${change.movementId}">its movement</a>`
              : ''
          }
        </td>
        <td>
          ${localTime(change.createdAt, timeZone)}, <code>${change.by}</code>: “${change.reason}”
          ${
            change.state === 'cancelled'
              ? html`<br />Cancelled ${localTime(change.resolvedAt, timeZone)},
                  <code>${change.cancelledBy ?? ''}</code>: “${change.cancelReason ?? ''}”`
              : ''
          }
        </td>
        <td>
          ${
            change.state === 'waiting'
              ? html`<form method="post" action="${base}/changes/${change.id}/cancel" class="row">
                  ${csrfField(ctx)}
                  <label>Why cancel <input name="reason" required maxlength="500" /></label>
                  <button type="submit" class="secondary">Cancel it</button>
                </form>`
              : ''
          }
        </td>
      </tr>`,
  )}`;
}

function movementRows(
  shopBase: string,
  movements: readonly Movement[],
  names: TillNames,
  timeZone: string,
): Html {
  return html`${movements.map(
    (m) =>
      html`<tr>
        <td>
          <a href="${shopBase}/movements/${m.id}"
            >${localTime(m.occurredAt ?? m.createdAt, timeZone)}</a
          >
        </td>
        <td>${KIND_TEXT[m.kind]}${m.compensates ? ' (compensation)' : ''}</td>
        <td>${stateBadge(m)}</td>
        <td class="num">
          ${count(m.credits)}${(m.bonusCredits ?? 0) > 0 ? ` (${count(m.bonusCredits ?? 0)} bonus)` : ''}
        </td>
        <td class="num">${euros(m.amount)}</td>
        <td>${tillOf(names, m.tillId)}</td>
      </tr>`,
  )}`;
}

export function cardAccountView(
  ctx: { csrfToken: string },
  shop: { id: string; timeZone: string },
  account: CardAccount,
  names: TillNames,
): Html {
  const shopBase = `/console/shops/${shop.id}`;
  const base = `${shopBase}/card-accounts/${account.cardId}`;
  const changes = account.changes ?? [];
  return html`<p><a href="${shopBase}/card-accounts">← All blocked cards and waiting changes</a></p>
    ${accountFacts(account)}
    ${
      account.importedCredits !== null
        ? html`<p>Imported with ${count(account.importedCredits)} credits.</p>`
        : ''
    }
    ${holderSection(ctx, base, account)} ${blockSection(ctx, base, account, shop.timeZone)}
    ${replaceSection(ctx, base, account)} ${correctSection(ctx, base, account, shop.timeZone)}
    <section aria-labelledby="changes">
      <h2 id="changes">Replacements and corrections</h2>
      ${
        changes.length === 0
          ? html`<p>None.</p>`
          : html`<div
              class="table-wrap"
              tabindex="0"
              role="region"
              aria-label="Replacements and corrections"
            >
              <table data-testid="changes">
                <thead>
                  <tr>
                    <th scope="col">Change</th>
                    <th scope="col" class="num">Credits</th>
                    <th scope="col">State</th>
                    <th scope="col">Made</th>
                    <th scope="col">Cancel</th>
                  </tr>
                </thead>
                <tbody>
                  ${changeRows(ctx, base, shopBase, changes, account.cardId, shop.timeZone)}
                </tbody>
              </table>
            </div>`
      }
    </section>
    <section aria-labelledby="movements">
      <h2 id="movements">Latest movements</h2>
      ${
        account.movements.length === 0
          ? html`<p>None at this shop.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Latest movements">
                <table data-testid="card-movements">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Kind</th>
                      <th scope="col">State</th>
                      <th scope="col" class="num">Credits</th>
                      <th scope="col" class="num">Euros</th>
                      <th scope="col">Till</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${movementRows(shopBase, account.movements.slice(0, 20), names, shop.timeZone)}
                  </tbody>
                </table>
              </div>
              <p><a href="${shopBase}/movements?card=${account.cardId}">All its movements</a></p>`
      }
    </section>
    <section aria-labelledby="flags">
      <h2 id="flags">Flags</h2>
      ${
        account.flags.length === 0
          ? html`<p>None.</p>`
          : html`<ul data-testid="flags">
              ${account.flags.map(
                (flag) =>
                  html`<li>
                    ${localTime(flag.createdAt, shop.timeZone)}:
                    ${FLAG_TEXT[flag.kind] ?? flag.kind}
                    ${
                      flag.movementId
                        ? html` (<a href="${shopBase}/movements/${flag.movementId}">movement</a>)`
                        : ''
                    }
                  </li>`,
              )}
            </ul>`
      }
    </section>`;
}
