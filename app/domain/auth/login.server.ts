import { User, UserStatus } from '@switchyard/db/entities/user.ts';
import { hashPassword, needsRehash, verifyPassword } from '@switchyard/db/security/password.ts';
import { Authenticator } from 'remix-auth';
import { FormStrategy } from 'remix-auth-form';
import { z } from 'zod';
import { parseAuthInput } from '#app/domain/auth/http.server.ts';
import { authT } from '#app/domain/auth/i18n.server.ts';
import { createSession } from '#app/domain/auth/session.server.ts';
import { InputError } from '#app/domain/errors.ts';
import { issueDeviceCookie, readDeviceCookie } from '#app/domain/security/device-cookie.server.ts';
import {
  claimDeviceAttempt,
  clearDeviceAttempts,
  clearLoginBackoff,
  enforceLoginBackoff,
  loginBackoffKey,
  loginFailed,
} from '#app/domain/security/rate-limit.server.ts';
import { serializeUser, type UserWire } from '#app/domain/users/users.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * Logging in (seed 000 §5 "login"): the password strategy (remix-auth 4 + remix-auth-form 3) only finds and
 * checks the user; completeLogin decides whether that user may start a session and writes it. Every OAuth
 * provider ends in completeLogin too.
 */

/** `user` is the login answer's `data`, the same for the password and every OAuth login (ADR 025). */
export type LoginResult = { user: LoginUserData; setCookie: string };

/** The body of POST /api/user/login and of the login form. */
export const PasswordLoginSchema = z.object({
  username: z.string('errors.invalidInput').trim().max(255, 'login.tooLong').default(''),
  password: z.string('errors.invalidInput').max(255, 'login.tooLong').default(''),
});
export type PasswordCredentials = z.infer<typeof PasswordLoginSchema>;

export type LoginUserData = UserWire;

/**
 * `data` of every login answer (seed 000 §7 "data is the user"; new-api's setupLogin answers a model.User, so
 * every user field, `setting` a JSON string): the wire user, display_name falling back to the username.
 * Password login and the GitHub, LinuxDO, WeChat and Telegram logins all answer it (ADR 025).
 */
export function loginUserData(user: User): LoginUserData {
  return { ...serializeUser(user), display_name: user.displayName || user.username };
}

/**
 * Refuses banned (new-api: 'user has been banned') and deregistered users, then creates the session.
 * Returns the public user and the Set-Cookie header value.
 */
export async function completeLogin(
  services: ConsoleServices,
  user: User,
  request: Request,
): Promise<LoginResult> {
  const t = await authT(request);
  if (user.deletedAt) throw new InputError(t('login.deregistered'));
  if (user.status !== UserStatus.Enabled) throw new InputError(t('login.banned'));
  const setCookie = await createSession(services, user, request);
  return { user: loginUserData(user), setCookie };
}

/** Argon2 work for unknown usernames, so the answer time does not tell whether a name exists. */
let dummyHash: Promise<string> | null = null;

/**
 * The user whose username (or bound e-mail) and password match, or an InputError with new-api's message
 * ('username or password is wrong, or user has been banned'). Deregistered and banned users are returned so
 * that completeLogin can name the reason once the password proved who is asking.
 *
 * Before any password hash is computed, the attempt is claimed against the account's back-off (the user found
 * by name or e-mail, else the name as looked up): a TooManyRequestsError (429) while it runs, so a guess
 * costs nothing and a guess spread over many client IPs is slowed too. A right password ends the back-off.
 * A browser with a valid device cookie of the account (`request`, ADR 037) claims against its own device
 * count instead and is never refused by the account's back-off; its wrong passwords do not feed it, and its
 * right password does not end it (the guesses of others keep counting).
 */
export async function verifyCredentials(
  services: ConsoleServices,
  credentials: PasswordCredentials,
  t: Awaited<ReturnType<typeof authT>>,
  request?: Request,
): Promise<User> {
  const username = credentials.username.trim();
  const password = credentials.password;
  if (!username || !password) throw new InputError(t('login.empty'));
  if (!services.options.get('PasswordLoginEnabled')) throw new InputError(t('login.passwordDisabled'));
  const em = services.orm.em.fork();
  const byName = await em.findOne(User, { username }, { filters: false });
  const user =
    byName ??
    (username.includes('@')
      ? await em.findOne(User, { email: username.toLowerCase() }, { filters: false, orderBy: { id: 'asc' } })
      : null);
  const backoffKey = loginBackoffKey(
    user ? { userId: user.id } : { name: username.includes('@') ? username.toLowerCase() : username },
  );
  const device = user && request ? await readDeviceCookie(services, request, user.id) : null;
  const trusted = device ? await claimDeviceAttempt(services, device.limiterKey) : false;
  if (!trusted) await enforceLoginBackoff(services, backoffKey, t);
  if (!user?.passwordHash) {
    dummyHash ??= hashPassword(crypto.randomUUID());
    await verifyPassword(password, await dummyHash);
    if (!trusted) await loginFailed(services, backoffKey);
    throw new InputError(t('login.wrong'));
  }
  if (!(await verifyPassword(password, user.passwordHash))) {
    if (!trusted) await loginFailed(services, backoffKey);
    throw new InputError(t('login.wrong'));
  }
  // A right password through the back-off ends it; one from a trusted device leaves the count of the others
  // (an attacker's guesses) as it is.
  if (!trusted) await clearLoginBackoff(services, backoffKey);
  if (device) await clearDeviceAttempts(services, device.limiterKey);
  if (needsRehash(user.passwordHash)) {
    user.passwordHash = await hashPassword(password);
    await em.flush();
  }
  return user;
}

function passwordAuthenticator(services: ConsoleServices, request: Request) {
  const authenticator = new Authenticator<User>();
  authenticator.use(
    new FormStrategy(async ({ form }) => {
      const t = await authT(request);
      const parsed = parseAuthInput(t, PasswordLoginSchema, {
        username: typeof form.get('username') === 'string' ? form.get('username') : '',
        password: typeof form.get('password') === 'string' ? form.get('password') : '',
      });
      return verifyCredentials(services, parsed, t, request);
    }),
    'password',
  );
  return authenticator;
}

/**
 * Password login for the page action and the JSON route: `source` is the form POST itself (read by
 * remix-auth-form's FormStrategy) or credentials already parsed (then `request` is the request that
 * logs in). Rate limiting and Turnstile are the caller's guards (enforceCriticalLimit, verifyTurnstile).
 * Throws InputError (empty, wrong, password login off) banned, deregistered.
 * `cookies` are every Set-Cookie value of the answer: the session and a fresh device cookie (ADR 037).
 */
export async function loginWithPassword(
  services: ConsoleServices,
  source: Request | PasswordCredentials,
  request?: Request,
): Promise<LoginResult & { entity: User; cookies: string[] }> {
  let user: User;
  let req: Request;
  if (source instanceof Request) {
    req = source;
    user = await passwordAuthenticator(services, source).authenticate('password', source);
  } else {
    if (!request) throw new Error('loginWithPassword: the request is required with parsed credentials');
    req = request;
    const t = await authT(request);
    user = await verifyCredentials(services, parseAuthInput(t, PasswordLoginSchema, source), t, request);
  }
  const result = await completeLogin(services, user, req);
  const device = await issueDeviceCookie(services, req, user.id);
  return { ...result, entity: user, cookies: [result.setCookie, device] };
}
