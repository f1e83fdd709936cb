/**
 * Pricing and the settings modelTab against real PostgreSQL and a real OptionService: GET /api/pricing for a
 * visitor and a user, getv3price / models_enabled / models / user/self/groups, and the modelTab writes through
 * POST /setting (validation messages, 403 for a user, audit rows, duplicate names, reset).
 */
import { Ability } from '@switchyard/db/entities/ability.ts';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { OPTIONS } from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as modelsEnabledLoader } from '#app/routes/api.channel.models_enabled.ts';
import { loader as modelsLoader } from '#app/routes/api.models.ts';
import { loader as pricingLoader } from '#app/routes/api.pricing.ts';
import { loader as v3Loader } from '#app/routes/api.product.getv3price.ts';
import { loader as groupsLoader } from '#app/routes/api.user.self.groups.ts';
import { loader as pricingPageLoader } from '#app/routes/pricing.tsx';
import { action as settingAction, loader as settingLoader } from '#app/routes/setting.tsx';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'pricing' });
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
    .execute(
      'truncate table sessions, audit_entries, abilities, channels, options, users restart identity cascade',
    );
  await options?.close();
  options = new OptionService({ orm: db.orm, pubsub, channel: `pricing-test-${Date.now()}-${seq}` });
  await options.load();
  // A small, known price table (the shipped defaults are large and may change).
  await options.set('GroupRatio', '{"default":1,"vip":2,"svip":6}');
  await options.set('UserUsableGroups', '{"default":"默认分组","vip":"vip分组"}');
  await options.set('ModelRatio', '{"gpt-4o":1.25,"claude-3-haiku":0.125,"zeta":3}');
  await options.set('CompletionRatio', '{"gpt-4o":4,"claude-3-haiku":5}');
  await options.set('ModelPrice', '{"dall-e-3":0.04}');
  await db.orm.em.getConnection().execute('truncate table audit_entries restart identity');
  const em = db.orm.em.fork();
  const routes: [string, string, boolean][] = [
    ['default', 'gpt-4o', true],
    ['vip', 'gpt-4o', true],
    ['default', 'claude-3-haiku', true],
    ['vip', 'dall-e-3', true],
    ['default', 'mystery-model', true],
    ['svip', 'svip-only', true],
    ['default', 'zeta', false],
  ];
  for (const [group, model, enabled] of routes)
    em.create(Ability, { group, model, channelId: 1, enabled, priority: 0, weight: 0 } as never);
  em.create(Channel, { name: 'c1', type: 1, key: 'k', models: 'gpt-4o,dall-e-3', group: 'default' } as never);
  em.create(Channel, { name: 'c2', type: 14, key: 'k', models: 'claude-3-haiku', group: 'default' } as never);
  em.create(Channel, { name: 'c3', type: 1, key: 'k', models: 'zeta, gpt-4o', group: 'default' } as never);
  await em.flush();
});

function context() {
  return {
    services: {
      orm: db.orm,
      options,
      relay: null,
      version: 'test',
      startedAt: 0,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    },
  } as never;
}

type Who = { user: User; token: string };

async function makeUser(over: Record<string, unknown> = {}): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `pr${seq}`,
    displayName: '',
    affCode: `praff${seq}`,
    ...over,
  } as never);
  await em.flush();
  const token = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(token),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  return { user, token };
}

function apiRequest(who: Who | null, path: string) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) {
    headers.set('Cookie', `sy_session=${who.token}`);
    headers.set('New-Api-User', String(who.user.id));
  }
  return new Request(`http://localhost${path}`, { headers });
}

function pageRequest(who: Who | null, path: string, form?: Record<string, string | string[]>) {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) headers.set('Cookie', `sy_session=${who.token}`);
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form ?? {})) for (const one of [v].flat()) body.append(k, one);
  return new Request(`http://localhost${path}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? body : undefined,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: payloads are checked field by field below
type Body = { success: boolean; message: string; data: any; [k: string]: any };
async function call(fn: (args: never) => unknown, request: Request) {
  const res = (await fn({ request, context: context(), params: {} } as never)) as Response;
  return { status: res.status, body: (await res.json()) as Body };
}

/** A page loader/action result: a Response, or Remix's data() ({data, init}); thrown ones are returned. */
async function page(fn: (args: never) => unknown, request: Request) {
  try {
    return (await fn({ request, context: context(), params: {} } as never)) as never;
  } catch (error) {
    return error as never;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: Remix data() wrapper
const payload = (r: any) => (r?.type === 'DataWithResponseInit' ? r.data : r);
// biome-ignore lint/suspicious/noExplicitAny: Remix data() wrapper or Response
const statusOf = (r: any) => (r instanceof Response ? r.status : (r?.init?.status ?? 200));

describe('GET /api/pricing', () => {
  it('answers a visitor with the usable groups, their ratios and the entries sorted as §4 says', async () => {
    const res = await call(pricingLoader, apiRequest(null, '/api/pricing'));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'data',
      'group_ratio',
      'message',
      'success',
      'usable_group',
    ]);
    expect(res.body.success).toBe(true);
    // svip is not a usable group: neither its ratio nor its model is shown; the disabled route (zeta) is not.
    expect(res.body.group_ratio).toEqual({ default: 1, vip: 2 });
    expect(res.body.usable_group).toEqual({ default: '默认分组', vip: 'vip分组' });
    expect(res.body.data).toEqual([
      {
        model_name: 'gpt-4o',
        quota_type: 0,
        model_ratio: 1.25,
        completion_ratio: 4,
        model_price: 0,
        enable_groups: ['default', 'vip'],
      },
      {
        model_name: 'claude-3-haiku',
        quota_type: 0,
        model_ratio: 0.125,
        completion_ratio: 5,
        model_price: 0,
        enable_groups: ['default'],
      },
      // Unpriced: the relay refuses it, so it carries no ratio.
      {
        model_name: 'mystery-model',
        quota_type: 0,
        model_ratio: 0,
        completion_ratio: 0,
        model_price: 0,
        enable_groups: ['default'],
      },
      {
        model_name: 'dall-e-3',
        quota_type: 1,
        model_ratio: 0,
        completion_ratio: 0,
        model_price: 0.04,
        enable_groups: ['vip'],
      },
    ]);
  });

  it("answers a user with their own group's view, and 401 for a header naming someone else", async () => {
    const svip = await makeUser({ group: 'svip' });
    const res = await call(pricingLoader, apiRequest(svip, '/api/pricing'));
    expect(res.body.group_ratio).toEqual({ default: 1, vip: 2, svip: 6 });
    expect(res.body.usable_group).toMatchObject({ svip: 'svip' });
    expect(res.body.data.map((e: { model_name: string }) => e.model_name)).toContain('svip-only');
    const other = await makeUser();
    const mismatch = new Request('http://localhost/api/pricing', {
      headers: { Cookie: `sy_session=${svip.token}`, 'New-Api-User': String(other.user.id) },
    });
    const refused = await call(pricingLoader, mismatch);
    expect(refused.status).toBe(401);
    expect(refused.body.success).toBe(false);
  });
});

describe('the /pricing page', () => {
  it('prices as the relay bills: input = ratio × 2 × group ratio USD per 1M, output × completion ratio', async () => {
    const vip = await makeUser({ group: 'vip' });
    const res = payload(await page(pricingPageLoader, pageRequest(vip, '/pricing?q=GPT')));
    expect(res.page).toMatchObject({ group: 'vip', groupRatio: 2, total: 1, signedIn: true });
    // gpt-4o: 1.25 × 2 × 2 = $5 per 1M input tokens; × completion ratio 4 = $20 per 1M output tokens.
    expect(res.page.rows[0]).toMatchObject({
      model_name: 'gpt-4o',
      available: true,
      inputUsd: 5,
      outputUsd: 20,
      inputQuota: 2_500_000,
    });
    // A visitor sees the default group: 1.25 × 2 × 1 = $2.5; dall-e-3 is per call: 0.04 × 1 = $0.04.
    const visitor = payload(await page(pricingPageLoader, pageRequest(null, '/pricing')));
    expect(visitor.page).toMatchObject({ group: 'default', groupRatio: 1, signedIn: false });
    const byName = Object.fromEntries(
      visitor.page.rows.map((r: { model_name: string }) => [r.model_name, r]),
    );
    expect(byName['gpt-4o']).toMatchObject({ inputUsd: 2.5, outputUsd: 10 });
    expect(byName['dall-e-3']).toMatchObject({ quota_type: 1, callUsd: 0.04, available: false });
    expect(byName['mystery-model']).toMatchObject({ priced: false });
    // Switching the viewed group to one the visitor cannot use falls back to default.
    const svipView = payload(await page(pricingPageLoader, pageRequest(null, '/pricing?group=svip')));
    expect(svipView.page.group).toBe('default');
    const vipView = payload(await page(pricingPageLoader, pageRequest(null, '/pricing?group=vip&sort=name')));
    expect(vipView.page.rows.map((r: { model_name: string }) => r.model_name)).toEqual([
      'claude-3-haiku',
      'dall-e-3',
      'gpt-4o',
      'mystery-model',
    ]);
    expect(vipView.page.rows.find((r: { model_name: string }) => r.model_name === 'dall-e-3')).toMatchObject({
      callUsd: 0.08,
      available: true,
    });
  });
});

describe('admin and user JSON calls', () => {
  it('getv3price, models_enabled and models: 401 for a visitor, 403 for a user, data for an admin', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const plain = await makeUser();
    for (const [fn, path] of [
      [v3Loader, '/api/product/getv3price'],
      [modelsEnabledLoader, '/api/channel/models_enabled'],
      [modelsLoader, '/api/models'],
    ] as const) {
      expect((await call(fn, apiRequest(null, path))).status, path).toBe(401);
      const forbidden = await call(fn, apiRequest(plain, path));
      expect(forbidden.status, path).toBe(403);
      expect(forbidden.body.success).toBe(false);
    }
    const v3 = await call(v3Loader, apiRequest(admin, '/api/product/getv3price'));
    expect(v3.body).toEqual({
      success: true,
      message: '',
      data: {
        ModelPrice: { 'dall-e-3': 0.04 },
        ModelRatio: { 'gpt-4o': 1.25, 'claude-3-haiku': 0.125, zeta: 3 },
        CompletionRatio: { 'gpt-4o': 4, 'claude-3-haiku': 5 },
      },
    });
    const enabled = await call(modelsEnabledLoader, apiRequest(admin, '/api/channel/models_enabled'));
    expect(enabled.body.data).toEqual(['claude-3-haiku', 'dall-e-3', 'gpt-4o', 'mystery-model', 'svip-only']);
    const models = await call(modelsLoader, apiRequest(admin, '/api/models'));
    expect(models.body.data).toEqual({ '1': ['dall-e-3', 'gpt-4o', 'zeta'], '14': ['claude-3-haiku'] });
  });

  it('user/self/groups maps each usable group to its description and ratio', async () => {
    const vip = await makeUser({ group: 'vip' });
    const res = await call(groupsLoader, apiRequest(vip, '/api/user/self/groups'));
    expect(res.body).toEqual({
      success: true,
      message: '',
      data: { default: { desc: '默认分组', ratio: 1 }, vip: { desc: 'vip分组', ratio: 2 } },
    });
    expect((await call(groupsLoader, apiRequest(null, '/api/user/self/groups'))).status).toBe(401);
  });
});

describe('settings modelTab', () => {
  const post = (who: Who, form: Record<string, string | string[]>) =>
    page(settingAction, pageRequest(who, '/setting?tab=modelTab', form));

  it('refuses a user (403) and writes nothing', async () => {
    const plain = await makeUser();
    for (const form of [
      { intent: 'modelSave', name: 'x', ratio: '1' },
      { intent: 'modelDelete', name: 'gpt-4o' },
      { intent: 'modelBatch', models: 'gpt-4o', mode: 'ratio', value: '9' },
      { intent: 'modelJson', ModelRatio: '{}' },
      { intent: 'modelReset' },
    ] as Record<string, string>[]) {
      const res = await post(plain, form);
      expect(statusOf(res), form.intent).toBe(403);
      expect(payload(res)).toMatchObject({
        intent: form.intent,
        error: 'You do not have permission to do this',
      });
    }
    expect(options.get('ModelRatio')).toMatchObject({ 'gpt-4o': 1.25 });
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
    const tab = await page(settingLoader, pageRequest(plain, '/setting?tab=modelTab'));
    expect(statusOf(tab)).toBe(403);
    expect(payload(tab).modelTab).toBeNull();
  });

  it('adds, edits, batch-sets and deletes rows through OptionService, with an audit row per changed key', async () => {
    const admin = await makeUser({ role: Role.Admin });
    let res = await post(admin, { intent: 'modelSave', name: 'mystery-model', original: '', ratio: '0.5' });
    expect(statusOf(res)).toBe(302);
    expect(options.get('ModelRatio')['mystery-model']).toBe(0.5);
    const audits = await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } });
    expect(audits.map((a) => [a.action, a.targetId, a.actorId])).toEqual([
      ['option.set', 'ModelRatio', admin.user.id],
    ]);

    // A fixed price excludes the ratios: saving one drops them.
    res = await post(admin, {
      intent: 'modelSave',
      name: 'gpt-4o',
      original: 'gpt-4o',
      price: '0.5',
      ratio: '9',
      completion: '9',
    });
    expect(statusOf(res)).toBe(302);
    expect(options.get('ModelPrice')['gpt-4o']).toBe(0.5);
    expect(Object.hasOwn(options.get('ModelRatio'), 'gpt-4o')).toBe(false);
    expect(Object.hasOwn(options.get('CompletionRatio'), 'gpt-4o')).toBe(false);
    // The price landed before the ratios were removed: the model was never unpriced in between.
    const order = (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map(
      (a) => a.targetId,
    );
    expect(order.slice(1)).toEqual(['ModelPrice', 'ModelRatio', 'CompletionRatio']);

    // Rename keeps the values under the new name only.
    await post(admin, { intent: 'modelSave', name: 'zeta-2', original: 'zeta', ratio: '3' });
    expect(options.get('ModelRatio')).toMatchObject({ 'zeta-2': 3 });
    expect(Object.hasOwn(options.get('ModelRatio'), 'zeta')).toBe(false);

    res = await post(admin, {
      intent: 'modelBatch',
      models: ['claude-3-haiku', 'gpt-4o'],
      mode: 'both',
      value: '2',
      value2: '3',
    });
    expect(statusOf(res)).toBe(302);
    expect(options.get('ModelRatio')).toMatchObject({ 'claude-3-haiku': 2, 'gpt-4o': 2 });
    expect(options.get('CompletionRatio')).toMatchObject({ 'claude-3-haiku': 3, 'gpt-4o': 3 });
    expect(Object.hasOwn(options.get('ModelPrice'), 'gpt-4o')).toBe(false);

    res = await post(admin, { intent: 'modelDelete', name: 'claude-3-haiku' });
    expect(statusOf(res)).toBe(302);
    expect(Object.hasOwn(options.get('ModelRatio'), 'claude-3-haiku')).toBe(false);
    expect(Object.hasOwn(options.get('CompletionRatio'), 'claude-3-haiku')).toBe(false);

    // The tab lists the table and the served models that lost their price.
    const tab = payload(await page(settingLoader, pageRequest(admin, '/setting?tab=modelTab')));
    expect(tab.modelTab.unset).toEqual(['claude-3-haiku', 'svip-only']);
    expect(tab.modelTab.rows.map((r: { name: string }) => r.name)).toContain('mystery-model');
  });

  it("refuses bad input with the seed's messages", async () => {
    const admin = await makeUser({ role: Role.Admin });
    const cases: [Record<string, string | string[]>, string][] = [
      [{ intent: 'modelSave', name: 'new-model', ratio: 'abc' }, 'please enter a number'],
      [{ intent: 'modelSave', name: 'new-model', ratio: '-1' }, 'please enter a number'],
      [{ intent: 'modelSave', name: 'gpt-4o', original: '', ratio: '1' }, 'model name already exists'],
      [{ intent: 'modelSave', name: 'gpt-4o', original: 'zeta', ratio: '1' }, 'model name already exists'],
      [
        { intent: 'modelJson', ModelRatio: '{oops', ModelPrice: '{}', CompletionRatio: '{}' },
        'not a valid JSON string',
      ],
      [{ intent: 'modelJson', ModelRatio: '{"a":"x"}' }, 'please enter a number'],
      [{ intent: 'modelJson', ModelRatio: '[1]' }, 'not a valid JSON string'],
      [{ intent: 'modelBatch', mode: 'ratio', value: '1' }, 'please select models for batch first'],
      [{ intent: 'modelBatch', models: 'gpt-4o', mode: 'both', value: '1' }, 'please enter a number'],
    ];
    for (const [form, message] of cases) {
      const res = await post(admin, form);
      expect(statusOf(res), JSON.stringify(form)).toBe(400);
      expect(payload(res).error, JSON.stringify(form)).toBe(message);
    }
    const unchanged = await post(admin, {
      intent: 'modelJson',
      ModelRatio: JSON.stringify(options.get('ModelRatio')),
    });
    expect(payload(unchanged).error).toBe('you seem to have changed nothing');
    expect(options.get('ModelRatio')).toEqual({ 'gpt-4o': 1.25, 'claude-3-haiku': 0.125, zeta: 3 });
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
  });

  it('saves the JSON text areas and resets the three tables to the shipped defaults', async () => {
    const admin = await makeUser({ role: Role.Admin });
    let res = await post(admin, { intent: 'modelJson', ModelRatio: '{"only":2}' });
    expect(statusOf(res)).toBe(302);
    expect(options.get('ModelRatio')).toEqual({ only: 2 });
    res = await post(admin, { intent: 'modelReset' });
    expect(statusOf(res)).toBe(302);
    for (const key of ['ModelRatio', 'CompletionRatio', 'ModelPrice'] as const)
      expect(options.get(key)).toEqual(JSON.parse(OPTIONS[key].default));
    const audits = await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } });
    expect(audits[0]?.targetId).toBe('ModelRatio');
    // The reset adds to ModelPrice and removes from both ratio tables: the addition is written first.
    expect(audits.slice(1).map((a) => a.targetId)).toEqual(['ModelPrice', 'ModelRatio', 'CompletionRatio']);
  });
});
