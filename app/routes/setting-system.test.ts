/**
 * The settings "system" tab (seed 000 §2, §3, §6, §9) through the /setting loader and action with a real
 * OptionService on PostgreSQL and a real SMTP capture server on loopback: the keys and their defaults (secrets
 * write-only), addresses stored without a trailing slash, the confirmation before disabling password login
 * (nothing saved until `confirm=yes`), and "send test mail" delivering to the administrator's own e-mail.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeSession, makeUser } from '#app/domain/account/test-helpers.server.ts';
import { getToast } from '#app/utils/toast.server.ts';
import { type SmtpCapture, startSmtpCapture } from '../../tests/fakes/smtp.ts';
import { action, loader } from './setting.tsx';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;
let services: Record<string, unknown>;
let smtp: SmtpCapture;
let adminToken = '';
let rootToken = '';
let bareAdminToken = '';
let userToken = '';

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'setting_system' });
  pubsub = createMemoryPubSub();
  smtp = await startSmtpCapture();
  const admin = await makeUser(db.orm, { role: Role.Admin, email: 'root@example.com' });
  adminToken = (await makeSession(db.orm, admin)).token;
  rootToken = (await makeSession(db.orm, await makeUser(db.orm, { role: Role.Root }))).token;
  bareAdminToken = (await makeSession(db.orm, await makeUser(db.orm, { role: Role.Admin }))).token;
  userToken = (await makeSession(db.orm, await makeUser(db.orm))).token;
});
afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await smtp?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em.getConnection().execute('truncate table audit_entries, options restart identity cascade');
  await options?.close();
  options = new OptionService({ orm: db.orm, pubsub, channel: `setting-system-${Date.now()}` });
  await options.load();
  services = { orm: db.orm, options, relay: null, version: 'v1.2.3', startedAt: 1_700_000_000 };
  smtp.clear();
});

function req(token: string, form?: [string, string][], lang = 'en') {
  const headers = new Headers({ 'Accept-Language': lang, Cookie: `sy_session=${token}` });
  return new Request('http://localhost/setting?tab=system', {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}
const args = (request: Request) => ({ request, params: {}, context: { services } as never });
type Reply = { data: Record<string, unknown>; init?: ResponseInit | null };

async function toastOf(res: Response): Promise<string | undefined> {
  const cookie = res.headers.get('Set-Cookie') ?? '';
  const { toast } = await getToast(
    new Request('http://localhost/', { headers: { Cookie: cookie.split(';')[0] ?? '' } }),
  );
  return toast?.message;
}
const audited = async () =>
  (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map((a) => a.targetId);

const LOGIN_KEYS = [
  'PasswordLoginEnabled',
  'PasswordRegisterEnabled',
  'EmailVerificationEnabled',
  'RegisterEnabled',
  'GitHubOAuthEnabled',
  'LinuxDOOAuthEnabled',
  'WeChatAuthEnabled',
  'TelegramOAuthEnabled',
  'TurnstileCheckEnabled',
];
/** The login form as a browser posts it: a hidden 'false' per switch, then 'true' for the checked ones. */
const LOGIN = (checked: string[], extra: [string, string][] = []): [string, string][] => [
  ['intent', 'option:systemLogin'],
  ...LOGIN_KEYS.flatMap((k): [string, string][] =>
    checked.includes(k)
      ? [
          [k, 'false'],
          [k, 'true'],
        ]
      : [[k, 'false']],
  ),
  ...extra,
];
const DEFAULT_ON = ['PasswordLoginEnabled', 'PasswordRegisterEnabled', 'RegisterEnabled'];

describe('system tab', () => {
  it('lists the keys with their defaults, secrets only as set or not; 403 for a non-admin', async () => {
    await options.set('SMTPToken', 'hunter2');
    const page = (await loader(args(req(adminToken)))) as unknown as Reply;
    const tab = page.data.system as { values: Record<string, string>; secretsSet: Record<string, boolean> };
    expect(tab.values).toMatchObject({
      ServerAddress: 'http://localhost:3000',
      WorkerUrl: '',
      PasswordLoginEnabled: 'true',
      RegisterEnabled: 'true',
      EmailVerificationEnabled: 'false',
      SMTPPort: '587',
      SMTPSSLEnabled: 'false',
      SMTPToken: '',
      EmailDomainWhitelist: expect.stringContaining('gmail.com'),
    });
    expect(tab.secretsSet).toMatchObject({
      SMTPToken: true,
      WorkerValidKey: false,
      GitHubClientSecret: false,
      LinuxDOClientSecret: false,
      WeChatServerToken: false,
      TelegramBotToken: false,
      TurnstileSecretKey: false,
    });
    const denied = (await loader(args(req(userToken)))) as unknown as Reply;
    expect(denied.init?.status).toBe(403);
    expect(denied.data.system).toBeNull();
  });

  it('stores the server and worker addresses without a trailing slash; an empty secret is kept', async () => {
    await options.set('WorkerValidKey', 'old-key');
    // Root-only keys (ADR 033): root saves them.
    const res = (await action(
      args(
        req(rootToken, [
          ['intent', 'option:systemGeneral'],
          ['ServerAddress', 'https://gw.example.com/'],
          ['WorkerUrl', 'https://worker.example.com//'],
          ['WorkerValidKey', ''],
        ]),
      ),
    )) as Response;
    expect(res.status).toBe(302);
    expect(await toastOf(res)).toBe('General settings updated');
    expect(options.get('ServerAddress')).toBe('https://gw.example.com');
    expect(options.get('WorkerUrl')).toBe('https://worker.example.com');
    expect(options.get('WorkerValidKey')).toBe('old-key');
    // the first entry is the setup's own set; the form audits only the two changed addresses
    expect(await audited()).toEqual(['WorkerValidKey', 'ServerAddress', 'WorkerUrl']);
  });

  it('asks to confirm before disabling password login and saves nothing until confirmed', async () => {
    const ask = (await action(
      args(req(adminToken, LOGIN(['PasswordRegisterEnabled', 'RegisterEnabled']))),
    )) as unknown as Reply;
    expect(ask.init?.status).toBe(409);
    expect(ask.data).toMatchObject({ intent: 'option:systemLogin' });
    expect(String(ask.data.confirm)).toMatch(/administrators included/);
    expect(ask.data.values).toMatchObject({ PasswordLoginEnabled: 'false' });
    expect(options.get('PasswordLoginEnabled')).toBe(true);
    expect(await audited()).toEqual([]);
    const zh = (await action(
      args(req(adminToken, LOGIN(['PasswordRegisterEnabled', 'RegisterEnabled']), 'zh')),
    )) as unknown as Reply;
    expect(String(zh.data.confirm)).toContain('包括管理员');

    const done = (await action(
      args(req(adminToken, LOGIN(['PasswordRegisterEnabled', 'RegisterEnabled'], [['confirm', 'yes']]))),
    )) as Response;
    expect(done.status).toBe(302);
    expect(await toastOf(done)).toBe('Login settings updated');
    expect(options.get('PasswordLoginEnabled')).toBe(false);
    expect(await audited()).toEqual(['PasswordLoginEnabled']);
  });

  it('saves other toggles without a confirmation; a non-admin gets 403 and no confirmation', async () => {
    const res = (await action(
      args(req(adminToken, LOGIN([...DEFAULT_ON, 'GitHubOAuthEnabled', 'TurnstileCheckEnabled']))),
    )) as Response;
    expect(res.status).toBe(302);
    expect(await audited()).toEqual(['GitHubOAuthEnabled', 'TurnstileCheckEnabled']);
    const denied = (await action(args(req(userToken, LOGIN([]))))) as unknown as Reply;
    expect(denied.init?.status).toBe(403);
    expect(denied.data.confirm).toBeUndefined();
    expect(options.get('PasswordLoginEnabled')).toBe(true);
  });

  it('saves the SMTP settings (root) and sends a test mail to the admin through them', async () => {
    const saved = (await action(
      args(
        req(rootToken, [
          ['intent', 'option:systemSmtp'],
          ['SMTPServer', smtp.host],
          ['SMTPPort', String(smtp.port)],
          ['SMTPAccount', 'mailer@example.com'],
          ['SMTPFrom', 'noreply@example.com'],
          ['SMTPToken', 'pw'],
          ['SMTPSSLEnabled', 'false'],
        ]),
      ),
    )) as Response;
    expect(saved.status).toBe(302);
    expect(await toastOf(saved)).toBe('SMTP settings updated');
    expect(options.get('SMTPToken')).toBe('pw');

    const sent = (await action(args(req(adminToken, [['intent', 'systemTestMail']])))) as unknown as Reply;
    expect(sent.data).toEqual({ intent: 'systemTestMail', sent: 'Test mail sent to root@example.com' });
    const mail = await smtp.waitFor((m) => m.to.includes('root@example.com'));
    expect(mail.from).toBe('noreply@example.com');
    expect(mail.authUser).toBe('mailer@example.com');
    expect(mail.subject).toContain('test mail');

    const bare = (await action(
      args(req(bareAdminToken, [['intent', 'systemTestMail']])),
    )) as unknown as Reply;
    expect(bare.init?.status).toBe(400);
    expect(String(bare.data.error)).toMatch(/no e-mail address bound/);
    const user = (await action(args(req(userToken, [['intent', 'systemTestMail']])))) as unknown as Reply;
    expect(user.init?.status).toBe(403);
  });

  it('refuses the test mail when SMTP is not configured', async () => {
    const res = (await action(args(req(adminToken, [['intent', 'systemTestMail']])))) as unknown as Reply;
    expect(res.init?.status).toBe(400);
    expect(res.data.error).toBe('The SMTP server is not configured');
    expect(smtp.messages).toEqual([]);
  });
});
