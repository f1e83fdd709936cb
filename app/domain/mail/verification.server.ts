import type { EntityManager } from '@mikro-orm/postgresql';
import { User } from '@switchyard/db/entities/user.ts';
import { VerificationCode, type VerificationPurpose } from '@switchyard/db/entities/verification-code.ts';
import type { TFunction } from 'i18next';
import { z } from 'zod';
import { asAuthT, authTFor } from '#app/domain/auth/i18n.server.ts';
import { sha256Hex } from '#app/domain/auth/session.server.ts';
import { InputError, TooManyRequestsError } from '#app/domain/errors.ts';
import { type MailServices, sendMail } from '#app/domain/mail/mailer.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** E-mail codes are valid 10 minutes; reset links 15 minutes (seed 000 §9, new-api). */
export const EMAIL_CODE_TTL_MINUTES = 10;
export const RESET_TOKEN_TTL_MINUTES = 15;
/** Wrong guesses allowed against one code before it is void. */
export const MAX_CODE_ATTEMPTS = 5;
export const EMAIL_CODE_LENGTH = 6;
/** At most this many codes or links are mailed to one address per SEND_WINDOW_MINUTES (mail bombing). */
export const MAX_SENDS_PER_ADDRESS = 5;
export const SEND_WINDOW_MINUTES = 10;

export type EmailCodePurpose = Extract<VerificationPurpose, 'register' | 'bind'>;

/** What issuing a code needs: the RequestCtx of any area fits (em, options, t). */
export type VerificationCtx = {
  em: EntityManager;
  options: ConsoleServices['options'];
  t?: TFunction;
  mailTransport?: ConsoleServices['mailTransport'];
  ip?: string;
};

const emailSchema = z.email();

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Seed 000 §5 and new-api: with EmailDomainRestrictionEnabled the domain must be on EmailDomainWhitelist;
 * with EmailAliasRestrictionEnabled a `+` alias, or dots in a Gmail local part, are refused. Also checks the
 * address is non-empty and well formed. Throws InputError.
 */
export function checkEmailAllowed(
  options: ConsoleServices['options'],
  email: string,
  t: TFunction = authTFor(),
): void {
  const address = normalizeEmail(email);
  if (!address) throw new InputError(t('email.empty'), { email: [t('email.empty')] });
  if (!emailSchema.safeParse(address).success || address.length > 255) {
    throw new InputError(t('email.invalid'), { email: [t('email.invalid')] });
  }
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (options.get('EmailDomainRestrictionEnabled')) {
    const allowed = options
      .get('EmailDomainWhitelist')
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean);
    if (!allowed.includes(domain)) {
      throw new InputError(t('email.domainNotAllowed'), { email: [t('email.domainNotAllowed')] });
    }
  }
  if (options.get('EmailAliasRestrictionEnabled')) {
    const gmail = domain === 'gmail.com' || domain === 'googlemail.com';
    if (local.includes('+') || (gmail && local.includes('.'))) {
      throw new InputError(t('email.aliasNotAllowed'), { email: [t('email.aliasNotAllowed')] });
    }
  }
}

/** Is the address bound to an account (deregistered accounts keep theirs)? */
export async function isEmailTaken(em: EntityManager, email: string): Promise<boolean> {
  return (await em.count(User, { email: normalizeEmail(email) })) > 0;
}

function randomCode(): string {
  const digits = crypto.getRandomValues(new Uint32Array(EMAIL_CODE_LENGTH));
  return Array.from(digits, (n) => String(n % 10)).join('');
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

const hashOf = (purpose: string, email: string, secret: string) => sha256Hex(`${purpose}:${email}:${secret}`);

/** Has `email` been sent MAX_SENDS_PER_ADDRESS codes or links within the window? */
export async function addressThrottled(em: EntityManager, email: string): Promise<boolean> {
  const since = new Date(Date.now() - SEND_WINDOW_MINUTES * 60_000);
  return (await em.count(VerificationCode, { email, createdAt: { $gt: since } })) >= MAX_SENDS_PER_ADDRESS;
}

/** Stores a new secret for (email, purpose), voiding the earlier unused ones. */
async function storeSecret(
  em: EntityManager,
  email: string,
  purpose: VerificationPurpose,
  secret: string,
  ttlMinutes: number,
  ip: string,
): Promise<void> {
  const codeHash = await hashOf(purpose, email, secret);
  await em.transactional(async (tx) => {
    await tx.nativeUpdate(
      VerificationCode,
      { email, purpose, consumedAt: null },
      { consumedAt: new Date(), attempts: MAX_CODE_ATTEMPTS },
    );
    tx.create(VerificationCode, {
      email,
      purpose,
      codeHash,
      expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      consumedAt: null,
      attempts: 0,
      ip: ip.slice(0, 64),
    });
  });
}

/**
 * Checks the address, refuses one already bound to an account (new-api does so for both purposes), stores a
 * fresh 6-digit code (hashed, 10 minutes, single use) and mails it. Throws InputError.
 */
export async function issueEmailCode(
  ctx: VerificationCtx,
  email: string,
  purpose: EmailCodePurpose,
): Promise<void> {
  const t = asAuthT(ctx.t);
  checkEmailAllowed(ctx.options, email, t);
  const address = normalizeEmail(email);
  if (await isEmailTaken(ctx.em, address))
    throw new InputError(t('email.taken'), { email: [t('email.taken')] });
  if (await addressThrottled(ctx.em, address)) throw new TooManyRequestsError(t('errors.tooManyRequests'));
  const code = randomCode();
  await storeSecret(ctx.em, address, purpose, code, EMAIL_CODE_TTL_MINUTES, ctx.ip ?? '');
  const vars = { system: ctx.options.get('SystemName'), code, minutes: EMAIL_CODE_TTL_MINUTES };
  await sendMail(
    mailServices(ctx),
    {
      to: address,
      subject: t('mail.codeSubject', vars),
      text: t('mail.codeText', vars),
      html: t('mail.codeHtml', vars),
    },
    t,
  );
}

function mailServices(ctx: VerificationCtx): MailServices {
  return { options: ctx.options, ...(ctx.mailTransport ? { mailTransport: ctx.mailTransport } : {}) };
}

/**
 * Consumes the newest live secret of (email, purpose) when `secret` matches: single use, within its
 * lifetime, at most MAX_CODE_ATTEMPTS wrong guesses. Throws InputError (wrong, expired, used, too many).
 */
export async function consumeSecret(
  em: EntityManager,
  email: string,
  purpose: VerificationPurpose,
  secret: string,
  t: TFunction = authTFor(),
  invalidKey = 'email.codeInvalid',
): Promise<void> {
  const address = normalizeEmail(email);
  const given = secret.trim();
  // new-api has one e-mail code for register and bind, and clients of its contract fetch the bind code
  // with a plain GET /api/verification (purpose register): a bind accepts either.
  const purposes: VerificationPurpose[] = purpose === 'bind' ? ['bind', 'register'] : [purpose];
  const outcome = await em.transactional(async (tx) => {
    const row = await tx.findOne(
      VerificationCode,
      { email: address, purpose: { $in: purposes }, consumedAt: null, expiresAt: { $gt: new Date() } },
      { orderBy: { id: 'desc' }, lockMode: 4 /* PESSIMISTIC_WRITE */ },
    );
    if (!row || !given) return 'invalid' as const;
    if (row.attempts >= MAX_CODE_ATTEMPTS) return 'attempts' as const;
    if (row.codeHash !== (await hashOf(row.purpose, address, given))) {
      row.attempts += 1;
      return row.attempts >= MAX_CODE_ATTEMPTS ? ('attempts' as const) : ('invalid' as const);
    }
    row.consumedAt = new Date();
    return 'ok' as const;
  });
  if (outcome === 'attempts')
    throw new InputError(t('email.codeAttempts'), { code: [t('email.codeAttempts')] });
  if (outcome === 'invalid') throw new InputError(t(invalidKey), { code: [t(invalidKey)] });
}

/** The e-mail code check of register and e-mail bind. Throws InputError. */
export function consumeEmailCode(
  em: EntityManager,
  email: string,
  purpose: EmailCodePurpose,
  code: string,
  t: TFunction = authTFor(),
): Promise<void> {
  return consumeSecret(em, email, purpose, code, t);
}

/**
 * Stores a password-reset token for `email` (15 minutes, single use) and returns it (for the mail), or null
 * when the address was sent too many codes or links lately.
 */
export async function issueResetToken(em: EntityManager, email: string, ip = ''): Promise<string | null> {
  const address = normalizeEmail(email);
  if (await addressThrottled(em, address)) return null;
  const token = randomToken();
  await storeSecret(em, address, 'reset', token, RESET_TOKEN_TTL_MINUTES, ip);
  return token;
}

export function consumeResetToken(
  em: EntityManager,
  email: string,
  token: string,
  t: TFunction = authTFor(),
): Promise<void> {
  return consumeSecret(em, email, 'reset', token, t, 'reset.invalid');
}
