import type { Shop } from '../../shops/shops.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

let zones: string[] | undefined;

/** Every IANA zone this Node knows, for the time zone list. */
function timeZones(): string[] {
  zones ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];
  return zones;
}

export function settingsView(ctx: { csrfToken: string }, shop: Shop): Html {
  const base = `/console/shops/${shop.id}`;
  return html`<section aria-labelledby="zone">
      <h2 id="zone">Time zone</h2>
      <p class="lead">
        The shop's day runs from midnight to midnight here: the day report and the chart count by
        it. Changing it changes which day a movement counts in, from the next report on.
      </p>
      <form method="post" action="${base}/settings/time-zone" class="card row">
        ${csrfField(ctx)}
        <label
          >Time zone
          <select name="timeZone" required>
            ${timeZones().map(
              (zone) =>
                html`<option ${zone === shop.timeZone ? html`selected` : ''}>${zone}</option>`,
            )}
          </select></label
        >
        <button type="submit" class="secondary">Save</button>
      </form>
    </section>
    <section aria-labelledby="quiet">
      <h2 id="quiet">Quiet tills</h2>
      <form method="post" action="${base}/settings/till-quiet" class="card row">
        ${csrfField(ctx)}
        <label
          >Mark a till not heard from for more than (minutes)
          <input
            name="minutes"
            required
            inputmode="numeric"
            pattern="[0-9]{1,5}"
            value="${shop.tillQuietMinutes}"
        /></label>
        <button type="submit" class="secondary">Save</button>
      </form>
    </section>`;
}
