/**
 * Root-only options (issue 23 item 2, ADR 033): an administrator (role 10) must not decide where mail, links, keys
 * or money go. Through the real routes on PostgreSQL, with the SMTP fake standing in for root's mail server and a
 * second one for the attacker's:
 *
 * - `PUT /api/option/` of every root-only key by an administrator is refused in new-api's envelope (HTTP 200,
 *   success false, the key named) and changes nothing (value, audit trail); root's same write is accepted; an
 *   administrator still changes the other options; `GET /api/option/` marks the root-only rows;
 * - the settings page's form posts (`POST /setting?tab=X`, as a browser without JavaScript sends them) are refused
 *   the same way, the whole form saved or nothing; the tabs show these keys read-only to administrators;
 * - the attack of the issue: the administrator points SMTP* (and ServerAddress) at their own server, then asks for
 *   root's password reset: root's reset link must not reach the administrator's server.
 *
 * The figure "admin option writes tried / refused" is printed at the end.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Option } from '@switchyard/db/entities/option.ts';
import { Role, type User } from '@switchyard/db/entities/user.ts';
import {
  OPTION_KEYS,
  OPTIONS,
  type OptionKey,
  ROOT_ONLY_OPTION_KEYS,
} from '@switchyard/db/options/registry.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '#app/domain/auth/session.server.ts';
import { type AuthEnv, createAuthEnv, req } from '#app/domain/auth/testing.server.ts';
import { OPTION_FORMS } from '#app/domain/settings/tab-forms.server.ts';
import { action as optionAction, loader as optionLoader } from '#app/routes/api.option._index.ts';
import { loader as resetLoader } from '#app/routes/api.reset_password.ts';
import { action as settingAction, loader as settingLoader } from '#app/routes/setting.tsx';
import { findLink, type SmtpCapture, startSmtpCapture } from '#tests/fakes/smtp.ts';

const BASE = 'http://localhost';

/** What the issue names, at least (the registry may mark more: ADR 033 lists them all). */
const ISSUE_KEYS: OptionKey[] = [
  'SMTPServer',
  'SMTPPort',
  'SMTPAccount',
  'SMTPFrom',
  'SMTPToken',
  'SMTPSSLEnabled',
  'ServerAddress',
  'WorkerUrl',
  'WorkerValidKey',
  'GitHubClientId',
  'GitHubClientSecret',
  'LinuxDOClientId',
  'LinuxDOClientSecret',
  'WeChatServerAddress',
  'WeChatServerToken',
  'TelegramBotToken',
  'TurnstileSiteKey',
  'TurnstileSecretKey',
  'AlipayPrivateKey',
  'AlipayPublicKey',
  'AlipayAppId',
  'AlipayNotifyUrl',
  'WeChatPayAppId',
  'WeChatPayMchId',
  'WeChatPayCertSerial',
  'WeChatPayApiV3Key',
  'WeChatPayNotifyUrl',
  'WeChatPayApiCertKey',
  'WeChatPayPublicKey',
  'WeChatPayPublicKeyId',
  'Price',
];

let env: AuthEnv;
let attacker: SmtpCapture;
let root: User;
let admin: User;
let rootCookie = '';
let adminCookie = '';
const tally = {
  api: { tried: 0, refused: 0 },
  form: { tried: 0, refused: 0 },
  attack: { tried: 0, refused: 0 },
};

beforeAll(async () => {
  env = await createAuthEnv('root_only_options');
  attacker = await startSmtpCapture();
  root = await env.createUser({
    username: 'ro_root',
    password: 'password-1',
    role: Role.Root,
    email: 'root@corp.example',
  });
  admin = await env.createUser({
    username: 'ro_admin',
    password: 'password-1',
    role: Role.Admin,
    email: 'admin@corp.example',
  });
  const cookie = async (who: User) =>
    (await createSession(env.services, who, req(`${BASE}/`))).split(';')[0] ?? '';
  rootCookie = await cookie(root);
  adminCookie = await cookie(admin);
}, 60_000);

afterAll(async () => {
  const sum = (k: 'tried' | 'refused') => tally.api[k] + tally.form[k] + tally.attack[k];
  console.log(
    `[root-only options] admin option writes tried / refused: ${sum('tried')} / ${sum('refused')}` +
      ` (PUT /api/option/ ${tally.api.tried} / ${tally.api.refused}, settings form posts ${tally.form.tried} / ` +
      `${tally.form.refused}, SMTP takeover attempt ${tally.attack.tried} / ${tally.attack.refused}; ` +
      `${ROOT_ONLY_OPTION_KEYS.length} root-only keys)`,
  );
  await attacker?.close();
  await env?.close();
});

/** A valid value different from the stored one, as an attacker would choose it. */
function hostileValue(key: OptionKey): string {
  const def = OPTIONS[key];
  const current = env.services.options.getRaw(key);
  if (def.secret) return `attacker-${key}`;
  switch (def.type) {
    case 'boolean':
      return current === 'true' ? 'false' : 'true';
    case 'int':
    case 'float':
      return String(
        def.max !== undefined && Number(current) + 1 > def.max ? Number(current) - 1 : Number(current) + 1,
      );
    case 'json':
      if (key === 'Chats') return JSON.stringify([{ Evil: 'https://attacker.example/?key={key}' }]);
      if (key === 'apiAddressList')
        return JSON.stringify([{ title: 'fast', url: 'https://attacker.example', line: 'A' }]);
      return JSON.stringify([1]);
    default:
      return `https://attacker.example/${key}`;
  }
}

const apiHeaders = (cookie: string, who: User) => ({
  Cookie: cookie,
  'New-Api-User': String(who.id),
  'Accept-Language': 'en',
});

async function put(who: 'admin' | 'root', key: string, value: unknown) {
  const [cookie, user] = who === 'admin' ? [adminCookie, admin] : [rootCookie, root];
  const res = (await optionAction({
    request: req(`${BASE}/api/option/`, {
      method: 'PUT',
      json: { key, value },
      headers: apiHeaders(cookie, user),
    }),
    context: { services: env.services },
    params: {},
  } as never)) as Response;
  return { status: res.status, body: (await res.json()) as { success: boolean; message: string } };
}

/** The stored row as the database holds it (null: never written). */
async function storedRow(key: string): Promise<string | null> {
  return (await env.db.orm.em.fork().findOne(Option, { key }))?.value ?? null;
}
const auditCount = () => env.db.orm.em.fork().count(AuditEntry, { action: 'option.set' });

/** POST /setting?tab=<tab> as a browser posts the form (no JavaScript needed). */
async function postForm(cookie: string, tab: string, fields: [string, string][]) {
  const request = new Request(`${BASE}/setting?tab=${tab}`, {
    method: 'POST',
    headers: { Cookie: cookie, 'Accept-Language': 'en' },
    body: new URLSearchParams(fields),
  });
  return settingAction({ request, context: { services: env.services }, params: {} } as never) as Promise<
    Response | { data: Record<string, unknown>; init?: ResponseInit | null }
  >;
}
const statusOf = (reply: Response | { init?: ResponseInit | null }) =>
  reply instanceof Response ? reply.status : (reply.init?.status ?? 200);

describe('the registry', () => {
  it('marks every key the issue names, and only keys that decide where a secret, a link or money goes', () => {
    for (const key of ISSUE_KEYS) expect([key, ROOT_ONLY_OPTION_KEYS.includes(key)]).toEqual([key, true]);
    // Branding, content, switches, quotas and model prices stay with administrators.
    for (const key of [
      'Footer',
      'Notice',
      'SystemName',
      'Logo',
      'ModelRatio',
      'GroupRatio',
      'MinTopUp',
    ] as const)
      expect([key, ROOT_ONLY_OPTION_KEYS.includes(key)]).toEqual([key, false]);
    // Every secret option is root-only: none may be replaced by an administrator.
    for (const key of OPTION_KEYS.filter((k) => OPTIONS[k].secret))
      expect([key, ROOT_ONLY_OPTION_KEYS.includes(key)]).toEqual([key, true]);
  });
});

describe('PUT /api/option/', () => {
  it('refuses every root-only key to an administrator and changes nothing; root may', async () => {
    for (const key of ROOT_ONLY_OPTION_KEYS) {
      const value = hostileValue(key);
      const before = await storedRow(key);
      const cached = env.services.options.getRaw(key);
      const audits = await auditCount();
      tally.api.tried += 1;
      const { status, body } = await put('admin', key, value);
      expect([key, status, body]).toEqual([
        key,
        200,
        { success: false, message: `${key}: only root can change this setting`, data: expect.anything() },
      ]);
      expect([key, await storedRow(key)]).toEqual([key, before]);
      expect([key, env.services.options.getRaw(key)]).toEqual([key, cached]);
      expect([key, await auditCount()]).toEqual([key, audits]);
      tally.api.refused += 1;

      const done = await put('root', key, value);
      expect([key, done.body.success]).toEqual([key, true]);
      expect([key, env.services.options.getRaw(key)]).not.toEqual([key, cached]);
      // Back as it was, for the tests below.
      await env.services.options.set(key, cached as never, null);
    }
  });

  it('in Chinese too, and through the system access token the same', async () => {
    const request = req(`${BASE}/api/option/`, {
      method: 'PUT',
      json: { key: 'SMTPServer', value: attacker.host },
      headers: { ...apiHeaders(adminCookie, admin), 'Accept-Language': 'zh' },
    });
    const res = (await optionAction({
      request,
      context: { services: env.services },
      params: {},
    } as never)) as Response;
    expect(await res.json()).toMatchObject({
      success: false,
      message: 'SMTPServer：仅超级管理员（root）可以修改此设置',
    });
    expect(env.services.options.getRaw('SMTPServer')).toBe(env.smtp.host);
  });

  it('still lets an administrator change the other options', async () => {
    for (const [key, value] of [
      ['Footer', '<p>Acme</p>'],
      ['SystemName', 'Acme Gateway'],
      ['Notice', 'maintenance'],
      ['RetryTimes', '2'],
      ['MinTopUp', '2'],
    ] as const) {
      const { body } = await put('admin', key, value);
      expect([key, body.success]).toEqual([key, true]);
      expect(env.services.options.getRaw(key)).toBe(value);
      await env.services.options.set(key, OPTIONS[key].default as never, null);
    }
  });

  it('GET marks the root-only rows (an extra field) and still never returns a secret', async () => {
    await env.services.options.set('SMTPToken', 'smtp-pass-4242', null);
    const res = (await optionLoader({
      request: req(`${BASE}/api/option/`, { headers: apiHeaders(adminCookie, admin) }),
      context: { services: env.services },
      params: {},
    } as never)) as Response;
    const text = await res.text();
    expect(text).not.toContain('smtp-pass-4242');
    const rows = JSON.parse(text).data as Record<string, unknown>[];
    expect(rows.map((r) => r.key)).toEqual(OPTION_KEYS);
    expect(rows.filter((r) => r.root_only === true).map((r) => r.key)).toEqual(ROOT_ONLY_OPTION_KEYS);
    expect(rows.find((r) => r.key === 'SMTPToken')).toEqual({
      key: 'SMTPToken',
      value: '',
      secret: true,
      is_set: true,
      root_only: true,
    });
    expect(rows.find((r) => r.key === 'Footer')).toEqual({ key: 'Footer', value: '' });
    await env.services.options.set('SMTPToken', '', null);
  });
});

describe('settings page form posts (POST /setting?tab=X)', () => {
  const forms = OPTION_FORMS.filter((f) => f.keys.some((k) => ROOT_ONLY_OPTION_KEYS.includes(k)));

  it('covers every root-only key with a form', () => {
    expect(new Set(forms.flatMap((f) => f.keys.filter((k) => ROOT_ONLY_OPTION_KEYS.includes(k))))).toEqual(
      new Set(ROOT_ONLY_OPTION_KEYS),
    );
  });

  it("refuses an administrator's post that changes a root-only key, saving none of the form", async () => {
    for (const spec of forms) {
      // An ordinary key of the same form changed too: the refusal must not save it either.
      const ordinary = spec.keys.find((k) => !ROOT_ONLY_OPTION_KEYS.includes(k) && OPTIONS[k].type === 'int');
      for (const key of spec.keys.filter((k) => ROOT_ONLY_OPTION_KEYS.includes(k))) {
        const value = hostileValue(key);
        const fields: [string, string][] = [
          ['intent', `option:${spec.id}`],
          [key, value],
        ];
        if (ordinary) fields.push([ordinary, hostileValue(ordinary)]);
        const before = await Promise.all(spec.keys.map(storedRow));
        const audits = await auditCount();
        tally.form.tried += 1;
        const reply = await postForm(adminCookie, spec.tab, fields);
        expect([spec.id, key, statusOf(reply)]).toEqual([spec.id, key, 400]);
        const data = (reply as { data: { error: string; fieldErrors: Record<string, string[]> } }).data;
        expect([key, data.error]).toEqual([key, `${key}: only root can change this setting`]);
        expect(data.fieldErrors[key]).toEqual([`${key}: only root can change this setting`]);
        expect([spec.id, key, await Promise.all(spec.keys.map(storedRow))]).toEqual([spec.id, key, before]);
        expect(await auditCount()).toBe(audits);
        tally.form.refused += 1;
      }
    }
  });

  it("saves root's post of the same form", async () => {
    const reply = await postForm(rootCookie, 'system', [
      ['intent', 'option:systemGeneral'],
      ['WorkerUrl', 'https://worker.corp.example/'],
    ]);
    expect(statusOf(reply)).toBe(302);
    expect(env.services.options.getRaw('WorkerUrl')).toBe('https://worker.corp.example');
    await env.services.options.set('WorkerUrl', '', null);
  });

  it('shows the root-only keys read-only to an administrator (and writable to root)', async () => {
    for (const tab of ['system', 'pay', 'operation', 'other']) {
      const load = async (cookie: string) => {
        const request = new Request(`${BASE}/setting?tab=${tab}`, {
          headers: { Cookie: cookie, 'Accept-Language': 'en' },
        });
        const page = (await settingLoader({
          request,
          context: { services: env.services },
          params: {},
        } as never)) as unknown as {
          data: Record<string, { readOnly: Record<string, boolean>; readOnlyForms: Record<string, boolean> }>;
        };
        return page.data[tab]!;
      };
      const tabKeys = OPTION_FORMS.filter((f) => f.tab === tab).flatMap((f) => f.keys);
      const asAdmin = await load(adminCookie);
      expect(Object.keys(asAdmin.readOnly).sort()).toEqual(
        tabKeys.filter((k) => ROOT_ONLY_OPTION_KEYS.includes(k)).sort(),
      );
      expect((await load(rootCookie)).readOnly).toEqual({});
      if (tab === 'system')
        expect(asAdmin.readOnlyForms).toMatchObject({ systemSmtp: true, systemGeneral: true });
    }
  });
});

describe('the takeover of the issue: SMTP pointed at the administrator, then root asks for a reset', () => {
  it("never delivers root's reset link to the administrator's server", async () => {
    // Through the JSON API ...
    const writes: [string, string][] = [
      ['SMTPServer', attacker.host],
      ['SMTPPort', String(attacker.port)],
      ['SMTPAccount', ''],
      ['SMTPSSLEnabled', 'false'],
      ['ServerAddress', 'https://attacker.example'],
    ];
    for (const [key, value] of writes) {
      tally.attack.tried += 1;
      const { body } = await put('admin', key, value);
      if (!body.success && body.message === `${key}: only root can change this setting`)
        tally.attack.refused += 1;
    }
    // ... and through the settings form, as the tab would post it.
    tally.attack.tried += 1;
    const form = await postForm(adminCookie, 'system', [
      ['intent', 'option:systemSmtp'],
      ['SMTPServer', attacker.host],
      ['SMTPPort', String(attacker.port)],
      ['SMTPAccount', ''],
      ['SMTPFrom', 'noreply@switchyard.test'],
      ['SMTPToken', ''],
      ['SMTPSSLEnabled', 'false'],
    ]);
    // Both fakes listen on 127.0.0.1: the port is what points the mail at the administrator's server.
    const refusal = form instanceof Response ? {} : (form.data.fieldErrors as Record<string, string[]>);
    if (statusOf(form) === 400 && refusal.SMTPPort?.[0] === 'SMTPPort: only root can change this setting')
      tally.attack.refused += 1;

    env.smtp.clear();
    const res = (await resetLoader({
      request: req(`${BASE}/api/reset_password?email=root%40corp.example`, {
        headers: { 'Accept-Language': 'en' },
      }),
      context: { services: env.services },
      params: {},
    } as never)) as Response;
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
    // Root's own mail server gets the link, on root's own address; the administrator's gets nothing.
    const mail = await env.smtp.waitFor((m) => m.to.includes('root@corp.example'), 5_000);
    expect(findLink(mail, '/user/reset')?.origin).toBe('https://console.example.com');
    expect(attacker.messages).toEqual([]);
    expect(tally.attack).toEqual({ tried: writes.length + 1, refused: writes.length + 1 });
  });
});
