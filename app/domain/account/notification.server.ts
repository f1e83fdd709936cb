import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { webhookSecretSlot } from '@switchyard/db/security/secrets.ts';
import { InputError } from '#app/domain/errors.ts';
import { type AccountCtx, loadSelf, parseInput } from './account.server.ts';
import { type NotificationInput, notificationSchema } from './schemas.ts';
import { parseUserSetting, publicSetting, type UserSetting } from './setting.ts';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * PUT /api/user/setting: stored in the user's setting JSON (other keys kept). A webhook needs an https URL; the
 * notification e-mail may be empty (then the bound e-mail is used). An empty secret keeps the stored one; a new
 * one is stored sealed for this user with SECRETS_KEY (ADR 035; the notifier opens it to sign the webhook).
 */
export async function updateNotificationSettings(ctx: AccountCtx, input: unknown) {
  const data: NotificationInput = parseInput(ctx, notificationSchema, input);
  const user = await loadSelf(ctx);
  const current = parseUserSetting(user.setting);
  const webhookUrl = data.webhook_url ?? '';
  if (data.notify_type === 'webhook') {
    if (!webhookUrl) throw new InputError(ctx.t('settings:errors.webhookRequired'), { webhook_url: [] });
    let url: URL | null = null;
    try {
      url = new URL(webhookUrl);
    } catch {
      url = null;
    }
    if (url?.protocol !== 'https:' || !url?.hostname)
      throw new InputError(ctx.t('settings:errors.webhookHttps'), { webhook_url: [] });
  } else if (webhookUrl && !/^https:\/\//i.test(webhookUrl)) {
    throw new InputError(ctx.t('settings:errors.webhookHttps'), { webhook_url: [] });
  }
  const email = data.notification_email ?? '';
  if (email && !EMAIL_RE.test(email))
    throw new InputError(ctx.t('settings:errors.email'), { notification_email: [] });
  const next: UserSetting = {
    ...current,
    notify_type: data.notify_type,
    quota_warning_threshold: data.quota_warning_threshold,
    webhook_url: webhookUrl,
    webhook_secret: data.webhook_secret
      ? await ctx.secrets.seal(data.webhook_secret, webhookSecretSlot(user.id))
      : current.webhook_secret,
    notification_email: email,
  };
  user.setting = JSON.stringify(next);
  ctx.em.create(AuditEntry, {
    actorId: user.id,
    action: 'user.notification_settings',
    targetType: 'user',
    targetId: String(user.id),
    before: JSON.stringify(publicSetting(current)),
    after: JSON.stringify(publicSetting(next)),
  });
  await ctx.em.flush();
  return publicSetting(next);
}
