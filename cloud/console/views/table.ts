import { html, type Html } from './html.ts';

/**
 * A table's row saying it is empty: its text kept in sight at the left of the table's scroll
 * region, however wide the table is on a narrow screen.
 */
export function emptyRow(columns: number, text: string): Html {
  return html`<tr>
    <td colspan="${columns}" class="empty"><span>${text}</span></td>
  </tr>`;
}
