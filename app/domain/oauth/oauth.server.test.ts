/**
 * OAuth end to end at the domain/route level: a real OAuth2 server on loopback (oauth2-mock-server) speaking
 * GitHub's and LinuxDO's user shapes, a fake WeChat server, Telegram hashes computed here with node:crypto,
 * real PostgreSQL. Routes are called through their loaders with real Requests.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { User, UserStatus } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { hashPassword } from '@switchyard/db/security/password.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithInvitation } from '#app/domain/auth/register.server.ts';
import { createSession } from '#app/domain/auth/session.server.ts';
import { issueEmailCode } from '#app/domain/mail/verification.server.ts';
import { checkTelegramAuth } from '#app/domain/oauth/telegram.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as emailBindLoader } from '#app/routes/api.oauth.email.bind.ts';
import { loader as githubLoader } from '#app/routes/api.oauth.github.ts';
import { loader as linuxdoLoader } from '#app/routes/api.oauth.linuxdo.ts';
import { loader as stateLoader } from '#app/routes/api.oauth.state.ts';
import { loader as telegramBindLoader } from '#app/routes/api.oauth.telegram.bind.ts';
import { loader as telegramLoginLoader } from '#app/routes/api.oauth.telegram.login.ts';
import { loader as wechatBindLoader } from '#app/routes/api.oauth.wechat.bind.ts';
import { loader as wechatLoader } from '#app/routes/api.oauth.wechat.ts';
import { action as passwordLoginAction } from '#app/routes/api.user.login.ts';
import { loader as githubPageLoader } from '#app/routes/oauth.github.tsx';
import { loader as startLoader } from '#app/routes/oauth.start.$provider.ts';
import type { ConsoleServices } from '#app/services.server.ts';

type Body = { success: boolean; message: string; data: unknown };
type Loader = (args: never) => Promise<unknown> | unknown;

let db: TestDatabase;
let services: ConsoleServices;
let mock: OAuth2Server;
let profile: Record<string, unknown>;
let wechat: Server;
let wechatUrl: string;
const wechatAnswers = new Map<string, { success: boolean; message: string; data: string }>();
const wechatAuth: string[] = [];
const BOT_TOKEN = '123456:TEST-bot-token';

async function call(loader: Loader, url: string, headers: Record<string, string> = {}, svc = services) {
  const request = new Request(`http://localhost${url}`, {
    headers: { Accept: 'application/json', ...headers },
  });
  return (await loader({ request, context: { services: svc }, params: {} } as never)) as Response;
}

async function body(res: Response): Promise<Body> {
  return (await res.json()) as Body;
}

function cookiePart(setCookie: string | null): string {
  return (setCookie ?? '').split(';')[0] ?? '';
}

function setCookies(res: Response): string[] {
  return res.headers.getSetCookie();
}

/** GET /api/oauth/state, then the mock's authorize page (auto-approves): the callback URL and the cookie. */
async function authorize(provider: 'github' | 'linuxdo', aff = '') {
  const res = await call(stateLoader, `/api/oauth/state${aff ? `?aff=${aff}` : ''}`);
  const { data: state } = await body(res);
  const cookie = cookiePart(res.headers.get('Set-Cookie'));
  const authorizeUrl = new URL(`${mock.issuer.url}/authorize`);
  authorizeUrl.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'client-id',
    redirect_uri: `http://localhost/oauth/${provider}`,
    state: String(state),
  }).toString();
  const redirect = await fetch(authorizeUrl, { redirect: 'manual' });
  const location = new URL(redirect.headers.get('Location') ?? '');
  return { state: String(state), cookie, callback: `/api/oauth/${provider}${location.search}`, location };
}

async function signedIn(user: User): Promise<{ Cookie: string; 'New-Api-User': string }> {
  const setCookie = await createSession(services, user, new Request('http://localhost/'));
  return { Cookie: cookiePart(setCookie), 'New-Api-User': String(user.id) };
}

let counter = 0;
async function newUser(over: Partial<User> = {}): Promise<User> {
  counter += 1;
  const em = services.orm.em.fork();
  const user = await createUserWithInvitation(em, services, { username: `plain${counter}`, password: null });
  if (Object.keys(over).length) {
    await em.nativeUpdate(User, { id: user.id }, over as never);
    return em.fork().findOneOrFail(User, { id: user.id });
  }
  return user;
}

function telegramParams(fields: Record<string, string | number>, token = BOT_TOKEN): string {
  const secret = createHash('sha256').update(token).digest();
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const hash = createHmac('sha256', secret).update(dcs).digest('hex');
  return new URLSearchParams({
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])),
    hash,
  }).toString();
}

beforeAll(async () => {
  // Own suffix: other suites (and other engineers' runs) use sy_test_<worker> at the same time.
  db = await createTestDatabase({ suffix: 'oauth' });
  const options = new OptionService({ orm: db.orm, pubsub: createMemoryPubSub() });
  await options.load();
  services = {
    orm: db.orm,
    options,
    relay: null,
    version: 'test',
    startedAt: 0,
    limiter: createMemoryRateLimiter(),
    auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 10_000, windowSeconds: 60 } },
  } as ConsoleServices;

  mock = new OAuth2Server();
  await mock.issuer.keys.generate('RS256');
  await mock.start(0, '127.0.0.1');
  mock.service.on('beforeUserinfo', (res: { body: unknown }) => {
    res.body = profile;
  });
  const issuer = mock.issuer.url ?? '';
  for (const p of ['GITHUB', 'LINUXDO']) {
    process.env[`OAUTH_${p}_AUTHORIZE_URL`] = `${issuer}/authorize`;
    process.env[`OAUTH_${p}_TOKEN_URL`] = `${issuer}/token`;
    process.env[`OAUTH_${p}_USER_URL`] = `${issuer}/userinfo`;
  }

  wechat = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    wechatAuth.push(String(req.headers.authorization));
    const answer =
      url.pathname === '/api/wechat/user' ? wechatAnswers.get(url.searchParams.get('code') ?? '') : undefined;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(answer ?? { success: false, message: 'invalid code', data: '' }));
  });
  await new Promise<void>((r) => wechat.listen(0, '127.0.0.1', r));
  wechatUrl = `http://127.0.0.1:${(wechat.address() as AddressInfo).port}`;

  for (const [k, v] of Object.entries({
    GitHubOAuthEnabled: true,
    GitHubClientId: 'client-id',
    GitHubClientSecret: 'client-secret',
    LinuxDOOAuthEnabled: true,
    LinuxDOClientId: 'client-id',
    LinuxDOClientSecret: 'client-secret',
    WeChatAuthEnabled: true,
    WeChatServerAddress: `${wechatUrl}/`,
    WeChatServerToken: 'wechat-token',
    TelegramOAuthEnabled: true,
    TelegramBotToken: BOT_TOKEN,
    RegisterEnabled: true,
  })) {
    await options.set(k as never, v as never, null);
  }
});

afterAll(async () => {
  await mock?.stop();
  await new Promise((r) => wechat?.close(r));
  await db?.drop();
});

beforeEach(() => {
  profile = { id: 4242, login: 'octocat', name: 'The Octocat', email: 'octo@example.com' };
});

describe('GET /api/oauth/state', () => {
  it('returns a random state bound to an HttpOnly, short-lived cookie', async () => {
    const res = await call(stateLoader, '/api/oauth/state?aff=ABC123');
    const b = await body(res);
    expect(b.success).toBe(true);
    expect(String(b.data)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const cookie = res.headers.get('Set-Cookie') ?? '';
    expect(cookie).toMatch(/^sy_oauth\.[A-Za-z0-9_-]+=/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Max-Age=600');
    expect(decodeURIComponent(cookie)).toContain('.ABC123');
    const again = await body(await call(stateLoader, '/api/oauth/state'));
    expect(again.data).not.toBe(b.data);
  });
});

describe('GitHub and LinuxDO', () => {
  it('signs a new GitHub user up (honouring aff) and logs the same user in next time', async () => {
    const inviter = await newUser();
    const { callback, cookie } = await authorize('github', inviter.affCode);
    const res = await call(githubLoader, callback, { Cookie: cookie });
    const b = await body(res);
    expect(b).toMatchObject({ success: true, message: '' });
    const data = b.data as { id: number; username: string };
    expect(data.username).toMatch(/^github_\d{8}$/);
    const cookies = setCookies(res);
    expect(cookies.some((c) => c.startsWith('sy_session='))).toBe(true);
    expect(cookies.some((c) => c.startsWith('sy_oauth.') && c.includes('Max-Age=0'))).toBe(true);

    const em = services.orm.em.fork();
    const user = await em.findOneOrFail(User, { id: data.id });
    expect(user).toMatchObject({ githubId: '4242', displayName: 'The Octocat', email: 'octo@example.com' });
    expect(user.inviterId).toBe(inviter.id);
    expect((await em.findOneOrFail(User, { id: inviter.id })).affCount).toBe(1);
    expect(await em.count(Session, { user: data.id } as never)).toBe(1);

    const second = await authorize('github');
    const again = await body(await call(githubLoader, second.callback, { Cookie: second.cookie }));
    expect(again.success).toBe(true);
    expect((again.data as { id: number }).id).toBe(data.id);
    expect(await em.count(User, { githubId: '4242' })).toBe(1);
  });

  it('refuses a forged state and a state this browser was not given', async () => {
    const { callback, cookie, state } = await authorize('github');
    const forged = callback.replace(state, 'A'.repeat(32));
    const b = await body(await call(githubLoader, forged, { Cookie: cookie }));
    expect(b.success).toBe(false);
    expect(b.message).toContain('state');
    const noCookie = await body(await call(githubLoader, callback));
    expect(noCookie.success).toBe(false);
    const stranger = await authorize('github');
    const otherBrowser = await body(await call(githubLoader, callback, { Cookie: stranger.cookie }));
    expect(otherBrowser.success).toBe(false);
  });

  it('refuses a replayed state, even with the copied cookie', async () => {
    const { callback, cookie } = await authorize('github');
    expect((await body(await call(githubLoader, callback, { Cookie: cookie }))).success).toBe(true);
    const replay = await body(await call(githubLoader, callback, { Cookie: cookie }));
    expect(replay.success).toBe(false);
    expect(replay.message).toContain('state');
  });

  it('refuses when the provider is disabled', async () => {
    await services.options.set('GitHubOAuthEnabled', false, null);
    try {
      const { callback, cookie } = await authorize('github');
      const b = await body(await call(githubLoader, callback, { Cookie: cookie, 'Accept-Language': 'en' }));
      expect(b).toMatchObject({ success: false });
      expect(b.message).toBe('The administrator has not enabled login and registration via GitHub');
      const zh = await body(await call(githubLoader, callback, { Cookie: cookie, 'Accept-Language': 'zh' }));
      expect(zh.message).toBe('管理员未开启通过 GitHub 登录以及注册');
    } finally {
      await services.options.set('GitHubOAuthEnabled', true, null);
    }
  });

  it('refuses sign-up when RegisterEnabled is off', async () => {
    await services.options.set('RegisterEnabled', false, null);
    try {
      profile = { id: 777001, login: 'newbie' };
      const { callback, cookie } = await authorize('github');
      const b = await body(await call(githubLoader, callback, { Cookie: cookie }));
      expect(b.success).toBe(false);
      expect(await services.orm.em.fork().count(User, { githubId: '777001' })).toBe(0);
    } finally {
      await services.options.set('RegisterEnabled', true, null);
    }
  });

  it('refuses a banned user', async () => {
    await newUser({ githubId: '5555', status: UserStatus.Banned });
    profile = { id: 5555, login: 'banned' };
    const { callback, cookie } = await authorize('github');
    const res = await call(githubLoader, callback, { Cookie: cookie });
    const b = await body(res);
    expect(b.success).toBe(false);
    expect(setCookies(res).some((c) => c.startsWith('sy_session='))).toBe(false);
  });

  it('binds a LinuxDO id to the signed-in user (message bind), audited; refuses an id bound elsewhere', async () => {
    const alice = await newUser();
    profile = {
      id: 31337,
      username: 'alice_ld',
      name: 'Alice',
      active: true,
      silenced: false,
      trust_level: 2,
    };
    const { callback, cookie } = await authorize('linuxdo');
    const auth = await signedIn(alice);
    const b = await body(await call(linuxdoLoader, callback, { Cookie: `${cookie}; ${auth.Cookie}` }));
    expect(b).toMatchObject({ success: true, message: 'bind' });
    const em = services.orm.em.fork();
    expect((await em.findOneOrFail(User, { id: alice.id })).linuxDoId).toBe('31337');
    const audit = await em.findOneOrFail(AuditEntry, {
      action: 'user.bind_linuxdo',
      targetId: String(alice.id),
    });
    expect(audit.actorId).toBe(alice.id);

    const bob = await newUser();
    const second = await authorize('linuxdo');
    const bobAuth = await signedIn(bob);
    const refused = await body(
      await call(linuxdoLoader, second.callback, {
        Cookie: `${second.cookie}; ${bobAuth.Cookie}`,
        'Accept-Language': 'en',
      }),
    );
    expect(refused.success).toBe(false);
    expect(refused.message).toBe('This LinuxDO account is already bound to another user');
    expect((await em.fork().findOneOrFail(User, { id: bob.id })).linuxDoId).toBe('');
  });

  it('refuses a silenced LinuxDO account', async () => {
    profile = { id: 999, username: 'quiet', active: true, silenced: true };
    const { callback, cookie } = await authorize('linuxdo');
    expect((await body(await call(linuxdoLoader, callback, { Cookie: cookie }))).success).toBe(false);
  });

  it('rate limits the callbacks (429)', async () => {
    const limited = {
      ...services,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 2, windowSeconds: 60 } },
    } as ConsoleServices;
    const headers = { 'x-switchyard-client-ip': '203.0.113.9' };
    await call(githubLoader, '/api/oauth/github?code=x&state=y', headers, limited);
    await call(githubLoader, '/api/oauth/github?code=x&state=y', headers, limited);
    const res = await call(githubLoader, '/api/oauth/github?code=x&state=y', headers, limited);
    expect(res.status).toBe(429);
  });
});

describe('callback page /oauth/github', () => {
  it('logs in and redirects to /token with the session cookie and a toast', async () => {
    profile = { id: 8080, login: 'pageuser', name: 'Page User' };
    const { location, cookie } = await authorize('github');
    const res = await call(githubPageLoader, `/oauth/github${location.search}`, {
      Cookie: cookie,
      Accept: 'text/html',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/token');
    const cookies = setCookies(res);
    expect(cookies.some((c) => c.startsWith('sy_session='))).toBe(true);
    expect(cookies.some((c) => c.startsWith('sy_toast='))).toBe(true);
  });

  it('binds and redirects to /setting', async () => {
    const carol = await newUser();
    profile = { id: 9090, login: 'carolgh' };
    const { location, cookie } = await authorize('github');
    const auth = await signedIn(carol);
    const res = await call(githubPageLoader, `/oauth/github${location.search}`, {
      Cookie: `${cookie}; ${auth.Cookie}`,
    });
    expect(res.headers.get('Location')).toBe('/setting');
    expect((await services.orm.em.fork().findOneOrFail(User, { id: carol.id })).githubId).toBe('9090');
  });

  it('shows the refusal (no redirect) on a forged state', async () => {
    const request = new Request(`http://localhost/oauth/github?code=abc&state=${'B'.repeat(32)}`, {
      headers: { 'Accept-Language': 'en' },
    });
    const result = (await githubPageLoader({
      request,
      context: { services },
      params: {},
    } as never)) as unknown as {
      data: { message: string };
      init: { status: number } | null;
    };
    expect(result.init?.status).toBe(200);
    expect(result.data.message).toBe(
      'The state is invalid or has expired, please start the authorisation again',
    );
  });
});

describe('GET /oauth/start/{provider}', () => {
  async function start(provider: string, query = '') {
    const request = new Request(`http://localhost/oauth/start/${provider}${query}`);
    return (await startLoader({ request, context: { services }, params: { provider } } as never)) as Response;
  }

  it('binds a state and redirects to the authorize page; the round trip signs in', async () => {
    profile = { id: 6060, login: 'starter', name: 'Starter' };
    const res = await start('github', '?aff=NOPE');
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('Location') ?? '');
    expect(location.origin + location.pathname).toBe(`${mock.issuer.url}/authorize`);
    expect(location.searchParams.get('client_id')).toBe('client-id');
    expect(location.searchParams.get('redirect_uri')).toBe('http://localhost/oauth/github');
    expect(location.searchParams.get('scope')).toBe('user:email');
    const cookie = cookiePart(res.headers.get('Set-Cookie'));
    const back = new URL((await fetch(location, { redirect: 'manual' })).headers.get('Location') ?? '');
    expect(back.pathname).toBe('/oauth/github');
    const b = await body(await call(githubLoader, `/api/oauth/github${back.search}`, { Cookie: cookie }));
    expect(b.success).toBe(true);
  });

  it('returns to /login with the refusal when the provider is off, 404 for an unknown one', async () => {
    await services.options.set('LinuxDOOAuthEnabled', false, null);
    try {
      const res = await start('linuxdo');
      expect(res.headers.get('Location')).toBe('/login');
      expect(res.headers.get('Set-Cookie')).toContain('sy_toast=');
    } finally {
      await services.options.set('LinuxDOOAuthEnabled', true, null);
    }
    await expect(start('gitlab')).rejects.toMatchObject({ status: 404 });
  });
});

describe('WeChat', () => {
  it('logs in / signs up with the code exchanged at the WeChat server', async () => {
    wechatAnswers.set('good-code', { success: true, message: '', data: 'openid-1' });
    const res = await call(wechatLoader, '/api/oauth/wechat?code=good-code');
    const b = await body(res);
    expect(b.success).toBe(true);
    expect(wechatAuth.at(-1)).toBe('wechat-token');
    const user = await services.orm.em.fork().findOneOrFail(User, { wechatId: 'openid-1' });
    expect((b.data as { id: number }).id).toBe(user.id);
    expect(user.username).toMatch(/^wechat_/);
  });

  it('refuses an empty code, a code the server rejects, and a disabled provider', async () => {
    const empty = await body(
      await call(wechatLoader, '/api/oauth/wechat?code=', { 'Accept-Language': 'en' }),
    );
    expect(empty).toMatchObject({ success: false, message: 'The verification code cannot be empty' });
    const bad = await body(await call(wechatLoader, '/api/oauth/wechat?code=nope'));
    expect(bad.success).toBe(false);
    expect(bad.message).toContain('invalid code');
    await services.options.set('WeChatAuthEnabled', false, null);
    try {
      const off = await body(await call(wechatLoader, '/api/oauth/wechat?code=good-code'));
      expect(off.success).toBe(false);
    } finally {
      await services.options.set('WeChatAuthEnabled', true, null);
    }
  });

  it('binds for a signed-in user (New-Api-User header required) and refuses an id bound elsewhere', async () => {
    const dave = await newUser();
    wechatAnswers.set('dave-code', { success: true, message: '', data: 'openid-dave' });
    const auth = await signedIn(dave);
    const noHeader = await call(wechatBindLoader, '/api/oauth/wechat/bind?code=dave-code', {
      Cookie: auth.Cookie,
    });
    expect(noHeader.status).toBe(401);
    const b = await body(await call(wechatBindLoader, '/api/oauth/wechat/bind?code=dave-code', auth));
    expect(b.success).toBe(true);
    expect((await services.orm.em.fork().findOneOrFail(User, { id: dave.id })).wechatId).toBe('openid-dave');
    const erin = await newUser();
    const taken = await body(
      await call(wechatBindLoader, '/api/oauth/wechat/bind?code=dave-code', await signedIn(erin)),
    );
    expect(taken.success).toBe(false);
  });
});

describe('Telegram', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('verifies the widget hash like Telegram documents', async () => {
    const q = new URLSearchParams(telegramParams({ id: 1, first_name: 'A', auth_date: now() }));
    expect(await checkTelegramAuth(q, BOT_TOKEN)).toBe('ok');
    expect(await checkTelegramAuth(q, 'other-token')).toBe('invalid');
    q.set('first_name', 'B');
    expect(await checkTelegramAuth(q, BOT_TOKEN)).toBe('invalid');
  });

  it('logs in / signs up with valid widget fields', async () => {
    const qs = telegramParams({
      id: 700001,
      first_name: 'Tele',
      last_name: 'Gram',
      username: 'tg',
      photo_url: 'https://t.me/i/a.jpg',
      auth_date: now(),
    });
    const b = await body(await call(telegramLoginLoader, `/api/oauth/telegram/login?${qs}`));
    expect(b.success).toBe(true);
    const user = await services.orm.em.fork().findOneOrFail(User, { telegramId: '700001' });
    expect(user.displayName).toBe('Tele Gram');
  });

  it('refuses a bad hash, a stale or future auth_date, and a disabled provider', async () => {
    const bad = telegramParams({ id: 700002, first_name: 'X', auth_date: now() }, 'wrong-token');
    const r1 = await body(
      await call(telegramLoginLoader, `/api/oauth/telegram/login?${bad}`, { 'Accept-Language': 'en' }),
    );
    expect(r1).toMatchObject({ success: false, message: 'Invalid Telegram login data' });
    const stale = telegramParams({ id: 700002, first_name: 'X', auth_date: now() - 86_401 });
    const r2 = await body(
      await call(telegramLoginLoader, `/api/oauth/telegram/login?${stale}`, { 'Accept-Language': 'en' }),
    );
    expect(r2).toMatchObject({
      success: false,
      message: 'The Telegram login data has expired, please log in again',
    });
    const future = telegramParams({ id: 700002, first_name: 'X', auth_date: now() + 3600 });
    expect((await body(await call(telegramLoginLoader, `/api/oauth/telegram/login?${future}`))).success).toBe(
      false,
    );
    await services.options.set('TelegramOAuthEnabled', false, null);
    try {
      const ok = telegramParams({ id: 700002, first_name: 'X', auth_date: now() });
      expect((await body(await call(telegramLoginLoader, `/api/oauth/telegram/login?${ok}`))).success).toBe(
        false,
      );
    } finally {
      await services.options.set('TelegramOAuthEnabled', true, null);
    }
    expect(await services.orm.em.fork().count(User, { telegramId: '700002' })).toBe(0);
  });

  it('binds from the widget redirect (session) and returns to /setting', async () => {
    const frank = await newUser();
    const auth = await signedIn(frank);
    const qs = telegramParams({ id: 700003, first_name: 'F', auth_date: now() });
    const res = await call(telegramBindLoader, `/api/oauth/telegram/bind?${qs}`, {
      Cookie: auth.Cookie,
      Accept: 'text/html',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/setting');
    expect((await services.orm.em.fork().findOneOrFail(User, { id: frank.id })).telegramId).toBe('700003');
  });

  it('refuses the login of a banned user', async () => {
    await newUser({ telegramId: '700004', status: UserStatus.Banned });
    const qs = telegramParams({ id: 700004, first_name: 'B', auth_date: now() });
    expect((await body(await call(telegramLoginLoader, `/api/oauth/telegram/login?${qs}`))).success).toBe(
      false,
    );
  });
});

describe('the login answer', () => {
  /** POST /api/user/login for `user` after giving them a password: its `data`. */
  async function passwordLoginData(user: { id: number; username: string }): Promise<unknown> {
    await services.orm.em
      .fork()
      .nativeUpdate(User, { id: user.id }, { passwordHash: await hashPassword('same-object-pw') });
    const request = new Request('http://localhost/api/user/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ username: user.username, password: 'same-object-pw' }),
    });
    const res = (await passwordLoginAction({
      request,
      context: { services },
      params: {},
    } as never)) as Response;
    const b = await body(res);
    expect(b.success).toBe(true);
    return b.data;
  }

  /** The OAuth answer's data equals the password login's for the same user (seed 000 §7: data is the user). */
  async function expectSameAsPasswordLogin(b: Body) {
    expect(b.success).toBe(true);
    const data = b.data as Record<string, unknown> & { id: number; username: string };
    expect(typeof data.setting).toBe('string');
    expect(data).toHaveProperty('display_name');
    expect(data).not.toHaveProperty('displayName');
    expect(data).toEqual(await passwordLoginData(data));
  }

  it('GitHub and LinuxDO answer the same user object as password login', async () => {
    profile = { id: 5151, login: 'same-gh', name: 'Same GH', email: 'same-gh@example.com' };
    const gh = await authorize('github');
    await expectSameAsPasswordLogin(await body(await call(githubLoader, gh.callback, { Cookie: gh.cookie })));
    profile = {
      id: 5152,
      username: 'same-ld',
      name: 'Same LD',
      active: true,
      silenced: false,
      trust_level: 2,
    };
    const ld = await authorize('linuxdo');
    await expectSameAsPasswordLogin(
      await body(await call(linuxdoLoader, ld.callback, { Cookie: ld.cookie })),
    );
  });

  it('WeChat and Telegram answer the same user object as password login', async () => {
    wechatAnswers.set('same-code', { success: true, message: '', data: 'openid-same' });
    await expectSameAsPasswordLogin(await body(await call(wechatLoader, '/api/oauth/wechat?code=same-code')));
    const qs = telegramParams({ id: 700777, first_name: 'Same', auth_date: Math.floor(Date.now() / 1000) });
    await expectSameAsPasswordLogin(
      await body(await call(telegramLoginLoader, `/api/oauth/telegram/login?${qs}`)),
    );
  });
});

describe('GET /api/oauth/email/bind', () => {
  it('requires email and code, binds with a valid bind code, refuses a taken address', async () => {
    const gina = await newUser();
    const auth = { ...(await signedIn(gina)), 'Accept-Language': 'en' };
    const noEmail = await body(await call(emailBindLoader, '/api/oauth/email/bind?code=123456', auth));
    expect(noEmail).toMatchObject({ success: false, message: 'Please enter email' });
    const noCode = await body(await call(emailBindLoader, '/api/oauth/email/bind?email=g@example.com', auth));
    expect(noCode).toMatchObject({ success: false, message: 'Please enter email verification code' });

    const sent: { text?: string }[] = [];
    await issueEmailCode(
      {
        em: services.orm.em.fork(),
        options: services.options,
        mailTransport: { sendMail: async (m) => sent.push(m) },
      },
      'gina@example.com',
      'bind',
    );
    const code = /\b(\d{6})\b/.exec(String(sent[0]?.text))?.[1] ?? '';
    const wrong = await body(
      await call(emailBindLoader, `/api/oauth/email/bind?email=gina@example.com&code=000000`, auth),
    );
    expect(wrong.success).toBe(false);
    const b = await body(
      await call(emailBindLoader, `/api/oauth/email/bind?email=gina@example.com&code=${code}`, auth),
    );
    expect(b.success).toBe(true);
    const em = services.orm.em.fork();
    expect((await em.findOneOrFail(User, { id: gina.id })).email).toBe('gina@example.com');
    expect(await em.count(AuditEntry, { action: 'user.bind_email', targetId: String(gina.id) })).toBe(1);

    const hank = await newUser();
    const taken = await body(
      await call(emailBindLoader, '/api/oauth/email/bind?email=GINA@example.com&code=123456', {
        ...(await signedIn(hank)),
        'Accept-Language': 'en',
      }),
    );
    expect(taken).toMatchObject({ success: false, message: 'This email is already in use' });
  });

  it('is 401 without a signed-in user', async () => {
    const res = await call(emailBindLoader, '/api/oauth/email/bind?email=x@example.com&code=1');
    expect(res.status).toBe(401);
  });
});
