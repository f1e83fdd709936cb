/**
 * The user's `setting` JSON (seed 000 §3): notify_type (email | webhook), quota_warning_threshold, webhook_url,
 * webhook_secret, notification_email. Unknown keys are preserved when the notification card saves.
 */
export type NotifyType = 'email' | 'webhook';

export type UserSetting = {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret: string;
  notification_email: string;
  [key: string]: unknown;
};

/** Threshold presets (seed 000 §5): 100000 (0.2$), 500000 (1$), 1000000 (5$), 5000000 (10$). */
export const THRESHOLD_PRESETS = [100000, 500000, 1000000, 5000000] as const;
/** For a user who never saved a setting. */
export const DEFAULT_THRESHOLD = 100000;
/** For a stored setting that lacks a threshold. */
export const LEGACY_DEFAULT_THRESHOLD = 500000;

export function parseUserSetting(raw: string | null | undefined): UserSetting {
  let stored: Record<string, unknown> | null = null;
  if (raw?.trim()) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        stored = parsed as Record<string, unknown>;
    } catch {
      stored = null;
    }
  }
  const s = stored ?? {};
  const threshold = Number(s.quota_warning_threshold);
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    ...s,
    notify_type: s.notify_type === 'webhook' ? 'webhook' : 'email',
    quota_warning_threshold:
      Number.isFinite(threshold) && threshold > 0
        ? threshold
        : stored
          ? LEGACY_DEFAULT_THRESHOLD
          : DEFAULT_THRESHOLD,
    webhook_url: str(s.webhook_url),
    webhook_secret: str(s.webhook_secret),
    notification_email: str(s.notification_email),
  };
}

/** The setting as the wire and the page may see it: the webhook secret is never sent back. */
export type PublicSetting = {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret_set: boolean;
  notification_email: string;
  [key: string]: unknown;
};

export function publicSetting(setting: UserSetting): PublicSetting {
  const { webhook_secret, ...rest } = setting;
  return {
    ...rest,
    notify_type: setting.notify_type,
    quota_warning_threshold: setting.quota_warning_threshold,
    webhook_url: setting.webhook_url,
    notification_email: setting.notification_email,
    webhook_secret_set: webhook_secret !== '',
  };
}

/**
 * The balance below which the user is warned: their own quota_warning_threshold when their setting holds a
 * positive one (the notification card always saves one), else the QuotaRemindThreshold option (new-api's rule).
 */
export function warningThreshold(raw: string | null | undefined, quotaRemindThreshold: number): number {
  let stored: unknown;
  try {
    stored = raw?.trim() ? JSON.parse(raw) : null;
  } catch {
    stored = null;
  }
  const own =
    stored && typeof stored === 'object' && !Array.isArray(stored)
      ? Number((stored as Record<string, unknown>).quota_warning_threshold)
      : Number.NaN;
  return Number.isFinite(own) && own > 0 ? own : quotaRemindThreshold;
}
