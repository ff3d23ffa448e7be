import type { Till } from '../../tills/tills.ts';
import { ago, count, localTime, tillName } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

/** The reader line as the tray says it (docs/operators.md, "What the window says"). */
const PROBLEMS: Record<string, string> = {
  'service-on-demand': 'Smart-card service starts only with a reader',
  'service-stopped': 'Smart-card service stopped',
  'service-disabled': 'Smart-card service disabled',
  'library-missing': 'PC/SC library missing',
  'wrong-abi': 'Reader module does not fit this app',
  'reader-in-use': 'Reader in use by another program',
  'host-not-answering': 'Reader connection restarted',
  'card-unreadable': 'A card could not be read',
  'pcsc-error': 'PC/SC error',
};

export function readerText(till: Till): string {
  const reader = till.reader;
  if (!reader) return 'not reported';
  switch (reader.state) {
    case 'ready':
      return reader.name ? `Ready (${reader.name})` : 'Ready';
    case 'no-reader':
      return 'No card reader';
    case 'stopped':
      return 'Starting or stopping';
    case 'unavailable':
      return (reader.problem && PROBLEMS[reader.problem]) || 'PC/SC cannot be used';
  }
}

export function tillDisplayName(till: { name: string | null; tillId: string }): string {
  return tillName(till.name, till.tillId);
}

export function quietBadge(till: Till, now: Date): Html {
  if (!till.quiet)
    return html`<span class="badge badge-good">heard ${ago(till.lastSeenAt, now)}</span>`;
  return html`<span class="badge badge-bad"
    >quiet:
    ${till.lastSeenAt ? `last heard ${ago(till.lastSeenAt, now)}` : 'never sent a heartbeat'}</span
  >`;
}

/** The warning the shop's pages show while a till has gone quiet. */
export function quietWarning(tills: Till[], quietMinutes: number, shopId: string): Html {
  const quiet = tills.filter((till) => till.quiet);
  if (quiet.length === 0) return html``;
  return html`<p class="flash flash-problem" role="alert" data-testid="quiet-tills">
    ${quiet.length === 1 ? 'A till has' : `${quiet.length} tills have`} not been heard from for more
    than ${quietMinutes} minutes: ${quiet.map(tillDisplayName).join(', ')}.
    <a href="/console/shops/${shopId}/tills">See the tills</a>
  </p>`;
}

/** A till's float as its last heartbeat said: what is left, and what it has not reported. */
export function floatText(float: Till['float'], timeZone: string): string {
  if (!float) return 'no float';
  const sales = float.unreportedMovements;
  return [
    `${count(float.credits)} credits left`,
    sales === 0
      ? 'all sales reported'
      : `${count(sales)} sale${sales === 1 ? '' : 's'} (${count(float.unreportedCredits)} credits) not reported yet`,
    ...(float.offlineSince ? [`offline since ${localTime(float.offlineSince, timeZone)}`] : []),
  ].join('; ');
}

/**
 * Tills at a glance: name, when last heard, reader, float, and the till's own count of its
 * movements the ledger has not confirmed and of those waiting for their card.
 */
export function tillsGlance(tills: Till[], now: Date, timeZone: string): Html {
  if (tills.length === 0) {
    return html`<p class="lead">No till has reported to this shop yet.</p>`;
  }
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Tills">
      <table data-testid="tills">
        <thead>
          <tr>
            <th scope="col">Till</th>
            <th scope="col">Heard</th>
            <th scope="col">Reader</th>
            <th scope="col">Float</th>
            <th scope="col" class="num">Not yet confirmed</th>
            <th scope="col" class="num">Waiting for their card</th>
          </tr>
        </thead>
        <tbody>
          ${tills.map(
            (till) =>
              html`<tr>
                <th scope="row">${tillDisplayName(till)}</th>
                <td>${quietBadge(till, now)}</td>
                <td>${readerText(till)}</td>
                <td>${floatText(till.float, timeZone)}</td>
                <td class="num">${till.pendingMovements ?? '—'}</td>
                <td class="num">${till.waitingMovements ?? '—'}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <p class="lead" data-testid="tills-note">
      As each till said in its last heartbeat. <strong>Not yet confirmed</strong>: movements the
      till made that the ledger has not confirmed (it sends them as soon as it can).
      <strong>Waiting for their card</strong>: of those, the ones the till settles when their card
      is on its reader again.
    </p>`;
}

/** The tills page: everything each till said, its name to edit (owners). */
export function tillsView(
  ctx: { csrfToken: string },
  shop: { id: string; tillQuietMinutes: number; timeZone: string },
  tills: Till[],
  now: Date,
  canRename: boolean,
): Html {
  return html`<p class="lead">
      Each till reports every minute and on each change. One not heard from for more than
      ${shop.tillQuietMinutes} minutes is marked quiet (<a href="/console/shops/${shop.id}/settings"
        >change</a
      >).
    </p>
    ${quietWarning(tills, shop.tillQuietMinutes, shop.id)}
    ${
      tills.length === 0
        ? html`<p>No till has reported to this shop yet.</p>`
        : tills.map(
            (till) =>
              html`<section class="card" aria-labelledby="till-${till.tillId}">
                <h2 id="till-${till.tillId}">${tillDisplayName(till)} ${quietBadge(till, now)}</h2>
                <dl class="facts">
                  <dt>Till id</dt>
                  <dd><code>${till.tillId}</code></dd>
                  <dt>Version</dt>
                  <dd>${till.version ?? 'not reported'}</dd>
                  <dt>Reader</dt>
                  <dd>${readerText(till)}</dd>
                  <dt>Movements not yet confirmed</dt>
                  <dd>${till.pendingMovements ?? '—'}</dd>
                  <dt>Of those, waiting for their card</dt>
                  <dd>${till.waitingMovements ?? '—'}</dd>
                  <dt>Float</dt>
                  <dd>${floatText(till.float, shop.timeZone)}</dd>
                </dl>
                ${
                  canRename
                    ? html`<form
                        method="post"
                        action="/console/shops/${shop.id}/tills/${till.tillId}/name"
                        class="row"
                      >
                        ${csrfField(ctx)}
                        <label
                          >Name
                          <input
                            name="name"
                            value="${till.name ?? ''}"
                            maxlength="60"
                            placeholder="front counter"
                        /></label>
                        <button type="submit" class="secondary">Save name</button>
                      </form>`
                    : ''
                }
              </section>`,
          )
    }`;
}
