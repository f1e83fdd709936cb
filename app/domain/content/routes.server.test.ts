/**
 * The content routes against real PostgreSQL and a real OptionService: the chat pages (/chat/{id?}, /chat2link)
 * with their token, configuration and login rules; the home page's HomePageContent and Notice (dismissed by a
 * cookie); /guide with this site's address and a model it serves.
 */
import { Ability } from '@switchyard/db/entities/ability.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Token, TokenStatus } from '@switchyard/db/entities/token.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { action as homeAction, loader as homeLoader } from '#app/routes/_index.tsx';
import { loader as aboutLoader } from '#app/routes/about.tsx';
import { loader as chatLoader } from '#app/routes/chat.($id).tsx';
import { loader as chat2linkLoader } from '#app/routes/chat2link.tsx';
import { loader as guideLoader } from '#app/routes/guide.tsx';
import { loader as usebookLoader } from '#app/routes/usebook.tsx';
import { NOTICE_COOKIE, noticeHash } from './notice.server.ts';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;
let seq = 0;

const CHATS = JSON.stringify([
  { NextChat: 'https://chat.example.test/#/?settings={"key":"{key}","url":"{address}"}' },
  { Broken: 'javascript:alert("{key}")' },
  { OpenCat: 'opencat://team/join?domain={address}&token={key}' },
]);

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'content_routes' });
  pubsub = createMemoryPubSub();
});
afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em
    .getConnection()
    .execute('truncate table tokens, sessions, abilities, options, users restart identity cascade');
  await options?.close();
  options = new OptionService({ orm: db.orm, pubsub, channel: `content-test-${Date.now()}-${seq}` });
  await options.load();
  await options.set('Chats', CHATS);
  await options.set('ServerAddress', 'https://api.example.com/');
  await options.set('GroupRatio', '{"default":1}');
  await options.set('ModelRatio', '{"claude-3-haiku":0.125,"text-embedding-3-small":0.01}');
  const em = db.orm.em.fork();
  for (const model of ['claude-3-haiku', 'text-embedding-3-small'])
    em.create(Ability, {
      group: 'default',
      model,
      channelId: 1,
      enabled: true,
      priority: 0,
      weight: 0,
    } as never);
  await em.flush();
});

function context() {
  return {
    services: {
      orm: db.orm,
      options,
      relay: null,
      version: 'v-test',
      startedAt: 1_700_000_000,
      secrets: PLAINTEXT_BOX,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    },
  } as never;
}

type Who = { user: User; session: string };

async function makeUser(tokens: Array<{ key: string; status?: number }> = []): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, { username: `ct${seq}`, displayName: '', affCode: `ctaff${seq}` } as never);
  await em.flush();
  const session = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(session),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  for (const t of tokens)
    em.create(Token, {
      userId: user.id,
      key: t.key,
      name: t.key,
      status: t.status ?? TokenStatus.Enabled,
      unlimitedQuota: true,
    } as never);
  await em.flush();
  return { user, session };
}

function request(
  who: Who | null,
  path: string,
  init: { cookie?: string; form?: Record<string, string> } = {},
) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  const cookies = [who ? `sy_session=${who.session}` : '', init.cookie ?? ''].filter(Boolean);
  if (cookies.length) headers.set('Cookie', cookies.join('; '));
  if (init.form) headers.set('Content-Type', 'application/x-www-form-urlencoded');
  return new Request(`http://localhost:3000${path}`, {
    method: init.form ? 'POST' : 'GET',
    headers,
    body: init.form ? new URLSearchParams(init.form).toString() : undefined,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: loader payloads are checked field by field
type Loader = (args: any) => Promise<unknown>;
async function run(fn: Loader, req: Request, params: Record<string, string> = {}) {
  try {
    const result = await fn({ request: req, context: context(), params });
    if (result instanceof Response) return { status: result.status, headers: result.headers, body: null };
    // biome-ignore lint/suspicious/noExplicitAny: remix data() wrapper
    const r = result as any;
    if (r && r.type === 'DataWithResponseInit')
      return { status: r.init?.status ?? 200, headers: new Headers(r.init?.headers), body: r.data };
    return { status: 200, headers: new Headers(), body: r };
  } catch (thrown) {
    if (thrown instanceof Response) return { status: thrown.status, headers: thrown.headers, body: null };
    throw thrown;
  }
}

const KEY = 'K'.repeat(48);

describe('/chat/{id?}', () => {
  it('sends a visitor to log in first', async () => {
    const res = await run(chatLoader, request(null, '/chat/0'), { id: '0' });
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/login?redirectTo=%2Fchat%2F0');
  });

  it('fills the first chat with the first enabled token (sk-) and the URL-encoded ServerAddress; /chat is /chat/0', async () => {
    const who = await makeUser([
      { key: 'D'.repeat(48), status: TokenStatus.Disabled },
      { key: KEY },
      { key: 'N'.repeat(48) },
    ]);
    const res = await run(chatLoader, request(who, '/chat'));
    expect(res.status).toBe(200);
    const view = (res.body as { view: Record<string, unknown> }).view;
    expect(view).toMatchObject({
      state: 'ready',
      selected: '0',
      tabs: [
        { id: '0', name: 'NextChat' },
        { id: '1', name: 'Broken' },
        { id: '2', name: 'OpenCat' },
      ],
      link: {
        kind: 'frame',
        // newest enabled token first, as new-api's /api/token/?p=0 list
        url: `https://chat.example.test/#/?settings={"key":"sk-${'N'.repeat(48)}","url":"https%3A%2F%2Fapi.example.com"}`,
      },
    });
  });

  it('offers an app-scheme chat as a link', async () => {
    const who = await makeUser([{ key: KEY }]);
    const res = await run(chatLoader, request(who, '/chat/2'), { id: '2' });
    expect((res.body as { view: unknown }).view).toMatchObject({
      state: 'ready',
      link: { kind: 'app', url: `opencat://team/join?domain=https%3A%2F%2Fapi.example.com&token=sk-${KEY}` },
    });
  });

  it('says no token is enabled and redirects to /token after 1.5 s', async () => {
    const who = await makeUser([{ key: KEY, status: TokenStatus.Disabled }]);
    const res = await run(chatLoader, request(who, '/chat/0'), { id: '0' });
    expect(res.status).toBe(200);
    expect((res.body as { view: unknown }).view).toMatchObject({
      state: 'no-token',
      redirectTo: '/token',
      delayMs: 1500,
    });
  });

  it('a bad template or index is a configuration error (the index a 404)', async () => {
    const who = await makeUser([{ key: KEY }]);
    const bad = await run(chatLoader, request(who, '/chat/1'), { id: '1' });
    expect(bad.status).toBe(200);
    expect((bad.body as { view: unknown }).view).toMatchObject({
      state: 'config-error',
      selected: '1',
      badIndex: false,
    });
    for (const id of ['3', 'x', '-1']) {
      const res = await run(chatLoader, request(who, `/chat/${id}`), { id });
      expect(res.status, id).toBe(404);
      expect((res.body as { view: unknown }).view).toMatchObject({
        state: 'config-error',
        selected: null,
        badIndex: true,
      });
    }
  });

  it('without configured chats asks to contact the admin', async () => {
    await options.set('Chats', '[]');
    const who = await makeUser([{ key: KEY }]);
    const res = await run(chatLoader, request(who, '/chat'));
    expect((res.body as { view: unknown }).view).toMatchObject({ state: 'unconfigured' });
  });
});

describe('/chat2link', () => {
  it('redirects (302) to the first chat link filled with the first enabled token', async () => {
    const who = await makeUser([{ key: KEY }]);
    const res = await run(chat2linkLoader, request(who, '/chat2link'));
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe(
      `https://chat.example.test/#/?settings={"key":"sk-${KEY}","url":"https%3A%2F%2Fapi.example.com"}`,
    );
  });
  it('percent-encodes characters a Location header cannot carry', async () => {
    await options.set('Chats', JSON.stringify([{ 聊天: 'https://chat.example.test/?title=聊天&key={key}' }]));
    const who = await makeUser([{ key: KEY }]);
    const res = await run(chat2linkLoader, request(who, '/chat2link'));
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe(
      `https://chat.example.test/?title=${encodeURIComponent('聊天')}&key=sk-${KEY}`,
    );
  });
  it('needs a login, a token and a chat', async () => {
    expect((await run(chat2linkLoader, request(null, '/chat2link'))).status).toBe(302);
    const none = await makeUser();
    expect((await run(chat2linkLoader, request(none, '/chat2link'))).body).toMatchObject({
      result: { state: 'no-token', redirectTo: '/token' },
    });
    await options.set('Chats', '[]');
    const who = await makeUser([{ key: KEY }]);
    expect((await run(chat2linkLoader, request(who, '/chat2link'))).body).toMatchObject({
      result: { state: 'unconfigured' },
    });
  });
});

describe('home, about and notice', () => {
  it('renders Markdown HomePageContent safely, and the default home otherwise', async () => {
    const empty = await run(homeLoader, request(null, '/'));
    expect(empty.body).toMatchObject({
      content: null,
      home: { address: 'https://api.example.com', modelCount: 2 },
    });
    await options.set('HomePageContent', '# Hello **there**\n\n<script>alert(1)</script>');
    const res = await run(homeLoader, request(null, '/'));
    const body = res.body as { content: { kind: string; html: string }; home: unknown };
    expect(body.home).toBeNull();
    expect(body.content.kind).toBe('markdown');
    expect(body.content.html).toContain('<h1>Hello <strong>there</strong></h1>');
    expect(body.content.html).not.toContain('<script>');
  });

  it('shows the notice until its hash is remembered in a cookie, and a new notice again', async () => {
    await options.set('Notice', 'Maintenance **tonight**');
    const first = await run(homeLoader, request(null, '/'));
    const notice = (first.body as { notice: { hash: string; view: { html: string } } }).notice;
    expect(notice.hash).toBe(noticeHash('Maintenance **tonight**'));
    expect(notice.view.html).toContain('<strong>tonight</strong>');

    const dismissed = await run(
      homeAction,
      request(null, '/?index', { form: { intent: 'dismiss-notice', hash: notice.hash } }),
    );
    expect(dismissed.status).toBe(302);
    const cookie = dismissed.headers.get('Set-Cookie') ?? '';
    expect(cookie).toContain(`${NOTICE_COOKIE}=${notice.hash}`);
    const again = await run(homeLoader, request(null, '/', { cookie: cookie.split(';')[0] }));
    expect((again.body as { notice: unknown }).notice).toBeNull();

    await options.set('Notice', 'Another notice');
    const changed = await run(homeLoader, request(null, '/', { cookie: cookie.split(';')[0] }));
    expect((changed.body as { notice: unknown }).notice).not.toBeNull();

    const bad = await run(
      homeAction,
      request(null, '/?index', { form: { intent: 'dismiss-notice', hash: '<x>' } }),
    );
    expect(bad.status).toBe(400);
  });

  it('about: the About option, else a default', async () => {
    expect((await run(aboutLoader, request(null, '/about'))).body).toMatchObject({
      about: null,
      version: 'v-test',
    });
    await options.set('About', 'https://about.example.com/');
    expect((await run(aboutLoader, request(null, '/about'))).body).toMatchObject({
      about: { kind: 'url', src: 'https://about.example.com/' },
    });
  });
});

describe('/guide and /usebook', () => {
  it('guide: this site address, a model it serves, and examples using both', async () => {
    const res = await run(guideLoader, request(null, '/guide'));
    const guide = (res.body as { guide: Record<string, unknown> & { snippets: Record<string, string> } })
      .guide;
    expect(guide).toMatchObject({
      address: 'https://api.example.com',
      baseUrl: 'https://api.example.com/v1',
      model: 'claude-3-haiku',
      modelCount: 2,
      signedIn: false,
      enabledTokens: null,
    });
    expect(guide.snippets.curl).toContain("'https://api.example.com/v1/chat/completions'");
    expect(guide.snippets.python).toContain('model="claude-3-haiku"');
    const who = await makeUser([{ key: KEY }, { key: 'D'.repeat(48), status: TokenStatus.Disabled }]);
    const signed = await run(guideLoader, request(who, '/guide'));
    expect((signed.body as { guide: unknown }).guide).toMatchObject({ signedIn: true, enabledTokens: 1 });
  });

  it('usebook: quota unit, groups with ratios, a priced example and the rate limit', async () => {
    await options.set('ModelRequestRateLimitEnabled', 'true');
    await options.set('ModelRequestRateLimitCount', '30');
    await options.set('ModelRequestRateLimitDurationMinutes', '2');
    const res = await run(usebookLoader, request(null, '/usebook'));
    expect((res.body as { book: unknown }).book).toMatchObject({
      status: { quota_per_unit: 500000 },
      groups: [{ name: 'default', ratio: 1 }],
      example: { model: 'claude-3-haiku', group: 'default', quotaType: 0, inputUsd: 0.25 },
      rateLimit: { count: 30, minutes: 2 },
      chats: [
        { id: '0', name: 'NextChat' },
        { id: '1', name: 'Broken' },
        { id: '2', name: 'OpenCat' },
      ],
    });
  });
});
