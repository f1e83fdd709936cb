import { z } from 'zod';
import { INT8, intInput } from '#app/domain/input.ts';
import { THRESHOLD_PRESETS } from './setting.ts';

/**
 * Input schemas shared by the /setting page actions and the /api/user/* routes (same schema, same domain
 * function). Messages are i18n keys of the `settings` namespace; domain code translates them.
 */
/**
 * Optional text: absent or null is "not given"; a string is trimmed; any other type (true, {}, a number) is
 * refused with `typeMessage`, never stored as its String() ("true", "[object Object]").
 */
const optionalText = (max: number, message: string, typeMessage = 'errors.checkInput') =>
  z.preprocess(
    (v) => (v == null ? undefined : typeof v === 'string' ? v.trim() : v),
    z.string(typeMessage).max(max, message).optional(),
  );
const optionalSecret = z.preprocess(
  (v) => (v == null || v === '' ? undefined : v),
  z.string('errors.checkInput').optional(),
);

/** The username's length and characters are the one rule of app/domain/users/username.ts (checked by updateSelf). */
export const updateSelfSchema = z.object({
  username: z.preprocess(
    (v) => (v == null ? undefined : typeof v === 'string' ? v.trim() : v),
    z.string('errors.checkInput').optional(),
  ),
  display_name: optionalText(20, 'errors.displayNameTooLong'),
  password: optionalSecret,
  password2: optionalSecret,
  /** The current password (new-api's name), required to change a password the account already has. */
  original_password: optionalSecret,
});
export type UpdateSelfInput = z.infer<typeof updateSelfSchema>;

export const deleteSelfSchema = z.object({
  confirm: z.preprocess(
    (v) => (v == null ? '' : typeof v === 'string' ? v.trim() : v),
    z.string('errors.checkInput'),
  ),
  /** The current password (also accepted as `original_password`), required when the account has one. */
  password: optionalSecret,
  original_password: optionalSecret,
});
export type DeleteSelfInput = z.infer<typeof deleteSelfSchema>;

export const transferSchema = z.object({
  quota: intInput(INT8, 'errors.quotaNumber'),
});
export type TransferInput = z.infer<typeof transferSchema>;

export const notificationSchema = z.object({
  notify_type: z.enum(['email', 'webhook'], { message: 'errors.notifyType' }),
  quota_warning_threshold: intInput({ min: 1, max: INT8.max }, 'errors.threshold'),
  webhook_url: optionalText(1000, 'errors.webhookUrl'),
  webhook_secret: optionalText(255, 'errors.webhookSecret'),
  notification_email: optionalText(255, 'errors.email'),
});
export type NotificationInput = z.infer<typeof notificationSchema>;

export { THRESHOLD_PRESETS };
