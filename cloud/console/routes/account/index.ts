import type { FastifyPluginAsync } from 'fastify';
import { ledgerErrors } from '../../../errors.ts';
import { changeOwnPassword, logOutEverywhere } from '../../../operators/accounts.ts';
import { sessionIdHash } from '../../../operators/session-store.ts';
import { act, pageContext, sendPage } from '../../page-context.ts';
import { passwordForm } from '../../schemas/account.ts';
import { parseForm } from '../../schemas/form.ts';
import { accountView } from '../../views/account.ts';
import { page } from '../../views/layout.ts';

/** The operator's own account: a new password, log out everywhere. */
const accountRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;
  const open = { config: { beforeNewPassword: true } };

  fastify.get('/account', open, async (request, reply) => {
    const ctx = await pageContext(request, reply, null);
    return sendPage(reply, page(ctx, 'Your account', accountView(ctx)));
  });

  fastify.post('/account/password', open, async (request, reply) => {
    return act(request, reply, '/console/account', async () => {
      const form = parseForm(passwordForm, request.body);
      if (form.next !== form.repeat)
        throw ledgerErrors.invalidInput('new password: the two differ');
      await changeOwnPassword(
        db,
        request.operator!,
        form.current,
        form.next,
        sessionIdHash(request.session.sessionId),
      );
      return 'Your password is changed; your other sessions are ended.';
    });
  });

  fastify.post('/account/log-out-everywhere', open, async (request, reply) => {
    await logOutEverywhere(db, request.operator!);
    await request.session.destroy();
    return reply.redirect('/console/login', 303);
  });
};

export default accountRoutes;
