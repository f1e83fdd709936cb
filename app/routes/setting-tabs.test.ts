/**
 * The admin settings tabs built on the option forms (ADR 023), through the /setting loader and action with a real
 * OptionService on PostgreSQL: each tab lists its keys, a post saves only the changed keys and answers with the
 * form's confirmation (PRG toast), nothing changed is refused with the seed's message, a bad value is refused with
 * the registry's message and saves nothing, and the update check answers from a local fake releases server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeSession, makeUser } from '#app/domain/account/test-helpers.server.ts';
import { getToast } from '#app/utils/toast.server.ts';
import { action as clearAction, loader as clearLoader } from './log.clear.tsx';
import { action, loader } from './setting.tsx';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;
let services: Record<string, unknown>;
let releases: Server;
let latestTag = 'v1.2.3';
let adminToken = '';
let rootToken = '';
let userToken = '';

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'setting_tabs' });
  pubsub = createMemoryPubSub();
  releases = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ tag_name: latestTag, html_url: 'https://example.com/r', body: 'notes' }));
  });
  await new Promise<void>((resolve) => releases.listen(0, '127.0.0.1', resolve));
  adminToken = (await makeSession(db.orm, await makeUser(db.orm, { role: Role.Admin }))).token;
  rootToken = (await makeSession(db.orm, await makeUser(db.orm, { role: Role.Root }))).token;
  userToken = (await makeSession(db.orm, await makeUser(db.orm))).token;
});
afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await new Promise((resolve) => releases?.close(resolve));
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em.getConnection().execute('truncate table audit_entries, options restart identity cascade');
  await options?.close();
  options = new OptionService({ orm: db.orm, pubsub, channel: `setting-tabs-${Date.now()}` });
  await options.load();
  services = {
    orm: db.orm,
    options,
    relay: null,
    version: 'v1.2.3',
    startedAt: 1_700_000_000,
    releasesUrl: `http://127.0.0.1:${(releases.address() as AddressInfo).port}/releases/latest`,
  };
});

function req(path: string, token: string, form?: [string, string][], lang = 'en') {
  const headers = new Headers({ 'Accept-Language': lang });
  headers.set('Cookie', `sy_session=${token}`);
  return new Request(`http://localhost${path}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}
const args = (request: Request) => ({ request, params: {}, context: { services } as never });
type Reply = { data: Record<string, unknown>; init?: ResponseInit | null };

/** The flash toast a redirect carries. */
async function toastOf(res: Response): Promise<string | undefined> {
  const cookie = res.headers.get('Set-Cookie') ?? '';
  const { toast } = await getToast(
    new Request('http://localhost/', { headers: { Cookie: cookie.split(';')[0] ?? '' } }),
  );
  return toast?.message;
}

const audited = async () =>
  (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map((a) => a.targetId);

const RATE = (enabled: string, duration: string, count: string, success: string): [string, string][] => [
  ['intent', 'option:ratelimit'],
  ['ModelRequestRateLimitEnabled', 'false'],
  ...(enabled === 'true' ? ([['ModelRequestRateLimitEnabled', 'true']] as [string, string][]) : []),
  ['ModelRequestRateLimitDurationMinutes', duration],
  ['ModelRequestRateLimitCount', count],
  ['ModelRequestRateLimitSuccessCount', success],
];

describe('ratelimit tab', () => {
  it('lists the four keys with their defaults; 403 for a non-admin', async () => {
    const page = (await loader(args(req('/setting?tab=ratelimit', adminToken)))) as unknown as Reply;
    expect(page.data.ratelimit).toEqual({
      values: {
        ModelRequestRateLimitEnabled: 'false',
        ModelRequestRateLimitDurationMinutes: '1',
        ModelRequestRateLimitCount: '0',
        ModelRequestRateLimitSuccessCount: '1000',
      },
      secretsSet: {},
      readOnly: {},
      readOnlyForms: {},
    });
    const denied = (await loader(args(req('/setting?tab=ratelimit', userToken)))) as unknown as Reply;
    expect(denied.init?.status).toBe(403);
    expect(denied.data.ratelimit).toBeNull();
    const post = (await action(
      args(req('/setting?tab=ratelimit', userToken, RATE('true', '1', '0', '1000'))),
    )) as unknown as Reply;
    expect(post.init?.status).toBe(403);
    expect(await audited()).toEqual([]);
  });

  it('saves only the changed keys and confirms', async () => {
    const res = (await action(
      args(req('/setting?tab=ratelimit', adminToken, RATE('true', '1', '30', '1000'))),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/setting?tab=ratelimit');
    expect(await toastOf(res)).toBe('Model rate limit updated');
    expect(await audited()).toEqual(['ModelRequestRateLimitEnabled', 'ModelRequestRateLimitCount']);
    expect(options.get('ModelRequestRateLimitCount')).toBe(30);
  });

  it("answers 'you seem to have changed nothing' in en and zh", async () => {
    const en = (await action(
      args(req('/setting?tab=ratelimit', adminToken, RATE('false', '1', '0', '1000'))),
    )) as unknown as Reply;
    expect(en.init?.status).toBe(400);
    expect(en.data).toMatchObject({ intent: 'option:ratelimit', error: 'You seem to have changed nothing' });
    const zh = (await action(
      args(req('/setting?tab=ratelimit', adminToken, RATE('false', '1', '0', '1000'), 'zh')),
    )) as unknown as Reply;
    expect(zh.data.error).toBe('你似乎并没有修改什么');
  });

  it('refuses a success count below 1 with the registry message and saves nothing', async () => {
    const bad = (await action(
      args(req('/setting?tab=ratelimit', adminToken, RATE('true', '5', '10', '0'))),
    )) as unknown as Reply;
    expect(bad.init?.status).toBe(400);
    expect(bad.data).toMatchObject({
      error: 'ModelRequestRateLimitSuccessCount: must be at least 1',
      fieldErrors: {
        ModelRequestRateLimitSuccessCount: ['ModelRequestRateLimitSuccessCount: must be at least 1'],
      },
      values: { ModelRequestRateLimitSuccessCount: '0', ModelRequestRateLimitCount: '10' },
    });
    const negative = (await action(
      args(req('/setting?tab=ratelimit', adminToken, RATE('true', '-1', '10', '5'))),
    )) as unknown as Reply;
    expect(negative.data.error).toBe('ModelRequestRateLimitDurationMinutes: must be at least 0');
    expect(await audited()).toEqual([]);
    expect(options.get('ModelRequestRateLimitEnabled')).toBe(false);
  });
});

describe('other tab', () => {
  it('shows version, start time and the branding keys', async () => {
    await options.set('Notice', 'hello', 1);
    const page = (await loader(args(req('/setting?tab=other', adminToken)))) as unknown as Reply;
    expect(page.data.other).toMatchObject({
      version: 'v1.2.3',
      startTime: 1_700_000_000,
      values: {
        Notice: 'hello',
        SystemName: 'Switchyard',
        Logo: '',
        HomePageContent: '',
        About: '',
        Footer: '',
        apiAddressList: '[]',
      },
    });
  });

  it('saves each setting from its own form with its own confirmation', async () => {
    const notice = (await action(
      args(
        req('/setting?tab=other', adminToken, [
          ['intent', 'option:notice'],
          ['Notice', 'maintenance at 2am'],
        ]),
      ),
    )) as Response;
    expect(await toastOf(notice)).toBe('Announcement updated');
    const name = (await action(
      args(
        req(
          '/setting?tab=other',
          adminToken,
          [
            ['intent', 'option:systemName'],
            ['SystemName', 'Gate'],
            ['Notice', 'ignored: not this form'],
          ],
          'zh',
        ),
      ),
    )) as Response;
    expect(await toastOf(name)).toBe('系统名称已更新');
    expect(options.getRaw('Notice')).toBe('maintenance at 2am');
    expect(options.getRaw('SystemName')).toBe('Gate');
    expect(await audited()).toEqual(['Notice', 'SystemName']);
    for (const [id, key, value, message, token] of [
      ['logo', 'Logo', 'https://cdn.example.com/logo.png', 'Logo updated', adminToken],
      ['homePageContent', 'HomePageContent', '# Welcome', 'Home page content updated', adminToken],
      ['about', 'About', 'About us', 'About content updated', adminToken],
      ['footer', 'Footer', '<b>footer</b>', 'Footer content updated', adminToken],
      // root-only (ADR 033): the address users are told to send their keys to
      [
        'apiAddressList',
        'apiAddressList',
        '[{"title":"main","url":"https://api.example.com","line":"CN"}]',
        'API address list updated',
        rootToken,
      ],
    ] as const) {
      const res = (await action(
        args(
          req('/setting?tab=other', token, [
            ['intent', `option:${id}`],
            [key, value],
          ]),
        ),
      )) as Response;
      expect(await toastOf(res)).toBe(message);
      expect(options.getRaw(key)).toBe(value);
    }
  });

  it('refuses an API address list that is not JSON and saves nothing', async () => {
    const bad = (await action(
      args(
        req('/setting?tab=other', rootToken, [
          ['intent', 'option:apiAddressList'],
          ['apiAddressList', '[{"title":'],
        ]),
      ),
    )) as unknown as Reply;
    expect(bad.init?.status).toBe(400);
    expect(bad.data.error).toBe('apiAddressList: not a valid JSON string');
    expect(await audited()).toEqual([]);
  });

  it('checks for updates against the releases URL (admins only)', async () => {
    latestTag = 'v1.2.3';
    const same = (await action(
      args(req('/setting?tab=other', adminToken, [['intent', 'checkUpdate']])),
    )) as unknown as Reply;
    expect(same.data).toEqual({ intent: 'checkUpdate', update: { kind: 'latest', current: 'v1.2.3' } });
    latestTag = 'v1.3.0';
    const newer = (await action(
      args(req('/setting?tab=other', adminToken, [['intent', 'checkUpdate']])),
    )) as unknown as Reply;
    expect(newer.data.update).toMatchObject({ kind: 'newer', tag: 'v1.3.0', url: 'https://example.com/r' });
    services.releasesUrl = 'http://127.0.0.1:9/releases/latest';
    const offline = (await action(
      args(req('/setting?tab=other', adminToken, [['intent', 'checkUpdate']])),
    )) as unknown as Reply;
    expect(offline.data.update).toEqual({ kind: 'failed' });
    // Without RELEASES_URL nothing is asked: the tab says the check is not configured.
    services.releasesUrl = undefined;
    const unset = (await action(
      args(req('/setting?tab=other', adminToken, [['intent', 'checkUpdate']])),
    )) as unknown as Reply;
    expect(unset.data.update).toEqual({ kind: 'unconfigured' });
    const denied = (await action(
      args(req('/setting?tab=other', userToken, [['intent', 'checkUpdate']])),
    )) as unknown as Reply;
    expect(denied.init?.status).toBe(403);
  });
});

describe('pay tab', () => {
  const PLAN = (price: string, min: string, products: string[], topups: string[]): [string, string][] => [
    ['intent', 'option:payPlan'],
    ['Price', price],
    ['MinTopUp', min],
    ...products.map((v): [string, string] => ['ProductConfig', v]),
    ...topups.map((v): [string, string] => ['TopupConfig', v]),
  ];

  it('lists the defaults, never a secret, and says whether each secret is set', async () => {
    await options.set('AlipayPrivateKey', 'PRIVATE-KEY-TEXT', 1);
    const page = (await loader(args(req('/setting?tab=pay', adminToken)))) as unknown as Reply;
    expect(page.data.pay).toMatchObject({
      values: { Price: '7.3', MinTopUp: '1', ProductConfig: '[]', TopupConfig: '[]', AlipayPrivateKey: '' },
      secretsSet: {
        AlipayPrivateKey: true,
        AlipayPublicKey: false,
        WeChatPayApiV3Key: false,
        WeChatPayApiCertKey: false,
      },
    });
    expect(JSON.stringify(page.data)).not.toContain('PRIVATE-KEY-TEXT');
  });

  it('saves the plan lists from one input per amount, blank inputs left out', async () => {
    const res = (await action(
      args(req('/setting?tab=pay', adminToken, PLAN('7.3', '1', ['10', '', '20.5', ''], ['5', '0.01', '']))),
    )) as Response;
    expect(await toastOf(res)).toBe('Top-up plans updated');
    expect(options.get('ProductConfig')).toEqual([10, 20.5]);
    expect(options.get('TopupConfig')).toEqual([5, 0.01]);
    expect(await audited()).toEqual(['ProductConfig', 'TopupConfig']);
    const same = (await action(
      args(req('/setting?tab=pay', adminToken, PLAN('7.30', '1', ['10', '20.50', ''], ['5', '0.01']))),
    )) as unknown as Reply;
    expect(same.data.error).toBe('You seem to have changed nothing');
  });

  it('refuses MinTopUp below 1 and a negative amount, saving nothing', async () => {
    const min = (await action(
      args(req('/setting?tab=pay', adminToken, PLAN('7.3', '0', ['1'], []))),
    )) as unknown as Reply;
    expect(min.init?.status).toBe(400);
    expect(min.data.error).toBe('MinTopUp: must be at least 1');
    const negative = (await action(
      args(req('/setting?tab=pay', adminToken, PLAN('7.3', '2', ['-1'], []))),
    )) as unknown as Reply;
    expect(negative.data.fieldErrors).toHaveProperty('ProductConfig');
    expect(await audited()).toEqual([]);
    expect(options.get('Price')).toBe(7.3);
  });

  it('keeps a secret when its field is left empty and replaces it when filled', async () => {
    await options.set('WeChatPayApiV3Key', 'old-v3-key', 1);
    const form = (key: string, mch: string): [string, string][] => [
      ['intent', 'option:wechatPay'],
      ['WeChatPayAppId', 'wx123'],
      ['WeChatPayMchId', mch],
      ['WeChatPayCertSerial', ''],
      ['WeChatPayNotifyUrl', ''],
      ['WeChatPayApiV3Key', key],
      ['WeChatPayApiCertKey', ''],
    ];
    // Payment keys are root-only (ADR 033).
    const kept = (await action(args(req('/setting?tab=pay', rootToken, form('', '1900'))))) as Response;
    expect(await toastOf(kept)).toBe('WeChat Pay settings updated');
    expect(options.getRaw('WeChatPayApiV3Key')).toBe('old-v3-key');
    expect(options.getRaw('WeChatPayApiCertKey')).toBe('');
    await action(args(req('/setting?tab=pay', rootToken, form('new-v3-key', '1900'))));
    expect(options.getRaw('WeChatPayApiV3Key')).toBe('new-v3-key');
    // The first entry is the setup's own write.
    expect(await audited()).toEqual([
      'WeChatPayApiV3Key',
      'WeChatPayAppId',
      'WeChatPayMchId',
      'WeChatPayApiV3Key',
    ]);
    const audits = await db.orm.em.fork().find(AuditEntry, {});
    expect(JSON.stringify(audits)).not.toContain('new-v3-key');
  });
});

describe('operation tab', () => {
  const post = (form: [string, string][], lang = 'en', token = adminToken) =>
    action(args(req('/setting?tab=operation', token, form, lang)));

  it('lists every section key with the seed defaults; 403 for a non-admin', async () => {
    const page = (await loader(args(req('/setting?tab=operation', adminToken)))) as unknown as Reply;
    const values = (page.data.operation as { values: Record<string, string> }).values;
    expect(values).toMatchObject({
      TopUpLink: '',
      QuotaPerUnit: '500000',
      RetryTimes: '0',
      DisplayInCurrencyEnabled: 'true',
      DemoSiteEnabled: 'false',
      PreConsumedQuota: '500',
      ChannelDisableThreshold: '5',
      QuotaRemindThreshold: '1000',
      SensitiveWords: 'test_sensitive',
      StopOnSensitiveEnabled: 'true',
      LogConsumeEnabled: 'true',
      GroupRatio: '{"default":1,"vip":1,"svip":1}',
      DrawingEnabled: 'true',
      MjForwardUrlEnabled: 'true',
      DataExportInterval: '5',
      DataExportDefaultTime: 'hour',
      StreamCacheQueueLength: '0',
    });
    expect(Object.keys(values)).toHaveLength(38);
    const denied = (await loader(args(req('/setting?tab=operation', userToken)))) as unknown as Reply;
    expect(denied.init?.status).toBe(403);
    expect(denied.data.operation).toBeNull();
    const refused = (await action(
      args(
        req('/setting?tab=operation', userToken, [
          ['intent', 'option:opQuota'],
          ['QuotaForNewUser', '9'],
        ]),
      ),
    )) as unknown as Reply;
    expect(refused.init?.status).toBe(403);
    expect(await audited()).toEqual([]);
  });

  it('saves only the changed keys of a section with its confirmation', async () => {
    const general = (await post([
      ['intent', 'option:opGeneral'],
      ['TopUpLink', ''],
      ['ChatLink', ''],
      ['ChatLink2', ''],
      ['QuotaPerUnit', '500000'],
      ['RetryTimes', '3'],
      ['DisplayInCurrencyEnabled', 'false'],
      ['DisplayTokenStatEnabled', 'false'],
      ['DisplayTokenStatEnabled', 'true'],
      ['DefaultCollapseSidebar', 'false'],
      ['DemoSiteEnabled', 'false'],
      ['SelfUseModeEnabled', 'false'],
      ['SelfUseModeEnabled', 'true'],
    ])) as Response;
    expect(general.headers.get('Location')).toBe('/setting?tab=operation');
    expect(await toastOf(general)).toBe('General settings updated');
    expect(await audited()).toEqual(['RetryTimes', 'DisplayInCurrencyEnabled', 'SelfUseModeEnabled']);
    expect(options.get('RetryTimes')).toBe(3);
    expect(options.get('DisplayInCurrencyEnabled')).toBe(false);
    const quota = (await post(
      [
        ['intent', 'option:opQuota'],
        ['QuotaForNewUser', '100000'],
        ['PreConsumedQuota', '500'],
      ],
      'zh',
    )) as Response;
    expect(await toastOf(quota)).toBe('额度设置已更新');
    expect(options.get('QuotaForNewUser')).toBe(100000);
    const sensitive = (await post([
      ['intent', 'option:opSensitive'],
      ['CheckSensitiveOnCompletionEnabled', 'false'],
      ['CheckSensitiveOnCompletionEnabled', 'true'],
      ['SensitiveWords', 'alpha\r\nbeta'],
    ])) as Response;
    expect(await toastOf(sensitive)).toBe('Sensitive word settings updated');
    expect(options.get('SensitiveWords')).toBe('alpha\nbeta');
    const dashboard = (await post([
      ['intent', 'option:opDashboard'],
      ['DataExportEnabled', 'false'],
      ['DataExportInterval', '10'],
      ['DataExportDefaultTime', 'week'],
    ])) as Response;
    expect(await toastOf(dashboard)).toBe('Data dashboard settings updated');
    expect(options.get('DataExportDefaultTime')).toBe('week');
    const groups = (await post([
      ['intent', 'option:opGroups'],
      ['GroupRatio', '{"default":1,"vip":1.5}'],
      ['UserUsableGroups', '{"default":"默认分组","vip":"vip分组"}'],
    ])) as Response;
    expect(await toastOf(groups)).toBe('Group settings updated');
    expect(options.get('GroupRatio')).toEqual({ default: 1, vip: 1.5 });
    expect((await audited()).slice(-1)).toEqual(['GroupRatio']);
  });

  it('refuses bad JSON and an export interval below 1 with the registry message, saving nothing', async () => {
    const json = (await post([
      ['intent', 'option:opGroups'],
      ['GroupRatio', '{"default":1,"vip":2}'],
      ['UserUsableGroups', '{"default":'],
    ])) as unknown as Reply;
    expect(json.init?.status).toBe(400);
    expect(json.data).toMatchObject({
      intent: 'option:opGroups',
      error: 'UserUsableGroups: not a valid JSON string',
      values: { UserUsableGroups: '{"default":' },
    });
    const chats = (await post(
      [
        ['intent', 'option:opChats'],
        ['Chats', 'not json'],
      ],
      'en',
      rootToken,
    )) as unknown as Reply;
    expect(chats.data.error).toBe('Chats: not a valid JSON string');
    const interval = (await post([
      ['intent', 'option:opDashboard'],
      ['DataExportInterval', '0'],
    ])) as unknown as Reply;
    expect(interval.data.error).toBe('DataExportInterval: must be at least 1');
    const same = (await post([
      ['intent', 'option:opStream'],
      ['StreamCacheQueueLength', '0'],
    ])) as unknown as Reply;
    expect(same.data.error).toBe('You seem to have changed nothing');
    expect(await audited()).toEqual([]);
    expect(options.get('GroupRatio')).toEqual({ default: 1, vip: 1, svip: 1 });
  });

  it('clears logs before a chosen time through /log/clear and comes back to the tab', async () => {
    const em = db.orm.em.fork();
    for (const createdAt of [1_000, 2_000, 3_000_000_000])
      em.create(Log, { userId: 1, username: 'u', type: LogType.Consume, createdAt, content: '' } as never);
    await em.flush();
    const back = encodeURIComponent('/setting?tab=operation');
    const none = (await clearLoader(
      args(req(`/log/clear?before=&redirectTo=${back}`, adminToken)),
    )) as unknown as Record<string, unknown>;
    expect(none).toMatchObject({ error: 'Please select the log time', redirectTo: '/setting?tab=operation' });
    const zh = (await clearLoader(
      args(req(`/log/clear?before=&redirectTo=${back}`, adminToken, undefined, 'zh')),
    )) as unknown as Record<string, unknown>;
    expect(zh.error).toBe('请选择日志时间');
    const res = (await clearAction(
      args(
        req('/log/clear', adminToken, [
          ['before', '2000-01-01T00:00'],
          ['redirectTo', '/setting?tab=operation'],
        ]),
      ),
    )) as Response;
    expect(res.headers.get('Location')).toBe('/setting?tab=operation');
    expect(await toastOf(res)).toBe('Cleared 2 logs');
    expect(await db.orm.em.fork().count(Log, {})).toBe(1);
  });
});
