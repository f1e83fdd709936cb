import type { MikroORM } from '@mikro-orm/postgresql';
import { DEFAULT_GROUP, Role, User, UserStatus } from './entities/user.ts';
import { withAdvisoryLock } from './migrate.ts';
import { hashPassword, verifyPassword } from './security/password.ts';

export const ROOT_USERNAME = 'root';
export const DEFAULT_ROOT_PASSWORD = '123456';
/** new-api gives the root account 100,000,000 quota (200 USD at the default QuotaPerUnit). */
export const ROOT_INITIAL_QUOTA = 100_000_000;
const BOOTSTRAP_LOCK_KEY = 0x5_77a1_0002;

const AFF_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** A random invite code (4 characters like new-api's by default; longer codes for fewer collisions). */
export function generateAffCode(length = 4): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += AFF_ALPHABET[b % AFF_ALPHABET.length];
  return out;
}

/**
 * Creates the root account when the users table is empty; exactly once even when several processes start
 * together (advisory lock, then an existence check). Returns the created user, or null when users exist.
 */
export async function bootstrapRoot(orm: MikroORM): Promise<User | null> {
  return withAdvisoryLock(orm, BOOTSTRAP_LOCK_KEY, async () => {
    const em = orm.em.fork();
    if ((await em.count(User, {})) > 0) return null;
    const user = em.create(User, {
      username: ROOT_USERNAME,
      displayName: 'Root User',
      passwordHash: await hashPassword(DEFAULT_ROOT_PASSWORD),
      role: Role.Root,
      status: UserStatus.Enabled,
      group: DEFAULT_GROUP,
      affCode: generateAffCode(8),
      quota: ROOT_INITIAL_QUOTA,
    });
    await em.flush();
    return user;
  });
}

/** True for the root account still using the default password (the login page shows a warning). */
export async function isDefaultRootPassword(user: Pick<User, 'username' | 'passwordHash'>): Promise<boolean> {
  if (user.username !== ROOT_USERNAME || !user.passwordHash) return false;
  return verifyPassword(DEFAULT_ROOT_PASSWORD, user.passwordHash);
}
