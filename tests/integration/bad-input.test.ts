/**
 * Issue 13, item 7: every defect the hostile test found in the console's input handling, each as the request
 * that answered 5xx (or stored a wrong value) before, called as the route's loader/action against a real
 * PostgreSQL and a real relay. Each bad input is refused in the /api envelope (success false, never 5xx) and
 * changes nothing; the valid neighbours still work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import { action as channelAction } from '#app/routes/api.channel._index.ts';
import { action as fetchModelsAction } from '#app/routes/api.channel.fetch_models._index.ts';
import { loader as channelSearch } from '#app/routes/api.channel.search.ts';
import { action as tagDisabledAction } from '#app/routes/api.channel.tag.disabled.ts';
import { loader as logSelfLoader } from '#app/routes/api.log.self._index.ts';
import { action as redemptionAction } from '#app/routes/api.redemption._index.ts';
import { loader as redemptionSearch } from '#app/routes/api.redemption.search.ts';
import { loader as tokenSearch } from '#app/routes/api.token.search.ts';
import { action as userAction } from '#app/routes/api.user._index.ts';
import { action as loginAction } from '#app/routes/api.user.login.ts';
import { action as registerAction } from '#app/routes/api.user.register.ts';
import { loader as userSearch } from '#app/routes/api.user.search.ts';
import { action as selfAction } from '#app/routes/api.user.self.ts';
import { action as settingAction } from '#app/routes/api.user.setting.ts';
import { loader as channelPage } from '#app/routes/channel._index.tsx';
import { loader as logPage } from '#app/routes/log._index.tsx';
import { loader as tokenPage } from '#app/routes/token._index.tsx';
import { loader as userPage } from '#app/routes/user._index.tsx';
import type { ConsoleServices } from '#app/services.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { checksum } from '../fuzz/harness.ts';
import {
  apiRequest,
  callRoute,
  consoleServices,
  envelopeOf,
  signedInUser,
  type Who,
} from './console-harness.ts';
import { type Stack, seedChannel, setOptions, startStack } from './relay-stack.ts';

const SECRET = 'bad-input-internal-secret-0123456789abcdef';
let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let services: ConsoleServices;
let root: Who;
let admin: Who;
let user: Who;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'bad_input', env: { INTERNAL_API_SECRET: SECRET } });
  root = await signedInUser(stack, { quota: 0, role: 100 });
  admin = await signedInUser(stack, { quota: 0, role: 10 });
  user = await signedInUser(stack, { quota: 1000 });
  await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o'], name: 'bad-input' });
  await stack.sql(`update channels set tag = 'bad'`);
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'gpt-4o': 1 }) });
  relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 10_000 });
  services = consoleServices(stack, relay);
}, 60_000);

afterAll(async () => {
  relay?.close();
  await stack?.close();
  await fake?.close();
});

type Fn = Parameters<typeof callRoute>[0];

/** Calls the route and expects a refusal in the envelope that changed nothing. */
async function refused(fn: Fn, request: Request): Promise<string> {
  const before = await checksum(stack);
  const { status, body } = await envelopeOf(await callRoute(fn, services, request));
  expect(status, body.message).toBeLessThan(500);
  expect(body.success, JSON.stringify(body)).toBe(false);
  expect(body.message).not.toBe('internal server error');
  expect(await checksum(stack)).toBe(before);
  return body.message;
}

async function accepted(fn: Fn, request: Request) {
  const { status, body } = await envelopeOf(await callRoute(fn, services, request));
  expect(status, body.message).toBe(200);
  expect(body.success, JSON.stringify(body)).toBe(true);
  return body;
}

const NUL = 'a\u0000b';

describe('a NUL byte is refused, never sent to PostgreSQL', () => {
  it('in a JSON body field', async () => {
    const message = await refused(
      tagDisabledAction,
      apiRequest(admin, '/api/channel/tag/disabled', { method: 'POST', body: { tag: NUL } }),
    );
    expect(message).toMatch(/NUL|U\+0000/);
    await refused(
      userAction,
      apiRequest(admin, '/api/user/', { method: 'POST', body: { username: NUL, password: 'password1' } }),
    );
    await refused(
      selfAction,
      apiRequest(user, '/api/user/self', { method: 'PUT', body: { display_name: NUL } }),
    );
  });

  it('in a form-encoded body field', async () => {
    const request = new Request('http://localhost/api/channel/tag/disabled', {
      method: 'POST',
      headers: {
        Cookie: `sy_session=${admin.session}`,
        'New-Api-User': String(admin.id),
        'Content-Type': 'application/x-www-form-urlencoded',
        'Accept-Language': 'en',
      },
      body: new URLSearchParams({ tag: NUL }).toString(),
    });
    await refused(tagDisabledAction, request);
  });

  it('in the search filters of every list', async () => {
    const q = encodeURIComponent(NUL);
    await refused(channelSearch, apiRequest(admin, `/api/channel/search?keyword=${q}`));
    await refused(userSearch, apiRequest(admin, `/api/user/search?keyword=${q}`));
    await refused(tokenSearch, apiRequest(user, `/api/token/search?keyword=${q}`));
    await refused(redemptionSearch, apiRequest(admin, `/api/redemption/search?keyword=${q}`));
    await refused(logSelfLoader, apiRequest(user, `/api/log/self/?model_name=${q}`));
  });
});

describe("a NUL byte in a page's list filter is a 400 page, not a 500", () => {
  const page = (who: Who, path: string) =>
    new Request(`http://localhost${path}`, {
      headers: { Cookie: `sy_session=${who.session}`, 'Accept-Language': 'en' },
    });
  for (const [fn, who, path] of [
    [channelPage, () => admin, '/channel?keyword='],
    [userPage, () => admin, '/user?keyword='],
    [tokenPage, () => user, '/token?keyword='],
    [logPage, () => user, '/log?model_name='],
  ] as const)
    it(path, async () => {
      let thrown: unknown;
      try {
        await callRoute(fn as Fn, services, page(who(), `${path}${encodeURIComponent(NUL)}`));
      } catch (e) {
        thrown = e;
      }
      expect((thrown as { init?: { status: number } })?.init?.status, String(thrown)).toBe(400);
    });
});

describe('fetch_models with a malformed channel', () => {
  for (const [what, body] of [
    ['base URL', { type: 1, key: 'sk-x', base_url: 'ht!tp://[::1' }],
    ['base URL without a host', { type: 1, key: 'sk-x', base_url: 'http://' }],
    ['key', { type: 1, key: { a: 1 }, base_url: fake?.url }],
    ['type', { type: 1.5, key: 'sk-x', base_url: 'http://127.0.0.1:1' }],
    ['type beyond int4', { type: 2 ** 40, key: 'sk-x', base_url: 'http://127.0.0.1:1' }],
  ] as const)
    it(`a malformed ${what} is refused`, async () => {
      await refused(
        fetchModelsAction,
        apiRequest(admin, '/api/channel/fetch_models', { method: 'POST', body }),
      );
    });
});

describe('integers are bounded to their column', () => {
  const channel = {
    name: 'int-check',
    type: 1,
    key: 'sk-int',
    base_url: 'http://127.0.0.1:1',
    models: 'gpt-4o',
  };
  for (const [field, value] of [
    ['priority', 1.5],
    ['priority', 2 ** 40],
    ['weight', 2 ** 40],
    ['weight', 1.5],
    ['type', 2 ** 31],
    ['max_input_tokens', -(2 ** 31) - 1],
  ] as const)
    it(`${field}: ${value} is refused on create and on update`, async () => {
      await refused(
        channelAction,
        apiRequest(admin, '/api/channel/', { method: 'POST', body: { ...channel, [field]: value } }),
      );
      await refused(
        channelAction,
        apiRequest(admin, '/api/channel/', { method: 'PUT', body: { id: 1, [field]: value } }),
      );
    });

  it('the limits themselves are accepted (priority: the domain bound of ±999,999,999)', async () => {
    await accepted(
      channelAction,
      apiRequest(admin, '/api/channel/', {
        method: 'POST',
        body: { ...channel, priority: 999_999_999, weight: 2 ** 31 - 1, max_input_tokens: 2 ** 31 - 1 },
      }),
    );
  });
});

describe('login fields longer than 255 characters', () => {
  it('are refused with a message, for the JSON route', async () => {
    const message = await refused(
      loginAction,
      apiRequest(null, '/api/user/login', {
        method: 'POST',
        body: { username: 'x'.repeat(300), password: 'password1' },
      }),
    );
    expect(message).toMatch(/255/);
    await refused(
      loginAction,
      apiRequest(null, '/api/user/login', {
        method: 'POST',
        body: { username: 'root', password: 'p'.repeat(300) },
      }),
    );
  });
});

describe('redemption codes in one request', () => {
  it('55 at once succeed and are audited', async () => {
    // Six-digit ids, as on a live site: 55 of them joined are longer than audit_entries.target_id (191).
    await stack.sql(`select setval('redemptions_id_seq', 100000)`);
    const body = await accepted(
      redemptionAction,
      apiRequest(admin, '/api/redemption/', {
        method: 'POST',
        body: { name: 'batch', quota: 1000, count: 55 },
      }),
    );
    expect(body.data).toHaveLength(55);
    const [audit] = await stack.sql<{ target_id: string; after: string }>(
      `select target_id, after from audit_entries where action = 'redemption.create' order by id desc limit 1`,
    );
    const ids = JSON.parse(audit!.after).ids as number[];
    expect(ids).toHaveLength(55);
    expect(audit!.target_id).toBe(`${ids[0]}..${ids[54]} (55 ids)`);
  });

  it('100 (the seed limit) succeed; 101 are refused', async () => {
    const body = await accepted(
      redemptionAction,
      apiRequest(admin, '/api/redemption/', {
        method: 'POST',
        body: { name: 'max', quota: 1000, count: 100 },
      }),
    );
    expect(body.data).toHaveLength(100);
    const message = await refused(
      redemptionAction,
      apiRequest(admin, '/api/redemption/', {
        method: 'POST',
        body: { name: 'over', quota: 1000, count: 101 },
      }),
    );
    expect(message).toMatch(/100/);
  });
});

describe('types are strict', () => {
  for (const value of [true, {}, ['a'], 12]) {
    it(`username ${JSON.stringify(value)} is refused on register, admin create, admin edit and self edit`, async () => {
      await refused(
        registerAction,
        apiRequest(null, '/api/user/register', {
          method: 'POST',
          body: { username: value, password: 'password1', password2: 'password1' },
        }),
      );
      await refused(
        userAction,
        apiRequest(admin, '/api/user/', { method: 'POST', body: { username: value, password: 'password1' } }),
      );
      await refused(
        userAction,
        apiRequest(admin, '/api/user/', { method: 'PUT', body: { id: user.id, username: value } }),
      );
      await refused(
        selfAction,
        apiRequest(user, '/api/user/self', { method: 'PUT', body: { username: value } }),
      );
    });
  }

  it('a notification setting that is an object is refused', async () => {
    await refused(
      settingAction,
      apiRequest(user, '/api/user/setting', {
        method: 'PUT',
        body: { notify_type: 'email', quota_warning_threshold: 1000, webhook_secret: { toString: 'x' } },
      }),
    );
  });
});

describe('one username rule for register, admin create, admin edit and self edit', () => {
  const cases = [
    ['21 characters', 'a'.repeat(21)],
    ['21 CJK characters', '名'.repeat(21)],
    ['a space', 'two words'],
    ['a tab', 'tab\there'],
    ['a control character', 'bell\u0007'],
  ] as const;
  for (const [what, username] of cases) {
    it(`${what} is refused everywhere with the same message`, async () => {
      const messages = [
        await refused(
          registerAction,
          apiRequest(null, '/api/user/register', {
            method: 'POST',
            body: { username, password: 'password1', password2: 'password1' },
          }),
        ),
        await refused(
          userAction,
          apiRequest(admin, '/api/user/', { method: 'POST', body: { username, password: 'password1' } }),
        ),
        await refused(
          userAction,
          apiRequest(admin, '/api/user/', { method: 'PUT', body: { id: user.id, username } }),
        ),
        await refused(selfAction, apiRequest(user, '/api/user/self', { method: 'PUT', body: { username } })),
      ];
      expect(new Set(messages).size, messages.join(' | ')).toBe(1);
    });
  }

  it('20 characters (CJK counted as characters) are accepted everywhere', async () => {
    await accepted(
      registerAction,
      apiRequest(null, '/api/user/register', {
        method: 'POST',
        body: { username: 'r'.repeat(20), password: 'password1', password2: 'password1' },
      }),
    );
    await accepted(
      userAction,
      apiRequest(admin, '/api/user/', {
        method: 'POST',
        body: { username: 'c'.repeat(20), password: 'password1' },
      }),
    );
    await accepted(
      userAction,
      apiRequest(root, '/api/user/', { method: 'PUT', body: { id: admin.id, username: '管'.repeat(20) } }),
    );
    await accepted(
      selfAction,
      apiRequest(user, '/api/user/self', { method: 'PUT', body: { username: 's'.repeat(20) } }),
    );
  });
});
