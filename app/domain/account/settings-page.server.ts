import { createCookie } from '@remix-run/node';
import { Role } from '@switchyard/db/entities/user.ts';
import type { AccountCtx } from './account.server.ts';
import { listUserModels, loadSelf, quotaDisplay, selfView } from './account.server.ts';
import { parseUserSetting, publicSetting } from './setting.ts';

export { DIALOGS, parseDialog, parseTab, SETTING_TABS, type SettingDialog, type SettingTab } from './tabs.ts';

/** The model tags' more/collapse state, remembered in a cookie so it works without JavaScript. */
export const modelsExpandedCookie = createCookie('sy_models_expanded', {
  path: '/',
  sameSite: 'lax',
  httpOnly: true,
  maxAge: 60 * 60 * 24 * 365,
});

export async function readModelsExpanded(request: Request): Promise<boolean> {
  return (await modelsExpandedCookie.parse(request.headers.get('Cookie'))) === true;
}

/** Everything the personal tab renders (no secrets: the webhook secret is reported as set / not set). */
export async function personalTabData(ctx: AccountCtx, request: Request) {
  const user = await loadSelf(ctx);
  const self = selfView(user);
  const models = await listUserModels(ctx);
  const o = ctx.options;
  const setting = publicSetting(parseUserSetting(user.setting));
  const origin = new URL(request.url).origin;
  return {
    self,
    isAdmin: self.role >= Role.Admin,
    /** Whether changing the password or deleting the account asks for the current one (ADR 016). */
    hasPassword: Boolean(user.passwordHash),
    models,
    modelsExpanded: await readModelsExpanded(request),
    display: quotaDisplay(o),
    minTransfer: Math.ceil(quotaDisplay(o).quotaPerUnit),
    inviteLink: `${origin}/register?aff=${encodeURIComponent(self.aff_code)}`,
    notify: {
      notify_type: setting.notify_type,
      quota_warning_threshold: setting.quota_warning_threshold,
      webhook_url: setting.webhook_url,
      webhook_secret_set: setting.webhook_secret_set,
      notification_email: setting.notification_email,
    },
    providers: {
      email: Boolean(o.get('EmailVerificationEnabled')) || Boolean(String(o.get('SMTPServer') ?? '')),
      github: Boolean(o.get('GitHubOAuthEnabled')),
      linuxdo: Boolean(o.get('LinuxDOOAuthEnabled')),
      wechat: Boolean(o.get('WeChatAuthEnabled')),
      telegram: Boolean(o.get('TelegramOAuthEnabled')),
    },
    wechatQr: String(o.get('WeChatAccountQRCodeImageURL') ?? ''),
    telegramBot: String(o.get('TelegramBotName') ?? ''),
  };
}
export type PersonalTabData = Awaited<ReturnType<typeof personalTabData>>;
