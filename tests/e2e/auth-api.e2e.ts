/**
 * The auth JSON contract against the running product (no browser): register -> login -> /api/user/self with
 * the session and New-Api-User -> logout revokes; wrong password answers HTTP 200 success false; Turnstile
 * (the product's TURNSTILE_VERIFY_URL fake) refuses a missing token once the option is on. Options change
 * through an OptionService on the product's database + Redis pub/sub, and are restored.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { OptionService } from '@switchyard/db/options/service.ts';
import { initOrm } from '@switchyard/db/orm.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

type Envelope = { success: boolean; message: string; data: unknown };

const base = inject('baseURL');
const run = Date.now().toString(36).slice(-6);
let orm: MikroORM | null = null;
let pubsub: PubSub | null = null;
let options: OptionService | null = null;

async function clearCriticalLimits(): Promise<void> {
  const url = inject('redisURL');
  if (!url) return;
  const client = createClient({ url });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: '*rl:critical:*', COUNT: 200 })) {
      const list = Array.isArray(keys) ? keys : [keys];
      if (list.length > 0) await client.del(list);
    }
  } finally {
    await client.close();
  }
}

async function api(
  path: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Envelope; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers: {
      'Accept-Language': 'en',
      ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...init.headers,
    },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Envelope, headers: res.headers };
}

beforeAll(async () => {
  await clearCriticalLimits();
  const databaseURL = inject('databaseURL');
  const redisURL = inject('redisURL');
  if (databaseURL && redisURL) {
    orm = await initOrm(databaseURL, { poolMax: 2 });
    pubsub = await createRedisPubSub(redisURL);
    options = new OptionService({ orm, pubsub });
    await options.load();
  }
});

afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await orm?.close();
  await clearCriticalLimits();
});

describe('auth JSON contract (live product)', () => {
  const username = `api_${run}`;
  const password = 'api-e2e-password';

  it('registers, logs in, reaches /api/user/self with the session, logs out', async () => {
    const reg = await api('/api/user/register', {
      json: { username, password, password2: password, aff_code: '' },
    });
    expect(reg.body).toMatchObject({ success: true });
    const login = await api('/api/user/login', { json: { username, password } });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      success: true,
      data: { username, role: 1, status: 1, group: 'default' },
    });
    const cookie = login.headers.get('Set-Cookie')?.split(';')[0] ?? '';
    expect(cookie).toMatch(/^sy_session=/);
    const id = String((login.body.data as { id: number }).id);
    const self = await api('/api/user/self', { headers: { Cookie: cookie, 'New-Api-User': id } });
    expect(self.status).toBe(200);
    expect(self.body.success).toBe(true);
    expect((await api('/api/user/self', { headers: { Cookie: cookie } })).status).toBe(401);
    const out = await api('/api/user/logout', { headers: { Cookie: cookie } });
    expect(out.body.success).toBe(true);
    expect((await api('/api/user/self', { headers: { Cookie: cookie, 'New-Api-User': id } })).status).toBe(
      401,
    );
  });

  it('answers a wrong password with HTTP 200 and success false', async () => {
    const res = await api('/api/user/login', { json: { username, password: 'not-the-password' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: false,
      message: 'Username or password is wrong, or user has been banned',
    });
  });

  it('slows guesses at one account: 429 with Retry-After after 5 failures, the password works after the wait', async () => {
    const name = `bo_${run}`;
    const pass = 'backoff-e2e-password';
    const reg = await api('/api/user/register', {
      json: { username: name, password: pass, password2: pass, aff_code: '' },
    });
    expect(reg.body.success).toBe(true);
    for (let i = 0; i < 5; i++) {
      const wrong = await api('/api/user/login', { json: { username: name, password: `guess-${i}` } });
      expect(wrong.status, `guess ${i + 1}`).toBe(200);
    }
    const refused = await api('/api/user/login', { json: { username: name, password: pass } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('Retry-After')).toBe('1');
    expect(refused.body).toEqual({
      success: false,
      message: 'Too many failed sign-in attempts for this account, try again in 1 s',
      data: null,
    });
    await new Promise((r) => setTimeout(r, 1100));
    const ok = await api('/api/user/login', { json: { username: name, password: pass } });
    expect(ok.body.success).toBe(true);
  });

  it('checks Turnstile through the configured siteverify endpoint when the option is on', async () => {
    if (!options) return;
    const before = options.getRaw('TurnstileCheckEnabled');
    const secret = options.getRaw('TurnstileSecretKey');
    await options.set('TurnstileSecretKey', 'e2e-secret', 1);
    await options.set('TurnstileCheckEnabled', true, 1);
    try {
      await expect
        .poll(async () => (await api('/api/user/login', { json: { username, password } })).body.message, {
          timeout: 5000,
          interval: 200,
        })
        .toBe('Turnstile token is empty');
      const forged = await api('/api/user/login?turnstile=forged', { json: { username, password } });
      expect(forged.body.message).toBe('Turnstile verification failed, please refresh and retry!');
      const passed = await api('/api/user/login?turnstile=pass-e2e', { json: { username, password } });
      expect(passed.body.success).toBe(true);
    } finally {
      await options.set('TurnstileCheckEnabled', before, 1);
      await options.set('TurnstileSecretKey', secret, 1);
    }
  });
});
