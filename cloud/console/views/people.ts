import type { Operator } from '../../operators/operators.ts';
import { localTime } from './format.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

const ROLE_TEXT = { admin: 'provider admin', owner: 'owner', staff: 'staff (day report only)' };

export function peopleView(
  ctx: { csrfToken: string; operator: Operator },
  shop: { id: string; timeZone: string },
  people: Operator[],
  manageable: (person: Operator) => boolean,
  creatable: readonly ('owner' | 'staff')[],
): Html {
  const base = `/console/shops/${shop.id}/people`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="People">
      <table data-testid="people">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Login</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Manage</th>
          </tr>
        </thead>
        <tbody>
          ${people.map(
            (person) =>
              html`<tr>
                <th scope="row">${person.name}</th>
                <td><code>${person.login}</code></td>
                <td>${ROLE_TEXT[person.role]}</td>
                <td>
                  ${
                    person.disabledAt
                      ? html`<span class="badge badge-bad"
                          >disabled ${localTime(person.disabledAt, shop.timeZone)}</span
                        >`
                      : person.mustChangePassword
                        ? html`<span class="badge badge-warn">must choose a password</span>`
                        : html`<span class="badge badge-good">active</span>`
                  }
                </td>
                <td>
                  ${
                    manageable(person)
                      ? html`<div class="actions">
                          <form
                            method="post"
                            action="${base}/${person.login}/${person.disabledAt ? 'enable' : 'disable'}"
                            class="inline"
                          >
                            ${csrfField(ctx)}
                            <button
                              type="submit"
                              class="secondary"
                              aria-label="${person.disabledAt ? 'Enable' : 'Disable'} ${person.login}"
                            >
                              ${person.disabledAt ? 'Enable' : 'Disable'}
                            </button>
                          </form>
                          <form
                            method="post"
                            action="${base}/${person.login}/reset-password"
                            class="inline"
                          >
                            ${csrfField(ctx)}
                            <button
                              type="submit"
                              class="secondary"
                              aria-label="Reset password of ${person.login}"
                            >
                              Reset password
                            </button>
                          </form>
                        </div>`
                      : person.id === ctx.operator.id
                        ? html`<a href="/console/account">your account</a>`
                        : ''
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${
      creatable.length > 0
        ? html`<h2>Add a person</h2>
            <form method="post" action="${base}" class="card stack">
              ${csrfField(ctx)}
              <div class="row">
                <label>Name <input name="name" required maxlength="100" /></label>
                <label
                  >Login
                  <input
                    name="login"
                    required
                    pattern="[a-z0-9][a-z0-9._@\\-]{2,63}"
                    title="3 to 64 of a-z, 0-9 and . _ @ -"
                /></label>
                <label
                  >Role
                  <select name="role">
                    ${creatable.map((role) => html`<option value="${role}">${ROLE_TEXT[role]}</option>`)}
                  </select></label
                >
              </div>
              <p class="lead">
                They get a temporary password, shown once, and choose their own when they first log
                in.
              </p>
              <div><button type="submit">Add</button></div>
            </form>`
        : ''
    }`;
}

export function temporaryPasswordView(
  shopId: string,
  person: Operator,
  password: string,
  what: 'created' | 'reset',
): Html {
  return html`<p class="flash flash-done" role="status">
      ${what === 'created' ? `${person.name}'s account is made.` : `${person.name}'s password is reset; their sessions are ended.`}
      Give them this temporary password; it is not shown again, and they choose their own at their
      next log-in.
    </p>
    <dl class="facts">
      <dt>Login</dt>
      <dd><code>${person.login}</code></dd>
      <dt>Temporary password</dt>
      <dd><code class="secret" data-testid="temporary-password">${password}</code></dd>
    </dl>
    <p><a class="button" href="/console/shops/${shopId}/people">Done</a></p>`;
}
