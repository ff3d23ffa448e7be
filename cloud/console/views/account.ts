import type { Operator } from '../../operators/operators.ts';
import { html, type Html } from './html.ts';
import { csrfField } from './layout.ts';

export function accountView(ctx: { csrfToken: string; operator: Operator }): Html {
  const { operator } = ctx;
  return html`${
      operator.mustChangePassword
        ? html`<p class="flash flash-problem" role="alert">
            Choose your own password before anything else: the one you logged in with was temporary.
          </p>`
        : ''
    }
    <dl class="facts">
      <dt>Name</dt>
      <dd>${operator.name}</dd>
      <dt>Login</dt>
      <dd><code>${operator.login}</code></dd>
    </dl>
    <h2>Change your password</h2>
    <form method="post" action="/console/account/password" class="card stack">
      ${csrfField(ctx)}
      <label
        >Current password
        <input name="current" type="password" autocomplete="current-password" required
      /></label>
      <label
        >New password (10 characters or more)
        <input name="next" type="password" autocomplete="new-password" required minlength="10"
      /></label>
      <label
        >The new password again
        <input name="repeat" type="password" autocomplete="new-password" required minlength="10"
      /></label>
      <div><button type="submit">Change the password</button></div>
    </form>
    <h2>Log out everywhere</h2>
    <form method="post" action="/console/account/log-out-everywhere" class="card stack">
      ${csrfField(ctx)}
      <p>Ends every session of your account, on every computer, this one too.</p>
      <div><button type="submit" class="danger">Log out everywhere</button></div>
    </form>`;
}
