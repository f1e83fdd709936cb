/**
 * Options an administrator touches first, each changed through `updateOption` (what `PUT /api/option/` calls)
 * and shown through the real JSON route: registration switches and the new user's quota, the e-mail domain
 * whitelist, the SMTP account, sender and SSL switch, and the public status object. The last block runs the real
 * console HTTP server (server/console.ts, Remix through Vite's dev server) on the same database, changes options
 * with `PUT /api/option/` as an administrator and reads the rendered pages: branding, notice, sidebar default,
 * top-up link, quota display and the top-up computation. docs/options.md lists every key with the test that
 * shows its effect.
 */
import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { OPTIONS, type OptionKey } from '@switchyard/db/options/registry.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '#app/domain/auth/session.server.ts';
import { type AuthEnv, createAuthEnv, req } from '#app/domain/auth/testing.server.ts';
import { updateOption } from '#app/domain/settings/options.server.ts';
import { loader as homeLoader } from '#app/routes/_index.tsx';
import { loader as aboutLoader } from '#app/routes/about.tsx';
import { loader as statusLoader } from '#app/routes/api.status.ts';
import { action as registerAction } from '#app/routes/api.user.register.ts';
import { loader as verificationLoader } from '#app/routes/api.verification.ts';
import { loader as tokenPageLoader } from '#app/routes/token._index.tsx';
import { loadConsoleConfig } from '../../server/config.ts';
import { type RunningConsole, startConsole } from '../../server/console.ts';
import { freePort } from './cluster/procs.ts';

const EN = { 'Accept-Language': 'en' };
const BASE = 'http://localhost';

type Envelope = { success: boolean; message: string; data: Record<string, unknown> | null };

let env: AuthEnv;

beforeAll(async () => {
  env = await createAuthEnv('option_effects');
}, 60_000);
afterAll(async () => {
  await env?.close();
});

/** As an administrator through the option API's domain function. */
async function setOption(key: OptionKey, value: string): Promise<void> {
  await updateOption(
    {
      options: env.services.options,
      actor: { id: 1, username: 'root', role: 100 } as never,
      t: ((k: string) => k) as never,
      ip: '127.0.0.1',
    },
    key,
    value,
  );
}

async function call(
  fn: (args: ActionFunctionArgs & LoaderFunctionArgs) => unknown,
  request: Request,
): Promise<{ status: number; body: Envelope }> {
  const res = (await fn({ request, context: { services: env.services }, params: {} } as never)) as Response;
  return { status: res.status, body: (await res.json()) as Envelope };
}

const register = (username: string) =>
  call(
    registerAction as never,
    req(`${BASE}/api/user/register`, {
      json: { username, password: 'password-1', password2: 'password-1' },
      headers: EN,
    }),
  );

const verification = (email: string) =>
  call(
    verificationLoader as never,
    req(`${BASE}/api/verification?${new URLSearchParams({ email })}`, { headers: EN }),
  );

async function quotaOf(username: string): Promise<number | null> {
  const rows = await env.db.orm.em
    .fork()
    .getConnection()
    .execute<{ quota: string }[]>('select quota from users where username = ?', [username]);
  return rows[0] ? Number(rows[0].quota) : null;
}

describe('registration options through POST /api/user/register', () => {
  it('RegisterEnabled and PasswordRegisterEnabled close it; QuotaForNewUser is granted when open', async () => {
    await setOption('RegisterEnabled', 'false');
    try {
      const closed = await register('eff_closed1');
      expect(closed.body).toMatchObject({
        success: false,
        message: 'The administrator has turned off new user registration',
      });
      expect(await quotaOf('eff_closed1')).toBeNull();
    } finally {
      await setOption('RegisterEnabled', 'true');
    }
    await setOption('PasswordRegisterEnabled', 'false');
    try {
      const closed = await register('eff_closed2');
      expect(closed.body.success).toBe(false);
      expect(closed.body.message).toMatch(/turned off registration by password/);
      expect(await quotaOf('eff_closed2')).toBeNull();
    } finally {
      await setOption('PasswordRegisterEnabled', 'true');
    }
    await setOption('QuotaForNewUser', '4321');
    try {
      expect((await register('eff_open')).body.success).toBe(true);
      expect(await quotaOf('eff_open')).toBe(4321);
    } finally {
      await setOption('QuotaForNewUser', '0');
    }
  });
});

describe('invitation rewards through POST /api/user/register', () => {
  it('QuotaForInvitee goes to the invited user, QuotaForInviter to the inviter (pending aff_quota)', async () => {
    await env.createUser({ username: 'eff_inviter', password: 'password-1', affCode: 'EFFINV1' });
    await setOption('QuotaForNewUser', '100');
    await setOption('QuotaForInvitee', '250');
    await setOption('QuotaForInviter', '700');
    try {
      const res = await call(
        registerAction as never,
        req(`${BASE}/api/user/register`, {
          json: {
            username: 'eff_invitee',
            password: 'password-1',
            password2: 'password-1',
            aff_code: 'EFFINV1',
          },
          headers: EN,
        }),
      );
      expect(res.body.success).toBe(true);
      expect(await quotaOf('eff_invitee')).toBe(350);
      const [inviter] = await env.db.orm.em
        .fork()
        .getConnection()
        .execute<{ aff_quota: string }[]>('select aff_quota from users where username = ?', ['eff_inviter']);
      expect(Number(inviter?.aff_quota)).toBe(700);
    } finally {
      for (const key of ['QuotaForNewUser', 'QuotaForInvitee', 'QuotaForInviter'] as const)
        await setOption(key, '0');
    }
  });
});

describe('mail options through GET /api/verification', () => {
  it('EmailDomainRestrictionEnabled with an edited EmailDomainWhitelist admits only the listed domains', async () => {
    await setOption('EmailDomainWhitelist', 'corp.example, Partner.example');
    await setOption('EmailDomainRestrictionEnabled', 'true');
    try {
      const refused = await verification('someone@gmail.com');
      expect(refused.body.success).toBe(false);
      expect(refused.body.message).toMatch(/domain whitelist/);
      for (const to of ['staff@corp.example', 'guest@partner.example']) {
        expect((await verification(to)).body).toMatchObject({ success: true });
        await env.smtp.waitFor((m) => m.to.includes(to));
      }
      expect(env.smtp.messages.some((m) => m.to.includes('someone@gmail.com'))).toBe(false);
    } finally {
      await setOption('EmailDomainRestrictionEnabled', 'false');
    }
  });

  it('SMTPAccount authenticates, SMTPFrom is the sender, SMTPSSLEnabled speaks TLS', async () => {
    await setOption('SMTPAccount', 'mailer-account');
    await setOption('SMTPToken', 'mailer-password');
    await setOption('SMTPFrom', 'robot@corp.example');
    try {
      expect((await verification('sender@corp.example')).body.success).toBe(true);
      const mail = await env.smtp.waitFor((m) => m.to.includes('sender@corp.example'));
      expect(mail.authUser).toBe('mailer-account');
      expect(mail.from).toBe('robot@corp.example');
      // The capture server speaks plain SMTP: with SSL on, the TLS handshake fails and nothing is delivered.
      await setOption('SMTPSSLEnabled', 'true');
      const failed = await verification('tls@corp.example');
      expect(failed.body.success).toBe(false);
      expect(env.smtp.messages.some((m) => m.to.includes('tls@corp.example'))).toBe(false);
    } finally {
      await setOption('SMTPSSLEnabled', 'false');
      await setOption('SMTPAccount', '');
      await setOption('SMTPFrom', 'noreply@switchyard.test');
    }
  });
});

describe('GET /api/status', () => {
  it('shows the display, link, login and dashboard options as they were just changed', async () => {
    const changes: Array<[OptionKey, string]> = [
      ['QuotaPerUnit', '1000'],
      ['DisplayInCurrencyEnabled', 'false'],
      ['SystemName', 'Acme Gateway'],
      ['Logo', 'https://cdn.example/logo.png'],
      ['Footer', '<b>acme</b>'],
      ['ChatLink', 'https://chat.example'],
      ['ChatLink2', 'https://chat2.example'],
      ['TopUpLink', 'https://shop.example'],
      ['MinTopUp', '5'],
      ['DrawingEnabled', 'false'],
      ['TaskEnabled', 'false'],
      ['MjNotifyEnabled', 'true'],
      ['DataExportEnabled', 'false'],
      ['DataExportDefaultTime', 'week'],
      ['DefaultCollapseSidebar', 'true'],
      ['DemoSiteEnabled', 'true'],
      ['SelfUseModeEnabled', 'true'],
      ['ServerAddress', 'https://gw.example/'],
      ['WeChatAuthEnabled', 'true'],
      ['WeChatAccountQRCodeImageURL', 'https://cdn.example/qr.png'],
      ['TelegramOAuthEnabled', 'true'],
      ['TelegramBotName', 'acme_bot'],
      ['LinuxDOOAuthEnabled', 'true'],
      ['LinuxDOClientId', 'linuxdo-client'],
      ['TurnstileSiteKey', 'site-key-1'],
      ['Chats', JSON.stringify([{ Acme: 'https://chat.example/?key={key}' }])],
    ];
    const before = (await call(statusLoader as never, req(`${BASE}/api/status`))).body.data ?? {};
    for (const [key, value] of changes) await setOption(key, value);
    try {
      const { status, body } = await call(statusLoader as never, req(`${BASE}/api/status`));
      expect(status).toBe(200);
      const expected = {
        quota_per_unit: 1000,
        display_in_currency: false,
        system_name: 'Acme Gateway',
        logo: 'https://cdn.example/logo.png',
        footer_html: '<b>acme</b>',
        chat_link: 'https://chat.example',
        chat_link2: 'https://chat2.example',
        top_up_link: 'https://shop.example',
        min_topup: 5,
        enable_drawing: false,
        enable_task: false,
        mj_notify_enabled: true,
        enable_data_export: false,
        data_export_default_time: 'week',
        default_collapse_sidebar: true,
        demo_site_enabled: true,
        self_use_mode_enabled: true,
        server_address: 'https://gw.example',
        wechat_login: true,
        wechat_qrcode: 'https://cdn.example/qr.png',
        telegram_oauth: true,
        telegram_bot_name: 'acme_bot',
        linuxdo_oauth: true,
        linuxdo_client_id: 'linuxdo-client',
        turnstile_site_key: 'site-key-1',
        chats: [{ Acme: 'https://chat.example/?key={key}' }],
      };
      expect(body.data).toMatchObject(expected);
      // Each of these differs from what the defaults gave, so each line above is the option's doing.
      for (const [field, value] of Object.entries(expected)) expect(before[field]).not.toEqual(value);
    } finally {
      for (const [key] of changes) await setOption(key, OPTIONS[key].default);
    }
  });
});

describe('page content', () => {
  const load = (fn: unknown, request: Request) =>
    (fn as (a: unknown) => Promise<unknown>)({ request, context: { services: env.services }, params: {} });

  it('Notice and HomePageContent reach the home page, About the about page', async () => {
    await setOption('Notice', 'Maintenance tonight');
    await setOption('HomePageContent', '# Welcome to Acme');
    await setOption('About', 'Run by Acme');
    try {
      // Markdown, rendered on the server (app/domain/content/admin-content.ts)
      expect(await load(homeLoader, req(`${BASE}/`))).toMatchObject({
        notice: { view: { kind: 'markdown', html: '<p>Maintenance tonight</p>\n' } },
        content: { kind: 'markdown', html: '<h1>Welcome to Acme</h1>\n' },
        home: null,
      });
      expect(await load(aboutLoader, req(`${BASE}/about`))).toMatchObject({
        about: { kind: 'markdown', html: '<p>Run by Acme</p>\n' },
      });
    } finally {
      for (const key of ['Notice', 'HomePageContent', 'About'] as const) await setOption(key, '');
    }
  });

  it('apiAddressList is the address list of the token page', async () => {
    const user = await env.createUser({ username: 'eff_tokens', password: 'password-1' });
    const cookie = (await createSession(env.services, user, req(`${BASE}/token`))).split(';')[0] ?? '';
    const page = async () =>
      (
        (await load(tokenPageLoader, req(`${BASE}/token`, { headers: { ...EN, Cookie: cookie } }))) as {
          data: { addresses: unknown[] };
        }
      ).data.addresses;
    expect(await page()).toEqual([]);
    const list = [{ title: 'Asia', url: 'https://asia.gw.example', line: 'fast' }];
    await setOption('apiAddressList', JSON.stringify(list));
    try {
      expect(await page()).toEqual(list);
    } finally {
      await setOption('apiAddressList', '[]');
    }
  });
});

describe('rendered pages of the real console, options changed with PUT /api/option/', () => {
  let console_: RunningConsole;
  let adminCookie = '';
  let adminId = 0;
  let userCookie = '';

  beforeAll(async () => {
    console_ = await startConsole(
      loadConsoleConfig({
        NODE_ENV: 'test',
        DATABASE_URL: env.db.url,
        PORT: String(await freePort()),
        CONSOLE_GRPC_PORT: '0',
        // No relay: the pages read here do not call it.
        RELAY_URL: 'http://127.0.0.1:9',
        RELAY_GRPC_URL: '127.0.0.1:9',
        INTERNAL_API_SECRET: 'option-effects-internal-secret-0123456789',
        MIGRATE_ON_START: 'false',
      }),
      { dev: true },
    );
    const admin = await env.createUser({ username: 'eff_pages_root', password: 'password-1', role: 100 });
    adminId = admin.id;
    adminCookie = (await createSession(env.services, admin, req(`${BASE}/`))).split(';')[0] ?? '';
    const user = await env.createUser({
      username: 'eff_pages_user',
      password: 'password-1',
      quota: 1_250_000,
    });
    userCookie = (await createSession(env.services, user, req(`${BASE}/`))).split(';')[0] ?? '';
  }, 120_000);
  afterAll(async () => {
    await console_?.stop();
  });

  /** PUT /api/option/ as the administrator, over HTTP, as new-api's frontend and scripts do. */
  async function put(key: OptionKey, value: string): Promise<void> {
    const res = await fetch(`${console_.url}/api/option/`, {
      method: 'PUT',
      headers: {
        Cookie: adminCookie,
        'New-Api-User': String(adminId),
        'Content-Type': 'application/json',
        Origin: console_.url,
      },
      body: JSON.stringify({ key, value }),
    });
    const body = (await res.json()) as Envelope;
    expect([key, body.success, body.message]).toEqual([key, true, body.message]);
  }

  /** A page's HTML for a new browser session (no preference cookie) of `cookie`'s user. */
  async function page(path: string, cookie = ''): Promise<string> {
    const res = await fetch(`${console_.url}${path}`, {
      headers: { 'Accept-Language': 'en', ...(cookie ? { Cookie: cookie } : {}) },
      redirect: 'manual',
    });
    expect([path, res.status]).toEqual([path, 200]);
    return res.text();
  }

  /** Puts every key back to its registry default. */
  async function restore(keys: OptionKey[]): Promise<void> {
    for (const key of keys) await put(key, String(OPTIONS[key].default));
  }

  it('SystemName, Logo and Footer brand every page; Notice reaches the home page', async () => {
    const keys: OptionKey[] = ['SystemName', 'Logo', 'Footer', 'Notice'];
    try {
      await put('SystemName', 'Acme Gateway');
      await put('Logo', 'https://cdn.acme.example/logo.png');
      await put('Footer', '<p class="acme-footer">Acme Inc. support line</p>');
      await put('Notice', 'Maintenance at 02:00 UTC');
      for (const [path, cookie] of [
        ['/', ''],
        ['/topup', userCookie],
      ] as const) {
        const html = await page(path, cookie);
        expect(html).toContain('<link rel="icon" href="https://cdn.acme.example/logo.png"/>');
        expect(html).toMatch(/<img[^>]*src="https:\/\/cdn\.acme\.example\/logo\.png"/);
        expect(html).toContain('<p class="acme-footer">Acme Inc. support line</p>');
        expect(html).toContain('Acme Gateway');
      }
      const home = await page('/');
      expect(home).toContain('<title>Acme Gateway</title>');
      expect(home).toContain('Maintenance at 02:00 UTC');
    } finally {
      await restore(keys);
    }
    const plain = await page('/');
    expect(plain).not.toContain('acme');
    expect(plain).not.toContain('Maintenance at 02:00 UTC');
  }, 120_000);

  it('DefaultCollapseSidebar: a new session sees the sidebar collapsed', async () => {
    try {
      expect(await page('/topup', userCookie)).toContain('data-sidebar="expanded"');
      await put('DefaultCollapseSidebar', 'true');
      expect(await page('/topup', userCookie)).toContain('data-sidebar="collapsed"');
    } finally {
      await restore(['DefaultCollapseSidebar']);
    }
  }, 60_000);

  it('TopUpLink, DisplayInCurrencyEnabled and QuotaPerUnit on the wallet page', async () => {
    const keys: OptionKey[] = ['TopUpLink', 'DisplayInCurrencyEnabled', 'QuotaPerUnit'];
    try {
      let html = await page('/topup', userCookie);
      expect(html).not.toContain('https://shop.acme.example/codes');
      // 1,250,000 quota at the default 500,000 per unit.
      expect(html).toMatch(/data-testid="wallet-balance">\$2\.50</);
      await put('TopUpLink', 'https://shop.acme.example/codes');
      await put('QuotaPerUnit', '250000');
      html = await page('/topup', userCookie);
      expect(html).toContain('href="https://shop.acme.example/codes"');
      expect(html).toMatch(/data-testid="wallet-balance">\$5\.00</);
      await put('DisplayInCurrencyEnabled', 'false');
      expect(await page('/topup', userCookie)).toMatch(/data-testid="wallet-balance">1\.25M</);
    } finally {
      await restore(keys);
    }
  }, 60_000);

  it('Price and TopupConfig: the preset amounts and the payable amount of the top-up page', async () => {
    const keys: OptionKey[] = [
      'AlipayAppId',
      'AlipayPrivateKey',
      'AlipayPublicKey',
      'AlipayNotifyUrl',
      'Price',
      'TopupConfig',
    ];
    try {
      // Online top-up is offered once a pay method is fully configured.
      await put('AlipayAppId', '2021000000000000');
      await put('AlipayPrivateKey', 'test-private-key');
      await put('AlipayPublicKey', 'test-alipay-public-key');
      await put('AlipayNotifyUrl', 'https://pay.example.com/api/payment/alipay/notify');
      // The default price is 7.3 per unit.
      expect(await page('/topup?amount=10', userCookie)).toMatch(/data-testid="wallet-payable">[^<]*73\.00/);
      await put('Price', '8.5');
      await put('TopupConfig', '[20, 100]');
      const html = await page('/topup?amount=10', userCookie);
      expect(html).toMatch(/data-testid="wallet-payable">[^<]*85\.00/);
      expect(html).toMatch(/name="amount"[^>]*value="20"/);
      expect(html).toMatch(/name="amount"[^>]*value="100"/);
    } finally {
      await restore(keys);
    }
  }, 60_000);
});
