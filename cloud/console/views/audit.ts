import type { AuditRecord } from '../../audit/audit-log.ts';
import { localTime } from './format.ts';
import { html, type Html } from './html.ts';

function detailText(detail: string): string {
  try {
    const value = JSON.parse(detail) as Record<string, unknown>;
    return Object.entries(value)
      .map(
        ([key, item]) =>
          `${key}: ${typeof item === 'object' ? JSON.stringify(item) : String(item)}`,
      )
      .join(', ');
  } catch {
    return detail;
  }
}

export function auditView(rows: AuditRecord[], timeZone: string, older: string | null): Html {
  return html`<p class="lead">
      Every operator action, newest first. Each row carries the hash of the one before it, so a row
      changed or removed afterwards shows (<code>card-wallet-cloud check</code>).
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="Audit log">
      <table data-testid="audit">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">What</th>
            <th scope="col">Why</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (row) =>
              html`<tr>
                <td class="num">${row.seq}</td>
                <td>${localTime(row.at, timeZone)}</td>
                <td>${row.actor}</td>
                <td>${row.action}${row.subject ? html` <code>${row.subject}</code>` : ''}</td>
                <td>${row.reason ?? ''}</td>
                <td>${detailText(row.detail)}</td>
              </tr>`,
          )}
          ${
            rows.length === 0
              ? html`<tr>
                  <td colspan="6" class="empty">Nothing yet.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
    </div>
    ${older ? html`<p><a href="${older}">Older</a></p>` : ''}`;
}
