/**
 * GitHub OAuth through a real OAuth2 server (tests/fakes/oauth.ts, started by global-setup and wired into the
 * product with OAUTH_GITHUB_*): the browser gets a state from /api/oauth/state, goes through the provider's
 * authorize redirect (auto-approved) to /oauth/github?code&state and ends signed in (sy_session cookie, a
 * users row with the GitHub id), with JavaScript on and off. A forged state shows the refusal instead.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { User } from '@switchyard/db/entities/user.ts';
import type { OptionKey } from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { initOrm } from '@switchyard/db/orm.ts';
import { createRedisPubSub } from '@switchyard/db/pubsub.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fakeProviderId } from '../fakes/oauth.ts';
import { type Harness, launch, MODES, type Mode } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let options: OptionService;
const saved = new Map<OptionKey, unknown>();

const OPTIONS: [OptionKey, string | boolean][] = [
  ['GitHubClientId', 'e2e-client'],
  ['GitHubClientSecret', 'e2e-secret'],
  ['RegisterEnabled', true],
  ['GitHubOAuthEnabled', true],
];

async function waitForStatus(key: string, value: unknown) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${h.baseURL}/api/status`);
    const body = (await res.json()) as { data: Record<string, unknown> };
    if (body.data[key] === value) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`status.${key} did not become ${String(value)}`);
}

beforeAll(async () => {
  h = await launch();
  orm = await initOrm(inject('databaseURL'), { poolMax: 2 });
  options = new OptionService({ orm, pubsub: await createRedisPubSub(inject('redisURL')) });
  await options.load();
  for (const [key, value] of OPTIONS) {
    saved.set(key, options.get(key));
    await options.set(key, value as never, null);
  }
  await waitForStatus('github_oauth', true);
});

afterAll(async () => {
  for (const [key, value] of saved) await options?.set(key, value as never, null);
  await h?.close();
  await orm?.close(true);
});

describe.each(MODES)('GitHub OAuth with JavaScript %s', (mode: Mode) => {
  it('gets a state, passes the authorize redirect and ends signed in', async () => {
    const page = await h.page(mode);
    const stateRes = await page.goto('/api/oauth/state');
    if (!stateRes) throw new Error('no response from /api/oauth/state');
    const state = ((await stateRes.json()) as { data: string }).data;
    expect(state).toMatch(/^[A-Za-z0-9_-]{32}$/);

    const login = `e2e-${mode}-${Date.now().toString(36)}`;
    const authorize = new URL(`${inject('oauthURL')}/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'e2e-client',
      redirect_uri: `${h.baseURL}/oauth/github`,
      state,
      login_hint: login,
    }).toString();
    const callbacks: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${h.baseURL}/oauth/github?`)) callbacks.push(r.url());
    });
    await page.goto(authorize.toString());
    await page.waitForURL((url) => url.pathname === '/token', { timeout: 15_000 });
    expect(callbacks).toHaveLength(1);

    const cookies = await h.contexts[mode].cookies(h.baseURL);
    const session = cookies.find((c) => c.name === 'sy_session');
    expect(session?.value).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(session?.httpOnly).toBe(true);
    expect(cookies.some((c) => c.name.startsWith('sy_oauth'))).toBe(false);

    const user = await orm.em.fork().findOneOrFail(User, { githubId: String(fakeProviderId(login)) });
    expect(user.username).toMatch(/^github_\d{8}$/);
    expect(user.email).toBe(`${login}@users.example.com`);

    // Replaying the callback (same browser, same code and state) is refused: the state was used.
    await page.goto(callbacks[0] ?? '');
    await expect.poll(() => page.getByTestId('oauth-error').textContent()).toContain('state 无效或已过期');
  });

  it('starts from the plain /oauth/start/github link (no script needed) and signs in', async () => {
    const page = await h.page(mode);
    await page.goto('/oauth/start/github');
    await page.waitForURL((url) => url.pathname === '/token', { timeout: 15_000 });
    const cookies = await h.contexts[mode].cookies(h.baseURL);
    expect(cookies.some((c) => c.name === 'sy_session')).toBe(true);
    const em = orm.em.fork();
    expect(await em.count(User, { githubId: String(fakeProviderId('octocat')) })).toBe(1);
  });

  it('shows the refusal of a forged state and offers the way to settings', async () => {
    const page = await h.page(mode);
    await page.goto('/api/oauth/state');
    const res = await page.goto(`/oauth/github?code=abc&state=${'F'.repeat(32)}`);
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.getByTestId('oauth-error').textContent()).toContain('state 无效或已过期');
    expect(await page.locator('a[href="/setting"]').count()).toBeGreaterThan(0);
    const cookies = await h.contexts[mode].cookies(h.baseURL);
    expect(cookies.some((c) => c.name === 'sy_session')).toBe(false);
    // A moment later the page sends the user on to /setting (which asks a signed-out user to log in).
    await page.waitForURL((url) => url.pathname !== '/oauth/github', { timeout: 10_000 });
    expect(['/setting', '/login']).toContain(new URL(page.url()).pathname);
  });
});

describe('routing of the other /api/oauth endpoints', () => {
  it('answers envelopes from the leaf routes (bind routes need a signed-in user)', async () => {
    const get = async (path: string) => {
      const res = await fetch(`${h.baseURL}${path}`, { headers: { Accept: 'application/json' } });
      return { status: res.status, body: (await res.json()) as { success: boolean; message: string } };
    };
    expect(await get('/api/oauth/wechat/bind?code=x')).toMatchObject({
      status: 401,
      body: { success: false },
    });
    expect(await get('/api/oauth/email/bind?email=a@b.c&code=1')).toMatchObject({ status: 401 });
    expect(await get('/api/oauth/telegram/bind?id=1')).toMatchObject({ status: 401 });
    const wechat = await get('/api/oauth/wechat?code=x');
    expect(wechat).toMatchObject({ status: 200, body: { success: false } });
    expect(wechat.body.message).toContain('微信');
    expect(await get('/api/oauth/telegram/login?id=1&hash=0')).toMatchObject({
      status: 200,
      body: { success: false },
    });
  });
});
