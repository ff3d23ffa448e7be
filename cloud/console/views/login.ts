import { html, type Html } from './html.ts';

export function loginForm(csrfToken: string, next: string, login = ''): Html {
  return html`<form method="post" action="/console/login" class="card stack">
    <input type="hidden" name="_csrf" value="${csrfToken}" />
    <input type="hidden" name="next" value="${next}" />
    <label
      >Login
      <input name="login" autocomplete="username" required value="${login}" autofocus />
    </label>
    <label
      >Password
      <input name="password" type="password" autocomplete="current-password" required />
    </label>
    <button type="submit">Log in</button>
  </form>`;
}

export function setupFormView(csrfToken: string, token: string, shopName: string): Html {
  return html`<p>
      Make the owner's account of <strong>${shopName}</strong>. This link works once, and only on
      this computer.
    </p>
    <form method="post" action="/console/setup" class="card stack">
      <input type="hidden" name="_csrf" value="${csrfToken}" />
      <input type="hidden" name="token" value="${token}" />
      <label>Your name <input name="name" autocomplete="name" required maxlength="100" /></label>
      <label
        >Login
        <input
          name="login"
          autocomplete="username"
          required
          pattern="[a-z0-9][a-z0-9._@\\-]{2,63}"
          title="3 to 64 of a-z, 0-9 and . _ @ -"
        />
      </label>
      <label
        >Password (10 characters or more)
        <input
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minlength="10"
        />
      </label>
      <label
        >The password again
        <input name="repeat" type="password" autocomplete="new-password" required minlength="10" />
      </label>
      <button type="submit">Make the account</button>
    </form>`;
}
