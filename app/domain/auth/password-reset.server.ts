import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import type { TFunction } from 'i18next';
import { z } from 'zod';
import { asAuthT } from '#app/domain/auth/i18n.server.ts';
import { revokeUserSessions } from '#app/domain/auth/session.server.ts';
import { InputError } from '#app/domain/errors.ts';
import { sendMail } from '#app/domain/mail/mailer.server.ts';
import {
  consumeResetToken,
  issueResetToken,
  normalizeEmail,
  RESET_TOKEN_TTL_MINUTES,
} from '#app/domain/mail/verification.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** Seed 001 §7 "Password reset": the mailed link, then a new random password of 12 characters. */
export const RESET_PASSWORD_LENGTH = 12;

export type PasswordResetCtx = {
  em: EntityManager;
  options: ConsoleServices['options'];
  t?: TFunction;
  mailTransport?: ConsoleServices['mailTransport'];
  ip?: string;
};

export const ResetRequestSchema = z.object({ email: z.string().trim().default('') });
export const ResetConfirmSchema = z.object({
  email: z.string().trim().default(''),
  token: z.string().trim().default(''),
});

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789';

function randomPassword(length = RESET_PASSWORD_LENGTH): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => PASSWORD_ALPHABET[b % PASSWORD_ALPHABET.length]).join('');
}

/** `${ServerAddress}/user/reset?email=..&token=..` */
export function resetLink(options: ConsoleServices['options'], email: string, token: string): string {
  const base = options.get('ServerAddress').replace(/\/+$/, '');
  return `${base}/user/reset?${new URLSearchParams({ email, token })}`;
}

function findActiveByEmail(em: EntityManager, email: string): Promise<User | null> {
  return em.findOne(User, { email, deletedAt: null }, { filters: false, orderBy: { id: 'asc' } });
}

/**
 * GET /api/reset_password and the /reset page: mails a single-use link valid 15 minutes to the owner of
 * `email`. An unknown address gets the same answer (no account enumeration). Throws InputError for an empty
 * or malformed address, or when mail cannot be sent.
 */
export async function requestPasswordReset(ctx: PasswordResetCtx, rawEmail: string): Promise<void> {
  const t = asAuthT(ctx.t);
  const email = normalizeEmail(rawEmail);
  if (!email) throw new InputError(t('email.empty'), { email: [t('email.empty')] });
  if (!z.email().safeParse(email).success)
    throw new InputError(t('email.invalid'), { email: [t('email.invalid')] });
  const user = await findActiveByEmail(ctx.em, email);
  if (!user) return;
  const token = await issueResetToken(ctx.em, email, ctx.ip ?? '');
  // Throttled: answer as for an unknown address (the caller cannot tell the difference either).
  if (!token) return;
  const link = resetLink(ctx.options, email, token);
  const vars = { system: ctx.options.get('SystemName'), link, minutes: RESET_TOKEN_TTL_MINUTES };
  await sendMail(
    { options: ctx.options, ...(ctx.mailTransport ? { mailTransport: ctx.mailTransport } : {}) },
    {
      to: email,
      subject: t('mail.resetSubject', vars),
      text: t('mail.resetText', vars),
      html: t('mail.resetHtml', vars),
    },
    t,
  );
}

/**
 * POST /api/user/reset and the /user/reset page: consumes the token, sets a new random 12-character
 * password, ends every session of that user and returns the password. Throws InputError
 * ('reset link invalid or expired').
 */
export async function resetPassword(
  ctx: PasswordResetCtx,
  input: { email: string; token: string },
): Promise<string> {
  const t = asAuthT(ctx.t);
  const email = normalizeEmail(input.email);
  if (!email || !input.token) throw new InputError(t('reset.invalid'));
  await consumeResetToken(ctx.em, email, input.token, t);
  const password = randomPassword();
  const passwordHash = await hashPassword(password);
  await ctx.em.transactional(async (tx) => {
    const user = await findActiveByEmail(tx, email);
    if (!user) throw new InputError(t('reset.invalid'));
    user.passwordHash = passwordHash;
    await revokeUserSessions(tx, user.id);
    tx.create(AuditEntry, {
      actorId: user.id,
      action: 'user.password_reset',
      targetType: 'user',
      targetId: String(user.id),
      before: null,
      after: JSON.stringify({ sessions_revoked: true }),
      ip: (ctx.ip ?? '').slice(0, 64),
    });
  });
  return password;
}
