import { describe, expect, it } from 'vitest';
import type { ConsoleServices } from '#app/services.server.ts';
import { getContent, getPublicStatus, parseChats } from './status.server.ts';

/** A stand-in for the OptionService: `get(key)` answers from a map (typed values or stored strings). */
function services(values: Record<string, unknown>) {
  const options = { get: (key: string) => values[key] } as unknown as ConsoleServices['options'];
  return { options, version: 'v9.9.9', startedAt: 1_700_000_000 };
}

const FIELDS = [
  // seed 000 §3 "Public status object"
  'system_name',
  'logo',
  'footer_html',
  'quota_per_unit',
  'display_in_currency',
  'enable_drawing',
  'enable_task',
  'enable_data_export',
  'chats',
  'data_export_default_time',
  'default_collapse_sidebar',
  'mj_notify_enabled',
  'chat_link',
  'chat_link2',
  'email_verification',
  'turnstile_check',
  'turnstile_site_key',
  'github_oauth',
  'github_client_id',
  'linuxdo_oauth',
  'linuxdo_client_id',
  'wechat_login',
  'wechat_qrcode',
  'telegram_oauth',
  'telegram_bot_name',
  'version',
  'start_time',
  // seed 001 §3 "Status object fields used here"
  'top_up_link',
  'min_topup',
  'enable_online_topup',
  'server_address',
  'self_use_mode_enabled',
  'demo_site_enabled',
];

describe('getPublicStatus', () => {
  it('has exactly every field of both seeds, with defaults when no option is set', () => {
    const status = getPublicStatus(services({}));
    expect(Object.keys(status).sort()).toEqual([...FIELDS].sort());
    expect(status).toMatchObject({
      system_name: 'Switchyard',
      quota_per_unit: 500_000,
      display_in_currency: true,
      data_export_default_time: 'hour',
      min_topup: 1,
      chats: [],
      version: 'v9.9.9',
      start_time: 1_700_000_000,
      enable_online_topup: false,
      self_use_mode_enabled: false,
    });
  });

  it('maps typed option values', () => {
    const status = getPublicStatus(
      services({
        SystemName: 'My Gateway',
        Logo: 'https://cdn.example/logo.png',
        Footer: '<b>hi</b>',
        QuotaPerUnit: 1000,
        DisplayInCurrencyEnabled: false,
        DrawingEnabled: false,
        TaskEnabled: false,
        DataExportEnabled: true,
        DataExportDefaultTime: 'week',
        DefaultCollapseSidebar: true,
        GitHubOAuthEnabled: true,
        GitHubClientId: 'gh-client',
        TelegramBotName: 'sy_bot',
        TopUpLink: 'https://shop.example',
        MinTopUp: 5,
        SelfUseModeEnabled: true,
        DemoSiteEnabled: true,
        ServerAddress: 'https://api.example',
        Chats: [{ NextChat: 'https://chat.example' }],
      }),
    );
    expect(status).toMatchObject({
      system_name: 'My Gateway',
      logo: 'https://cdn.example/logo.png',
      footer_html: '<b>hi</b>',
      quota_per_unit: 1000,
      display_in_currency: false,
      enable_drawing: false,
      enable_task: false,
      enable_data_export: true,
      data_export_default_time: 'week',
      default_collapse_sidebar: true,
      github_oauth: true,
      github_client_id: 'gh-client',
      telegram_bot_name: 'sy_bot',
      top_up_link: 'https://shop.example',
      min_topup: 5,
      self_use_mode_enabled: true,
      demo_site_enabled: true,
      server_address: 'https://api.example',
      chats: [{ NextChat: 'https://chat.example' }],
    });
  });

  it('coerces options stored as strings', () => {
    const status = getPublicStatus(
      services({
        QuotaPerUnit: '250000',
        DrawingEnabled: 'false',
        EmailVerificationEnabled: 'true',
        Chats: '[{"A":"https://a"},{"B":"https://b"},"junk",{"C":1}]',
        MinTopUp: 'abc',
      }),
    );
    expect(status.quota_per_unit).toBe(250_000);
    expect(status.enable_drawing).toBe(false);
    expect(status.email_verification).toBe(true);
    expect(status.chats).toEqual([{ A: 'https://a' }, { B: 'https://b' }]);
    expect(status.min_topup).toBe(1);
  });

  it('never exposes secrets even when they are configured', () => {
    const secrets = {
      GitHubClientSecret: 'gh-secret-value',
      LinuxDOClientSecret: 'ld-secret-value',
      TurnstileSecretKey: 'ts-secret-value',
      TelegramBotToken: 'tg-secret-value',
      SMTPToken: 'smtp-secret-value',
      AlipayPrivateKey: 'alipay-secret-value',
      AlipayAppId: 'app',
      AlipayPublicKey: 'alipay-public-secret-value',
      AlipayNotifyUrl: 'https://pay.example.com/api/payment/alipay/notify',
      WeChatPayApiV3Key: 'wx-secret-value',
      WorkerValidKey: 'worker-secret-value',
      WeChatServerToken: 'wechat-secret-value',
    };
    const status = getPublicStatus(services(secrets));
    const text = JSON.stringify(status);
    for (const value of Object.values(secrets).filter((v) => v.includes('secret')))
      expect(text).not.toContain(value);
    expect(status.enable_online_topup).toBe(true);
  });

  it('offers online top-up only when a pay method is fully configured (an order could be created)', () => {
    const half = { AlipayAppId: 'app', AlipayPrivateKey: 'k', WeChatPayAppId: 'wx', WeChatPayMchId: 'mch' };
    expect(getPublicStatus(services(half)).enable_online_topup).toBe(false);
    const alipay = { ...half, AlipayPublicKey: 'pk', AlipayNotifyUrl: 'https://pay.example.com/n' };
    expect(getPublicStatus(services(alipay)).enable_online_topup).toBe(true);
  });

  it('answers the Footer option sanitized (pages and new-api clients insert footer_html as HTML)', () => {
    const footer =
      '<p class="f" onmouseover="steal()">(c) Acme <a href="jav&#x09;ascript:steal()">x</a>' +
      '<img src=x onerror="steal()"><script>steal()</script><svg onload="steal()"></svg></p>';
    expect(getPublicStatus(services({ Footer: footer })).footer_html).toBe(
      '<p class="f">(c) Acme x<img src="x" /></p>',
    );
  });

  it('reads page content options', () => {
    expect(getContent(services({ About: '  hello \n' }), 'About')).toBe('hello');
    expect(getContent(services({}), 'HomePageContent')).toBe('');
  });

  it('parseChats keeps only {name: url} objects', () => {
    expect(parseChats(null)).toEqual([]);
    expect(parseChats([{}, [], { a: 'x' }])).toEqual([{ a: 'x' }]);
  });
});
