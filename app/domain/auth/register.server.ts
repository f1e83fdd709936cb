import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import type { TFunction } from 'i18next';
import { z } from 'zod';
import { parseAuthInput } from '#app/domain/auth/http.server.ts';
import { asAuthT, authTFor } from '#app/domain/auth/i18n.server.ts';
import { InputError } from '#app/domain/errors.ts';
import {
  checkEmailAllowed,
  consumeEmailCode,
  isEmailTaken,
  normalizeEmail,
} from '#app/domain/mail/verification.server.ts';
import { checkUsername as checkUsernameRule, USERNAME_MAX } from '#app/domain/users/username.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** Seed 000 §5 "register" and new-api: username 1..20 characters, password 8..20. */
export { USERNAME_MAX };
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;

/** Body of POST /api/user/register and fields of the register form (snake_case wire names). */
export const RegisterSchema = z.object({
  username: z.string().trim().default(''),
  password: z.string().default(''),
  /** Checked only when sent (new-api checks it in the browser). */
  password2: z.string().optional(),
  email: z.string().trim().default(''),
  verification_code: z.string().trim().default(''),
  aff_code: z.string().trim().default(''),
});
export type RegisterInput = z.input<typeof RegisterSchema>;

export type NewUserInput = {
  username: string;
  /** null for accounts created by a third-party login (no password login until one is set). */
  password: string | null;
  displayName?: string;
  email?: string;
  githubId?: string;
  wechatId?: string;
  telegramId?: string;
  linuxDoId?: string;
  /** Invitation code of the inviter (users.aff_code); unknown codes are ignored, as new-api does. */
  affCode?: string;
  /** Who creates the user (an admin adding one); null for a sign-up. */
  actorId?: number | null;
  ip?: string;
};

const AFF_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

function randomAffCode(length = 8): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => AFF_ALPHABET[b % AFF_ALPHABET.length]).join('');
}

/** Quota as the management log shows it: dollars when DisplayInCurrencyEnabled, else raw points. */
export function formatQuota(options: ConsoleServices['options'], quota: number): string {
  if (options.get('DisplayInCurrencyEnabled')) {
    return `$${(quota / options.get('QuotaPerUnit')).toFixed(6)}`;
  }
  return `${quota}`;
}

/** Username rules (app/domain/users/username.ts); throws InputError with the seed's messages. */
export function checkUsername(username: string, t: TFunction = authTFor()): void {
  checkUsernameRule(username, t);
}

/** Password rules (8..20 characters); throws InputError. */
export function checkPassword(password: string, t: TFunction = authTFor()): void {
  if (!password) throw new InputError(t('register.empty'), { password: [t('register.empty')] });
  if (password.length < PASSWORD_MIN) {
    throw new InputError(t('register.passwordShort'), { password: [t('register.passwordShort')] });
  }
  if (password.length > PASSWORD_MAX) {
    throw new InputError(t('register.passwordLong'), { password: [t('register.passwordLong')] });
  }
}

/**
 * Creates a user and pays the invitation rewards in ONE transaction: QuotaForNewUser (+ QuotaForInvitee when
 * invited) on the new user; QuotaForInviter into the inviter's pending aff_quota and aff_history_quota, and
 * aff_count + 1 (the inviter row is locked). Every balance change gets a management log row (type 3) and an
 * AuditEntry. Throws InputError when the username (or e-mail) is taken. Used by register, OAuth sign-up
 * and admin "add user".
 */
export async function createUserWithInvitation(
  em: EntityManager,
  services: Pick<ConsoleServices, 'options'>,
  input: NewUserInput,
  tIn?: TFunction,
): Promise<User> {
  const { options } = services;
  const t = asAuthT(tIn);
  const passwordHash = input.password ? await hashPassword(input.password) : '';
  const email = input.email ? normalizeEmail(input.email) : '';
  const ip = (input.ip ?? '').slice(0, 64);
  return em.transactional(async (tx) => {
    if (await tx.count(User, { username: input.username }, { filters: false })) {
      throw new InputError(t('register.usernameTaken'), { username: [t('register.usernameTaken')] });
    }
    if (email && (await isEmailTaken(tx, email))) {
      throw new InputError(t('register.emailTaken'), { email: [t('register.emailTaken')] });
    }
    const inviter = input.affCode
      ? await tx.findOne(
          User,
          { affCode: input.affCode, deletedAt: null },
          { filters: false, lockMode: 4 /* PESSIMISTIC_WRITE */ },
        )
      : null;
    const forNewUser = options.get('QuotaForNewUser');
    const forInvitee = inviter ? options.get('QuotaForInvitee') : 0;
    const forInviter = inviter ? options.get('QuotaForInviter') : 0;

    let affCode = randomAffCode();
    while (await tx.count(User, { affCode }, { filters: false })) affCode = randomAffCode();
    const user = tx.create(User, {
      username: input.username,
      displayName: (input.displayName ?? input.username).slice(0, 64),
      passwordHash,
      affCode,
      email,
      githubId: input.githubId ?? '',
      wechatId: input.wechatId ?? '',
      telegramId: input.telegramId ?? '',
      linuxDoId: input.linuxDoId ?? '',
      inviterId: inviter?.id ?? 0,
      quota: forNewUser + forInvitee,
    } as never) as User;
    await tx.flush();

    const audit = (action: string, target: User, before: unknown, after: unknown) =>
      tx.create(AuditEntry, {
        actorId: input.actorId ?? null,
        action,
        targetType: 'user',
        targetId: String(target.id),
        before: before === null ? null : JSON.stringify(before),
        after: JSON.stringify(after),
        ip,
      });
    const log = (target: User, quota: number, content: string) =>
      tx.create(Log, {
        userId: target.id,
        username: target.username,
        type: LogType.Manage,
        quota,
        content,
        ip,
      });

    audit('user.create', user, null, {
      username: user.username,
      quota: user.quota,
      inviter_id: user.inviterId,
      via: input.password ? 'password' : 'oauth',
    });
    if (forNewUser > 0)
      log(user, forNewUser, t('audit.newUserQuota', { quota: formatQuota(options, forNewUser) }));
    if (inviter) {
      if (forInvitee > 0) {
        log(user, forInvitee, t('audit.inviteeQuota', { quota: formatQuota(options, forInvitee) }));
      }
      const before = {
        aff_count: inviter.affCount,
        aff_quota: inviter.affQuota,
        aff_history_quota: inviter.affHistoryQuota,
      };
      inviter.affCount += 1;
      inviter.affQuota += forInviter;
      inviter.affHistoryQuota += forInviter;
      audit('user.invite_reward', inviter, before, {
        aff_count: inviter.affCount,
        aff_quota: inviter.affQuota,
        aff_history_quota: inviter.affHistoryQuota,
        invitee_id: user.id,
      });
      if (forInviter > 0) {
        log(
          inviter,
          forInviter,
          t('audit.inviterQuota', { username: user.username, quota: formatQuota(options, forInviter) }),
        );
      }
    }
    await tx.flush();
    return user;
  });
}

/** What registerUser needs: the request's em and language, the options, the client IP. */
export type RegisterCtx = {
  em: EntityManager;
  options: ConsoleServices['options'];
  t: TFunction;
  ip?: string;
};

/**
 * Sign-up by password (POST /api/user/register and the register page): RegisterEnabled and
 * PasswordRegisterEnabled, username and password rules, confirmation, e-mail + single-use code when
 * EmailVerificationEnabled, then createUserWithInvitation. Rate limiting and Turnstile are the caller's
 * guards. Throws InputError with the seed's messages.
 */
export async function registerUser(ctx: RegisterCtx, raw: RegisterInput): Promise<User> {
  const { options } = ctx;
  const t = asAuthT(ctx.t);
  const input = parseAuthInput(t, RegisterSchema, raw);
  if (!options.get('RegisterEnabled')) throw new InputError(t('register.disabled'));
  if (!options.get('PasswordRegisterEnabled')) throw new InputError(t('register.passwordDisabled'));
  if (!input.username || !input.password) throw new InputError(t('register.empty'));
  checkUsername(input.username, t);
  checkPassword(input.password, t);
  if (input.password2 !== undefined && input.password2 !== input.password) {
    throw new InputError(t('register.mismatch'), { password2: [t('register.mismatch')] });
  }
  let email = '';
  if (options.get('EmailVerificationEnabled')) {
    if (!input.email || !input.verification_code) {
      throw new InputError(t('register.emailRequired'), {
        ...(input.email ? {} : { email: [t('register.emailRequired')] }),
        ...(input.verification_code ? {} : { verification_code: [t('register.emailRequired')] }),
      });
    }
    checkEmailAllowed(options, input.email, t);
    email = normalizeEmail(input.email);
    // Cheap refusals first, so a taken name or address does not burn the code.
    if (await ctx.em.count(User, { username: input.username }, { filters: false })) {
      throw new InputError(t('register.usernameTaken'), { username: [t('register.usernameTaken')] });
    }
    if (await isEmailTaken(ctx.em, email)) {
      throw new InputError(t('register.emailTaken'), { email: [t('register.emailTaken')] });
    }
    await consumeEmailCode(ctx.em, email, 'register', input.verification_code, t);
  }
  return createUserWithInvitation(
    ctx.em,
    { options },
    {
      username: input.username,
      password: input.password,
      ...(email ? { email } : {}),
      ...(input.aff_code ? { affCode: input.aff_code } : {}),
      ...(ctx.ip ? { ip: ctx.ip } : {}),
    },
    t,
  );
}
