/**
 * What every third-party identity leads to (seed 001 §4 "OAuth callback"): log in the user who owns the
 * provider id, sign a new user up (RegisterEnabled, honouring the invite code), or bind the id to the
 * signed-in user (message 'bind'). Shared by GitHub, LinuxDO, WeChat and Telegram.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { User } from '@switchyard/db/entities/user.ts';
import type { TFunction } from 'i18next';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { completeLogin, type LoginUserData } from '#app/domain/auth/login.server.ts';
import { createUserWithInvitation } from '#app/domain/auth/register.server.ts';
import { InputError } from '#app/domain/errors.ts';
import { normalizeEmail } from '#app/domain/mail/verification.server.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export type Provider = 'github' | 'linuxdo' | 'wechat' | 'telegram';

export const PROVIDER_FIELD = {
  github: 'githubId',
  linuxdo: 'linuxDoId',
  wechat: 'wechatId',
  telegram: 'telegramId',
} as const satisfies Record<Provider, keyof User>;

/** The identity a provider vouched for. */
export type ExternalIdentity = {
  provider: Provider;
  id: string;
  displayName?: string;
  email?: string;
};

/** `user` is the login answer's data, the same object as POST /api/user/login's (ADR 025). */
export type LoginOutcome = { kind: 'login'; user: LoginUserData; setCookie: string };
export type BindOutcome = { kind: 'bind' };

type Em = ReturnType<ConsoleServices['orm']['em']['fork']>;

function providerName(t: TFunction, provider: Provider): string {
  return t(`provider.${provider}`);
}

/** The user holding this provider id (deregistered ones included, so an id is never reused silently). */
export async function findByIdentity(em: Em, provider: Provider, id: string): Promise<User | null> {
  return em.findOne(User, { [PROVIDER_FIELD[provider]]: id } as never, { filters: false });
}

async function freeUsername(em: Em, prefix: string): Promise<string> {
  for (let i = 0; i < 8; i++) {
    const digits = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b % 10).join('');
    const username = `${prefix}_${digits}`;
    if (!(await em.count(User, { username }, { filters: false }))) return username;
  }
  throw new Error('could not find a free username');
}

async function emailIsFree(em: Em, email: string, exceptUserId?: number): Promise<boolean> {
  const rows = await em
    .getConnection()
    .execute<{ id: number }[]>('select id from users where lower(email) = lower(?) limit 2', [email]);
  return rows.every((r) => Number(r.id) === exceptUserId);
}

/**
 * Logs in the owner of `identity`, or signs a new user up when nobody owns it. completeLogin refuses banned
 * and deregistered users with its own messages.
 */
export async function loginOrSignUp(
  services: ConsoleServices,
  request: Request,
  t: TFunction,
  identity: ExternalIdentity,
  aff: string,
): Promise<LoginOutcome> {
  const em = services.orm.em.fork();
  let user = await findByIdentity(em, identity.provider, identity.id);
  if (!user) {
    if (!services.options.get('RegisterEnabled')) throw new InputError(t('errors.registerDisabled'));
    const email = identity.email && (await emailIsFree(em, identity.email)) ? identity.email : undefined;
    const username = await freeUsername(em, identity.provider);
    user = await createUserWithInvitation(
      em,
      services,
      {
        username,
        password: null,
        displayName: (identity.displayName || username).slice(0, 20),
        email,
        [PROVIDER_FIELD[identity.provider]]: identity.id,
        affCode: aff || undefined,
        ip: clientIp(request, services),
      },
      await authT(request),
    );
  }
  const { user: sessionUser, setCookie } = await completeLogin(services, user, request);
  return { kind: 'login', user: sessionUser, setCookie };
}

/**
 * Binds `identity` to the signed-in user `actorId`; refused when another user already holds the id.
 * Audited as `user.bind_<provider>`.
 */
export async function bindIdentity(
  services: ConsoleServices,
  request: Request,
  t: TFunction,
  actorId: number,
  identity: ExternalIdentity,
): Promise<BindOutcome> {
  const field = PROVIDER_FIELD[identity.provider];
  await services.orm.em.fork().transactional(async (em) => {
    const owner = await findByIdentity(em, identity.provider, identity.id);
    if (owner && owner.id !== actorId) {
      throw new InputError(t('errors.alreadyBound', { provider: providerName(t, identity.provider) }));
    }
    const user = await em.findOneOrFail(User, { id: actorId });
    const before = user[field];
    user[field] = identity.id;
    em.persist(
      em.create(AuditEntry, {
        actorId,
        action: `user.bind_${identity.provider}`,
        targetType: 'user',
        targetId: String(actorId),
        before: JSON.stringify({ [field]: before }),
        after: JSON.stringify({ [field]: identity.id }),
        ip: clientIp(request, services),
      }),
    );
  });
  return { kind: 'bind' };
}

/**
 * Binds an e-mail address to `actorId` once `verify` (the e-mail code check, run outside the write
 * transaction so a failed attempt still counts) passes; refused when another user has the address.
 */
export async function bindEmailAddress(
  services: ConsoleServices,
  request: Request,
  t: TFunction,
  actorId: number,
  email: string,
  verify: (em: Em) => Promise<void>,
): Promise<void> {
  const em = services.orm.em.fork();
  if (!(await emailIsFree(em, email, actorId))) throw new InputError(t('errors.emailTaken'));
  await verify(em);
  await services.orm.em.fork().transactional(async (tx) => {
    if (!(await emailIsFree(tx, email, actorId))) throw new InputError(t('errors.emailTaken'));
    const user = await tx.findOneOrFail(User, { id: actorId });
    const before = user.email;
    user.email = normalizeEmail(email);
    tx.persist(
      tx.create(AuditEntry, {
        actorId,
        action: 'user.bind_email',
        targetType: 'user',
        targetId: String(actorId),
        before: JSON.stringify({ email: before }),
        after: JSON.stringify({ email: user.email }),
        ip: clientIp(request, services),
      }),
    );
  });
}

export { providerName };
