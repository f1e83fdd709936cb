/**
 * Settings "personal" tab actions (seed 000 §2 "personal tab"): POST /setting intent = transfer | password |
 * delete | token | notify | sendEmailCode | bindEmail | bindWechat | oauthBind | models. Success -> redirect with
 * a flash toast (PRG); the token is answered directly (shown once); refusals re-render the page with the message
 * next to the form (400; 403 and 429 keep their status).
 */
import { data, redirect } from '@remix-run/node';
import { oauthStartRedirect } from '#app/components/auth/oauth-start.server.ts';
import {
  type AccountCtx,
  deleteSelf,
  issueAccessToken,
  transferAffQuota,
  updateSelf,
} from '#app/domain/account/account.server.ts';
import { updateNotificationSettings } from '#app/domain/account/notification.server.ts';
import { modelsExpandedCookie } from '#app/domain/account/settings-page.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { clearSessionCookie, currentSessionId, type SessionUser } from '#app/domain/auth/session.server.ts';
import { InputError, isDomainError, UnauthorizedError } from '#app/domain/errors.ts';
import { issueEmailCode } from '#app/domain/mail/verification.server.ts';
import { bindEmail } from '#app/domain/oauth/email-bind.server.ts';
import { wechatBind } from '#app/domain/oauth/wechat.server.ts';
import { clientIp, enforceCriticalLimit } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export const PERSONAL = '/setting?tab=personal';

export type PersonalReply = {
  intent: string;
  error?: string;
  fieldErrors?: Record<string, string[]>;
  token?: string;
};

const text = (form: FormData, key: string) => {
  const v = form.get(key);
  return typeof v === 'string' ? v : '';
};

export async function personalAction(
  request: Request,
  services: ConsoleServices,
  user: SessionUser,
  ctx: AccountCtx,
  form: FormData,
) {
  const intent = text(form, 'intent');
  const t = ctx.t;
  const ok = (message: string, to = PERSONAL) => redirectWithToast(to, { type: 'success', message });
  try {
    switch (intent) {
      case 'transfer':
        await transferAffQuota(ctx, { quota: text(form, 'quota') });
        return ok(t('settings:toast.transferred'));
      case 'password':
        await updateSelf(
          ctx,
          {
            password: text(form, 'password'),
            password2: text(form, 'password2'),
            original_password: text(form, 'original_password'),
          },
          { currentSessionId: (await currentSessionId(request)) ?? undefined },
        );
        return ok(t('settings:toast.passwordChanged'));
      case 'delete': {
        await deleteSelf(ctx, { confirm: text(form, 'confirm'), password: text(form, 'password') });
        const headers = new Headers();
        headers.append('Set-Cookie', clearSessionCookie(request));
        headers.append(
          'Set-Cookie',
          await createToastHeader({ type: 'success', message: t('settings:toast.deleted') }),
        );
        return redirect('/login', { headers });
      }
      case 'token': {
        const token = await issueAccessToken(ctx);
        return data<PersonalReply>({ intent, token }, { headers: { 'Cache-Control': 'no-store' } });
      }
      case 'notify':
        await updateNotificationSettings(ctx, {
          notify_type: text(form, 'notify_type'),
          quota_warning_threshold: text(form, 'quota_warning_threshold'),
          webhook_url: text(form, 'webhook_url'),
          webhook_secret: text(form, 'webhook_secret'),
          notification_email: text(form, 'notification_email'),
        });
        return ok(t('settings:toast.notifyUpdated'));
      case 'sendEmailCode': {
        const email = text(form, 'email').trim();
        if (!email) throw new InputError(t('settings:errors.emailRequired'), { email: [] });
        await enforceCriticalLimit(request, services, 'verification');
        await issueEmailCode(
          {
            em: ctx.em as never,
            options: services.options,
            t: await authT(request),
            mailTransport: services.mailTransport,
            ip: clientIp(request, services),
          },
          email,
          'bind',
        );
        return ok(
          t('settings:toast.codeSent'),
          `${PERSONAL}&dialog=email&email=${encodeURIComponent(email)}`,
        );
      }
      case 'bindEmail':
        await bindEmail(services, request, user.id, { email: text(form, 'email'), code: text(form, 'code') });
        return ok(t('settings:toast.emailBound'));
      case 'bindWechat': {
        const code = text(form, 'code').trim();
        if (!code) throw new InputError(t('settings:errors.wechatCodeRequired'), { code: [] });
        await wechatBind(services, request, user.id, code);
        return ok(t('settings:toast.wechatBound'));
      }
      case 'oauthBind':
        return oauthStartRedirect(request, services, text(form, 'provider'), null);
      case 'models': {
        const expanded = text(form, 'expanded') === 'true';
        return redirect(PERSONAL, {
          headers: { 'Set-Cookie': await modelsExpandedCookie.serialize(expanded) },
        });
      }
      default:
        throw new InputError(t('settings:errors.unknownIntent'));
    }
  } catch (error) {
    if (isDomainError(error) && !(error instanceof UnauthorizedError)) {
      const fieldErrors = error instanceof InputError ? error.fieldErrors : {};
      return data<PersonalReply>(
        { intent, error: error.message, fieldErrors },
        { status: error.status === 429 || error.status === 403 ? error.status : 400 },
      );
    }
    throw error;
  }
}
