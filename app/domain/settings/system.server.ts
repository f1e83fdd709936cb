/**
 * Settings "system" tab (seed 000 §2 "system tab", §3 Option, §6, §9): one option form per section (ADR 023):
 * general (ServerAddress and WorkerUrl stored without a trailing slash, WorkerValidKey), login and registration
 * toggles (disabling password login must be confirmed: seed 000 §6), e-mail domain whitelist and alias
 * restriction, SMTP (port 587 by default, SSL forced on 465) with a "send test mail" button, GitHub and LinuxDO
 * OAuth, WeChat server, Telegram login and Turnstile. Secrets are write-only (registry `secret`).
 */
import { data } from '@remix-run/node';
import { User } from '@switchyard/db/entities/user.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import { asAuthT } from '#app/domain/auth/i18n.server.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { InputError, isDomainError, UnauthorizedError } from '#app/domain/errors.ts';
import { sendMail } from '#app/domain/mail/mailer.server.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';
import { type OptionsCtx, requireOptionsAdmin } from '#app/domain/settings/options.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const TEST_MAIL_INTENT = 'systemTestMail';

export const SYSTEM_FORMS = [
  {
    tab: 'system',
    id: 'systemGeneral',
    keys: ['ServerAddress', 'WorkerUrl', 'WorkerValidKey'],
    saved: 'systemTab.saved.general',
  },
  {
    tab: 'system',
    id: 'systemLogin',
    keys: [
      'PasswordLoginEnabled',
      'PasswordRegisterEnabled',
      'EmailVerificationEnabled',
      'RegisterEnabled',
      'GitHubOAuthEnabled',
      'LinuxDOOAuthEnabled',
      'WeChatAuthEnabled',
      'TelegramOAuthEnabled',
      'TurnstileCheckEnabled',
    ],
    saved: 'systemTab.saved.login',
    confirm: { key: 'PasswordLoginEnabled', value: 'false', message: 'systemTab.passwordLoginWarning' },
  },
  {
    tab: 'system',
    id: 'systemEmailDomain',
    keys: ['EmailDomainRestrictionEnabled', 'EmailAliasRestrictionEnabled', 'EmailDomainWhitelist'],
    saved: 'systemTab.saved.emailDomain',
  },
  {
    tab: 'system',
    id: 'systemSmtp',
    keys: ['SMTPServer', 'SMTPPort', 'SMTPAccount', 'SMTPFrom', 'SMTPToken', 'SMTPSSLEnabled'],
    saved: 'systemTab.saved.smtp',
  },
  {
    tab: 'system',
    id: 'systemGitHub',
    keys: ['GitHubClientId', 'GitHubClientSecret'],
    saved: 'systemTab.saved.github',
  },
  {
    tab: 'system',
    id: 'systemLinuxDO',
    keys: ['LinuxDOClientId', 'LinuxDOClientSecret'],
    saved: 'systemTab.saved.linuxdo',
  },
  {
    tab: 'system',
    id: 'systemWeChat',
    keys: ['WeChatServerAddress', 'WeChatServerToken', 'WeChatAccountQRCodeImageURL'],
    saved: 'systemTab.saved.wechat',
  },
  {
    tab: 'system',
    id: 'systemTelegram',
    keys: ['TelegramBotName', 'TelegramBotToken'],
    saved: 'systemTab.saved.telegram',
  },
  {
    tab: 'system',
    id: 'systemTurnstile',
    keys: ['TurnstileSiteKey', 'TurnstileSecretKey'],
    saved: 'systemTab.saved.turnstile',
  },
] as const satisfies readonly OptionFormSpec[];

export type SystemTabData = OptionFormValues;

export function loadSystemTab(
  options: Pick<OptionService, 'getRaw'>,
  viewer: Pick<SessionUser, 'role'>,
): SystemTabData {
  return loadOptionForms(options, SYSTEM_FORMS, viewer);
}

export type TestMailReply = { intent: typeof TEST_MAIL_INTENT; sent?: string; error?: string };

/**
 * Sends a test message through the stored SMTP settings to the administrator's own e-mail (save the SMTP form
 * first). Refused when the administrator has no e-mail bound or SMTP is not configured / refuses.
 */
export async function sendTestMail(
  ctx: Pick<OptionsCtx, 'actor' | 't'>,
  services: Pick<ConsoleServices, 'orm' | 'options' | 'mailTransport'>,
): Promise<string> {
  requireOptionsAdmin(ctx);
  const user = await services.orm.em.fork().findOne(User, { id: ctx.actor.id });
  const to = user?.email ?? '';
  if (!to) throw new InputError(ctx.t('settings:systemTab.noEmail'));
  const system = services.options.get('SystemName');
  const text = ctx.t('settings:systemTab.testMailBody', { system });
  await sendMail(
    services,
    { to, subject: ctx.t('settings:systemTab.testMailSubject', { system }), text, html: `<p>${text}</p>` },
    asAuthT(ctx.t),
  );
  return to;
}

/** POST /setting?tab=system intent=systemTestMail: the answer is shown under the button. */
export async function testMailPageAction(request: Request, services: ConsoleServices, user: SessionUser) {
  const t = await getFixedT(request);
  try {
    const to = await sendTestMail({ actor: user, t }, services);
    return data<TestMailReply>({
      intent: TEST_MAIL_INTENT,
      sent: t('settings:systemTab.testMailSent', { to }),
    });
  } catch (error) {
    if (isDomainError(error) && !(error instanceof UnauthorizedError)) {
      return data<TestMailReply>(
        { intent: TEST_MAIL_INTENT, error: error.message },
        { status: error.status === 403 ? 403 : 400 },
      );
    }
    throw error;
  }
}
