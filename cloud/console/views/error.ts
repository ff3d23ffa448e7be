import { html, type Html } from './html.ts';

const TITLES: Record<number, string> = {
  400: 'That request was not understood',
  401: 'Log in first',
  403: 'Not allowed',
  404: 'Not found',
  413: 'That was too much at once',
  415: 'That request was not understood',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'The ledger cannot reach its database',
};

export function errorTitle(status: number): string {
  return TITLES[status] ?? (status >= 500 ? TITLES[500]! : TITLES[400]!);
}

export function errorBody(text: string, loggedIn: boolean): Html {
  return html`<p>${text}</p>
    <p>
      <a href="${loggedIn ? '/console' : '/console/login'}"
        >${loggedIn ? 'Back to the start' : 'Log in'}</a
      >
    </p>`;
}
