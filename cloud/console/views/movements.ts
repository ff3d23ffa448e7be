import type { AuditRecord } from '../../audit/audit-log.ts';
import type { Movement, MovementKind, MovementState } from '../../records.ts';
import type { Till } from '../../tills/tills.ts';
import { count, euros, KIND_TEXT, localTime, tillName } from './format.ts';
import { html, type Html } from './html.ts';
import { emptyRow } from './table.ts';
import { tillDisplayName } from './tills.ts';

export type TillNames = ReadonlyMap<string, string>;

export function tillOf(names: TillNames, tillId: string | null): string {
  if (tillId === null) return 'no till';
  return tillName(names.get(tillId) ?? null, tillId);
}

export function kindText(movement: { kind: MovementKind; compensates?: string | null }): string {
  const kind = KIND_TEXT[movement.kind];
  return movement.compensates ? `${kind} (compensation)` : kind;
}

export function stateBadge(movement: { state: MovementState; awaitsCard?: boolean }): Html {
  const kind = movement.state === 'posted' ? 'good' : movement.state === 'pending' ? 'warn' : 'bad';
  return html`<span class="badge badge-${kind}">${movement.state}</span>${
      movement.awaitsCard ? html` <span class="badge badge-warn">awaits its card</span>` : ''
    }`;
}

export interface MovementFilterValues {
  till?: string;
  card?: string;
  kind?: string;
  state?: string;
  date?: string;
}

function option(value: string, label: string, selected: string | undefined): Html {
  return html`<option value="${value}" ${selected === value ? html`selected` : ''}>
    ${label}
  </option>`;
}

export function movementsView(
  shop: { id: string; timeZone: string },
  movements: Movement[],
  tills: Till[],
  names: TillNames,
  filter: MovementFilterValues,
  limit: number,
): Html {
  const base = `/console/shops/${shop.id}/movements`;
  return html`<form method="get" class="filters" role="search" aria-label="Filter movements">
      <label
        >Till
        <select name="till">
          ${option('', 'any', filter.till ?? '')}
          ${tills.map((till) => option(till.tillId, tillDisplayName(till), filter.till))}
        </select></label
      >
      <label
        >Card
        <input
          name="card"
          value="${filter.card ?? ''}"
          size="14"
          maxlength="14"
          pattern="[0-9A-Fa-f]{8}([0-9A-Fa-f]{6})?"
      /></label>
      <label
        >Kind
        <select name="kind">
          ${option('', 'any', filter.kind ?? '')} ${option('recharge', 'recharge', filter.kind)}
          ${option('discharge', 'payout', filter.kind)}
        </select></label
      >
      <label
        >State
        <select name="state">
          ${option('', 'any', filter.state ?? '')} ${option('pending', 'pending', filter.state)}
          ${option('posted', 'posted', filter.state)} ${option('voided', 'voided', filter.state)}
        </select></label
      >
      <label>Day <input type="date" name="date" value="${filter.date ?? ''}" /></label>
      <button type="submit">Filter</button>
      <a href="${base}">Clear</a>
    </form>
    <p class="lead">
      ${
        movements.length === limit
          ? `The newest ${limit} movements that match; narrow the filter to see older ones.`
          : `${movements.length} movements, newest first.`
      }
    </p>
    ${movementTable(
      shop,
      movements.map((movement) => ({ movement, till: tillOf(names, movement.tillId) })),
      { label: 'Movements', testId: 'movements', empty: 'No movement matches.' },
    )}`;
}

/** What a row of a movement table shows: a movement as the ledger answers it, or as listed. */
export interface MovementRowData {
  id: string;
  createdAt: string;
  kind: MovementKind;
  /** The movement it sets right (a compensation), or null. */
  compensates?: string | null;
  cardId: string;
  credits: number;
  amount: string;
  state: MovementState;
  awaitsCard?: boolean;
}

/**
 * A table of movements, one row each (when it started, its till, its kind with compensations
 * marked, card, credits, euros, state), each opening its page: the Movements page's table and
 * the day report's pending and voided lists.
 */
export function movementTable(
  shop: { id: string; timeZone: string },
  rows: readonly { movement: MovementRowData; till: string }[],
  table: { label: string; testId: string; empty: string },
): Html {
  const base = `/console/shops/${shop.id}/movements`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${table.label}">
    <table data-testid="${table.testId}">
      <thead>
        <tr>
          <th scope="col">Started</th>
          <th scope="col">Till</th>
          <th scope="col">Kind</th>
          <th scope="col">Card</th>
          <th scope="col" class="num">Credits</th>
          <th scope="col" class="num">Euros</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ({ movement: m, till }) =>
            html`<tr>
              <td><a href="${base}/${m.id}">${localTime(m.createdAt, shop.timeZone)}</a></td>
              <td>${till}</td>
              <td>${kindText(m)}</td>
              <td>
                <a href="${base}?card=${m.cardId}"><code>${m.cardId}</code></a>
              </td>
              <td class="num">${count(m.credits)}</td>
              <td class="num">${euros(m.amount)}</td>
              <td>${stateBadge(m)}</td>
            </tr>`,
        )}
        ${rows.length === 0 ? emptyRow(7, table.empty) : ''}
      </tbody>
    </table>
  </div>`;
}

/** One movement and its history: made, decided, by whom, on what evidence, set right by. */
export function movementView(
  shop: { id: string; timeZone: string },
  movement: Movement,
  names: TillNames,
  related: { compensatedBy: Movement[]; compensates: Movement | null },
  audit: AuditRecord[],
): Html {
  const base = `/console/shops/${shop.id}/movements`;
  const at = (iso: string | null) => localTime(iso, shop.timeZone);
  const events: { at: string | null; what: Html }[] = [
    {
      at: movement.createdAt,
      what: html`Started by
      ${tillOf(names, movement.tillId)}${
        movement.cardBefore ? html`; the card held <code>${movement.cardBefore}</code>` : ''
      }`,
    },
  ];
  // Who decided it without a till, as the audit log names them (operator:anna, cli:root...).
  const decidedBy = audit.find(
    (row) => row.action === 'movement.post' || row.action === 'movement.void',
  );
  if (movement.state !== 'pending') {
    const by =
      movement.resolvedByTill !== null
        ? tillOf(names, movement.resolvedByTill)
        : movement.evidence !== null
          ? `${decidedBy?.actor ?? 'an operator'}, without the card`
          : tillOf(names, movement.tillId);
    events.push({
      at: movement.resolvedAt,
      what: html`${movement.state === 'posted' ? 'Posted' : 'Voided'} by
      ${by}${movement.evidence ? html`: “${movement.evidence}”` : ''}`,
    });
  }
  if (movement.occurredAt && movement.occurredAt !== movement.resolvedAt) {
    events.push({ at: movement.occurredAt, what: html`The card write was proven at its till` });
  }
  if (movement.cardEvidence) {
    events.push({
      at: null,
      what: html`A till read the card and confirmed it: “${movement.cardEvidence}”`,
    });
  }
  for (const m of related.compensatedBy) {
    events.push({
      at: m.createdAt,
      what: html`Set right by
        <a href="${base}/${m.id}">a ${kindText(m)} of ${m.credits} credits</a> (${m.state})`,
    });
  }
  for (const row of audit.filter((other) => other !== decidedBy)) {
    events.push({
      at: row.at,
      what: html`Audit log: ${row.actor} ${row.action}${row.reason ? html` — “${row.reason}”` : ''}`,
    });
  }
  events.sort((a, b) => (a.at ?? '9').localeCompare(b.at ?? '9'));
  return html`<dl class="facts">
      <dt>Kind</dt>
      <dd>${kindText(movement)}</dd>
      <dt>State</dt>
      <dd>${stateBadge(movement)}</dd>
      <dt>Card</dt>
      <dd>
        <a href="${base}?card=${movement.cardId}"><code>${movement.cardId}</code></a>
      </dd>
      <dt>Credits</dt>
      <dd>
        ${count(movement.credits)} at ${euros(movement.creditCost)}: ${euros(movement.amount)}
      </dd>
      <dt>Till</dt>
      <dd>${tillOf(names, movement.tillId)}</dd>
      <dt>Movement id</dt>
      <dd><code>${movement.id}</code></dd>
      ${
        related.compensates
          ? html`<dt>Sets right</dt>
              <dd>
                <a href="${base}/${related.compensates.id}"
                  >${kindText(related.compensates)} of ${related.compensates.credits} credits</a
                >
              </dd>`
          : ''
      }
    </dl>
    <h2>History</h2>
    <ol class="history" data-testid="history">
      ${events.map((event) => html`<li>${event.at ? html`<strong>${at(event.at)}</strong>: ` : ''}${event.what}</li>`)}
    </ol>`;
}
