import { z } from 'zod';
import { THRESHOLD_PRESETS } from './setting.ts';

/**
 * Input schemas shared by the /setting page actions and the /api/user/* routes (same schema, same domain
 * function). Messages are i18n keys of the `settings` namespace; domain code translates them.
 */
const optionalText = (max: number, message: string) =>
  z.preprocess((v) => (v == null ? undefined : String(v).trim()), z.string().max(max, message).optional());

export const updateSelfSchema = z.object({
  username: optionalText(20, 'errors.usernameTooLong'),
  display_name: optionalText(20, 'errors.displayNameTooLong'),
  password: z.preprocess((v) => (v == null || v === '' ? undefined : String(v)), z.string().optional()),
  password2: z.preprocess((v) => (v == null || v === '' ? undefined : String(v)), z.string().optional()),
  /** The current password (new-api's name), required to change a password the account already has. */
  original_password: z.preprocess(
    (v) => (v == null || v === '' ? undefined : String(v)),
    z.string().optional(),
  ),
});
export type UpdateSelfInput = z.infer<typeof updateSelfSchema>;

export const deleteSelfSchema = z.object({
  confirm: z.preprocess((v) => (v == null ? '' : String(v).trim()), z.string()),
  /** The current password (also accepted as `original_password`), required when the account has one. */
  password: z.preprocess((v) => (v == null || v === '' ? undefined : String(v)), z.string().optional()),
  original_password: z.preprocess(
    (v) => (v == null || v === '' ? undefined : String(v)),
    z.string().optional(),
  ),
});
export type DeleteSelfInput = z.infer<typeof deleteSelfSchema>;

export const transferSchema = z.object({
  quota: z.coerce.number({ message: 'errors.quotaNumber' }).int('errors.quotaNumber'),
});
export type TransferInput = z.infer<typeof transferSchema>;

export const notificationSchema = z.object({
  notify_type: z.enum(['email', 'webhook'], { message: 'errors.notifyType' }),
  quota_warning_threshold: z.coerce
    .number({ message: 'errors.threshold' })
    .int('errors.threshold')
    .positive('errors.threshold'),
  webhook_url: optionalText(1000, 'errors.webhookUrl'),
  webhook_secret: optionalText(255, 'errors.webhookSecret'),
  notification_email: optionalText(255, 'errors.email'),
});
export type NotificationInput = z.infer<typeof notificationSchema>;

export { THRESHOLD_PRESETS };
