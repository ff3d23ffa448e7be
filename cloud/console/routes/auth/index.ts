import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError } from '../../../errors.ts';
import { logIn } from '../../../operators/log-in.ts';
import type { Operator } from '../../../operators/operators.ts';
import { setupLinkShop, useSetupLink } from '../../../operators/setup-links.ts';
import { findShop } from '../../../shops/shops.ts';
import { problemText, publicCsrfToken, sendPage } from '../../page-context.ts';
import { safeNext } from '../../plugins/app/authentication.ts';
import { CONSOLE_PATH } from '../../plugins/external/session.ts';
import { loginForm, setupForm, setupQuery } from '../../schemas/auth.ts';
import { parseForm } from '../../schemas/form.ts';
import { html } from '../../views/html.ts';
import { publicPage, type Flash } from '../../views/layout.ts';
import { loginForm as loginView, setupFormView } from '../../views/login.ts';

export const DEVICE_COOKIE = 'cww_device';
/** A browser stays known to an account this long after its last log-in there (Chrome's cap). */
const DEVICE_COOKIE_DAYS = 400;
/** Log-in posts per address per minute, whatever they carry (each costs a password hash). */
const LOGIN_POSTS_PER_MINUTE = 30;

const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const LOOPBACK_HOSTS = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** A setup link works only from the till itself: a loopback peer that named a loopback host. */
function fromThisComputer(request: FastifyRequest): boolean {
  return (
    LOOPBACK_ADDRESSES.has(request.raw.socket.remoteAddress ?? '') &&
    LOOPBACK_HOSTS.test(request.headers.host ?? '')
  );
}

/** The device cookie's account and token, when its signature holds. */
function deviceOf(request: FastifyRequest): { operatorId: string; token: string } | null {
  const raw = request.cookies[DEVICE_COOKIE];
  if (!raw) return null;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value) return null;
  const [operatorId = '', nonce = ''] = unsigned.value.split('.');
  return operatorId && nonce ? { operatorId, token: unsigned.value } : null;
}

/** A new session for `operator` (a new id: nothing of the session before log-in carries over). */
async function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  operator: Operator,
): Promise<void> {
  await request.session.regenerate();
  request.session.operatorId = operator.id;
  await request.server.book.sessions.create(request.session.sessionId, operator.id, {
    operatorId: operator.id,
  });
  reply.setCookie(DEVICE_COOKIE, `${operator.id}.${randomBytes(16).toString('base64url')}`, {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.server.book.secureCookies,
    signed: true,
    maxAge: DEVICE_COOKIE_DAYS * 86_400,
  });
}

const authRoutes: FastifyPluginAsync = async (fastify) => {
  const { book } = fastify;
  const loginPage = (
    reply: FastifyReply,
    next: string,
    login: string,
    flash: Flash | null,
    status = 200,
  ) =>
    sendPage(
      reply,
      publicPage(
        'Log in',
        book.assetVersion,
        loginView(publicCsrfToken(reply), next, login),
        flash,
      ),
      status,
    );

  fastify.get('/login', { config: { public: true } }, async (request, reply) => {
    const next = safeNext((request.query as { next?: unknown }).next);
    if (request.operator) return reply.redirect(next, 303);
    return loginPage(reply, next, '', null);
  });

  fastify.post(
    '/login',
    {
      config: {
        public: true,
        rateLimit: { max: LOGIN_POSTS_PER_MINUTE, timeWindow: '1 minute' },
      },
    },
    async (request, reply) => {
      const form = parseForm(loginForm, request.body);
      const next = safeNext(form.next);
      const result = await logIn(book.db, book.loginLimits, {
        login: form.login,
        password: form.password,
        address: request.ip,
        device: deviceOf(request),
      });
      switch (result.outcome) {
        case 'ok':
          await startSession(request, reply, result.operator);
          return reply.redirect(
            result.operator.mustChangePassword ? '/console/account' : next,
            303,
          );
        case 'held':
          void reply.header('Retry-After', String(result.retryAfterSeconds));
          return loginPage(
            reply,
            next,
            form.login,
            {
              kind: 'problem',
              text: `Too many failed log-ins from here or for this account. Try again in ${Math.ceil(result.retryAfterSeconds / 60)} min, or from a browser that has logged in to it before.`,
            },
            429,
          );
        case 'disabled':
          return loginPage(
            reply,
            next,
            form.login,
            { kind: 'problem', text: 'This account is disabled: ask whoever manages it.' },
            403,
          );
        case 'refused':
          return loginPage(
            reply,
            next,
            form.login,
            { kind: 'problem', text: 'That login and password do not match an account.' },
            401,
          );
      }
    },
  );

  fastify.post('/logout', { config: { beforeNewPassword: true } }, async (request, reply) => {
    await request.session.destroy();
    return reply.redirect('/console/login', 303);
  });

  const setupRefused = (reply: FastifyReply, text: string, status: number) =>
    sendPage(
      reply,
      publicPage(
        'Set up the back office',
        book.assetVersion,
        html`<p>${text}</p>
          <p><a href="/console/login">Log in</a></p>`,
      ),
      status,
    );

  fastify.get('/setup', { config: { public: true } }, async (request, reply) => {
    if (!book.setupLinks || !fromThisComputer(request)) {
      return setupRefused(reply, 'Setup links work only on the till itself.', 403);
    }
    const { token } = parseForm(setupQuery, request.query);
    const shopId = token ? await setupLinkShop(book.db, token) : undefined;
    const shop = shopId && (await findShop(book.db, shopId));
    if (!shop) {
      return setupRefused(
        reply,
        'This setup link was used already, or the till made a newer one when it started again (the tray and the till’s start-up message show it).',
        404,
      );
    }
    return sendPage(
      reply,
      publicPage(
        'Set up the back office',
        book.assetVersion,
        setupFormView(publicCsrfToken(reply), token, shop.name),
      ),
    );
  });

  fastify.post('/setup', { config: { public: true } }, async (request, reply) => {
    if (!book.setupLinks || !fromThisComputer(request)) {
      return setupRefused(reply, 'Setup links work only on the till itself.', 403);
    }
    const form = parseForm(setupForm, request.body);
    const again = async (text: string, status: number) => {
      const shopId = await setupLinkShop(book.db, form.token);
      const shop = shopId && (await findShop(book.db, shopId));
      if (!shop) return setupRefused(reply, 'This setup link was used already or replaced.', 404);
      return sendPage(
        reply,
        publicPage(
          'Set up the back office',
          book.assetVersion,
          setupFormView(publicCsrfToken(reply), form.token, shop.name),
          { kind: 'problem', text },
        ),
        status,
      );
    };
    if (form.password !== form.repeat) return again('The two passwords differ.', 400);
    try {
      const { operator } = await useSetupLink(book.db, form.token, {
        login: form.login,
        name: form.name,
        password: form.password,
      });
      book.onSetupLinkUsed();
      await startSession(request, reply, operator);
      return reply.redirect(`/console/shops/${operator.shops[0]}`, 303);
    } catch (error) {
      if (error instanceof LedgerError && error.status === 400) {
        return again(problemText(error), 400);
      }
      if (error instanceof LedgerError && error.code === 'LoginTaken') {
        return again(problemText(error), 409);
      }
      throw error;
    }
  });
};

export default authRoutes;
