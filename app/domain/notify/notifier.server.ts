import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { User } from '@switchyard/db/entities/user.ts';
import { webhookSecretSlot } from '@switchyard/db/security/secrets.ts';
import { parseUserSetting } from '#app/domain/account/setting.ts';
import { type MailServices, sendMail } from '#app/domain/mail/mailer.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/**
 * User notifications (seed 000 §3): e-mail to notification_email (or the bound e-mail) or a webhook POST with
 * body {type, title, content, values, timestamp} and `Authorization: Bearer <secret>` when a secret is set.
 * Billing calls `notifyUser` when a balance crosses the warning threshold; it returns a result and never throws.
 */
export type Notification = {
  /** e.g. quota_exceed */
  type: string;
  title: string;
  /** text with {{value}} placeholders, filled in order from `values` for e-mail */
  content: string;
  values?: Array<string | number>;
};

export type NotifyResult =
  | { ok: true; channel: 'email' | 'webhook'; status?: number }
  | { ok: false; channel: 'email' | 'webhook'; error: string };

export type NotifyOptions = {
  /** Tests only: allow an http:// webhook (node:crypto cannot mint a certificate for a local https server). */
  allowInsecureForTests?: boolean;
  timeoutMs?: number;
};

const TIMEOUT_MS = 5000;

type NotifyTarget = Pick<User, 'id' | 'email' | 'setting'>;

/** What a notification needs: the mail options and transport, and the box that opens a sealed webhook secret. */
export type NotifyServices = MailServices & Pick<ConsoleServices, 'secrets'>;

/** Fills each `{{value}}` with the next value, in order. */
export function fillPlaceholders(content: string, values: Array<string | number> = []): string {
  let i = 0;
  return content.replace(/\{\{value\}\}/g, () => (i < values.length ? String(values[i++]) : ''));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for private, loopback, link-local, multicast and other non-public addresses (IPv4-mapped included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

function allowPrivate(): boolean {
  return process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES === 'true';
}

export class WebhookRefused extends Error {}

/** Resolves `host` and refuses it when any address is private (unless NOTIFY_ALLOW_PRIVATE_ADDRESSES=true). */
export async function resolvePublicAddresses(
  host: string,
): Promise<Array<{ address: string; family: number }>> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(bare)
    ? [{ address: bare, family: isIP(bare) }]
    : await dnsLookup(bare, { all: true, verbatim: true });
  if (addresses.length === 0) throw new WebhookRefused(`no address for ${host}`);
  if (!allowPrivate()) {
    for (const a of addresses)
      if (isPrivateAddress(a.address)) throw new WebhookRefused(`refusing private address ${a.address}`);
  }
  return addresses;
}

/** The URL's own checks: it parses, is https (http only with the test option) and carries no credentials. */
function parseWebhookUrl(raw: string, opts: NotifyOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookRefused('invalid webhook url');
  }
  const insecureOk = opts.allowInsecureForTests === true && url.protocol === 'http:';
  if (url.protocol !== 'https:' && !insecureOk) throw new WebhookRefused('webhook url must use https');
  if (url.username || url.password) throw new WebhookRefused('webhook url must not carry credentials');
  return url;
}

/** Checks the URL (https only unless the test option is set) and resolves it to vetted addresses. */
export async function vetWebhookUrl(raw: string, opts: NotifyOptions = {}) {
  const url = parseWebhookUrl(raw, opts);
  const addresses = await resolvePublicAddresses(url.hostname);
  return { url, addresses };
}

/**
 * POSTs JSON to a vetted address. The connection is pinned to the addresses checked above (a custom `lookup`),
 * so a DNS answer that changes between the check and the connect cannot reach a private address. TLS still
 * verifies the certificate against the URL's host name. Redirects are not followed.
 */
function postJson(
  url: URL,
  addresses: Array<{ address: string; family: number }>,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  const pinned: LookupFunction = (_host, options, callback) => {
    const cb = callback as (err: Error | null, address: unknown, family?: number) => void;
    if ((options as { all?: boolean }).all) cb(null, addresses);
    else cb(null, addresses[0]?.address, addresses[0]?.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          ...headers,
        },
        lookup: pinned,
        signal: AbortSignal.timeout(timeoutMs),
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('webhook timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The checks of `vetWebhookUrl` that still make sense when a worker fetches the URL (https, no credentials, no
 * literal private address). Names are not resolved here: the worker resolves them in its own network (ADR 024).
 */
export function vetWebhookUrlForWorker(raw: string, opts: NotifyOptions = {}): URL {
  const url = parseWebhookUrl(raw, opts);
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare) && !allowPrivate() && isPrivateAddress(bare))
    throw new WebhookRefused(`refusing private address ${bare}`);
  return url;
}

/**
 * new-api's worker protocol (WorkerUrl + WorkerValidKey): instead of fetching a user-supplied URL itself, the
 * console POSTs `{url, key, method, headers, body}` to the administrator's worker (a Cloudflare-worker-style
 * proxy), which makes the request from its own network and answers with the target's status. The worker URL is
 * the administrator's, so it is fetched as configured (http allowed, no address checks).
 */
async function postThroughWorker(
  worker: { workerUrl: string; key: string },
  url: URL,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  const res = await fetch(worker.workerUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      url: url.href,
      key: worker.key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    }),
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  await res.body?.cancel();
  return res.status;
}

export async function notifyUser(
  services: NotifyServices,
  user: NotifyTarget,
  notification: Notification,
  opts: NotifyOptions = {},
): Promise<NotifyResult> {
  const setting = parseUserSetting(user.setting);
  const values = notification.values ?? [];
  if (setting.notify_type === 'webhook') {
    try {
      const payload = {
        type: notification.type,
        title: notification.title,
        content: notification.content,
        values,
        timestamp: Math.floor(Date.now() / 1000),
      };
      // Sealed for this user when SECRETS_KEY is set (ADR 035); one that does not open fails this delivery.
      const secret = setting.webhook_secret
        ? await services.secrets.open(setting.webhook_secret, webhookSecretSlot(user.id))
        : '';
      const headers: Record<string, string> = secret ? { Authorization: `Bearer ${secret}` } : {};
      const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
      const workerUrl = services.options.get('WorkerUrl');
      const status = workerUrl
        ? await postThroughWorker(
            { workerUrl, key: services.options.get('WorkerValidKey') },
            vetWebhookUrlForWorker(setting.webhook_url, opts),
            payload,
            headers,
            timeoutMs,
          )
        : await vetWebhookUrl(setting.webhook_url, opts).then(({ url, addresses }) =>
            postJson(url, addresses, JSON.stringify(payload), headers, timeoutMs),
          );
      if (status < 200 || status >= 300)
        return { ok: false, channel: 'webhook', error: `webhook answered ${status}` };
      return { ok: true, channel: 'webhook', status };
    } catch (error) {
      return { ok: false, channel: 'webhook', error: error instanceof Error ? error.message : String(error) };
    }
  }
  const to = setting.notification_email || user.email;
  if (!to) return { ok: false, channel: 'email', error: 'no e-mail address' };
  try {
    const text = fillPlaceholders(notification.content, values);
    await sendMail(services, {
      to,
      subject: notification.title,
      text,
      html: `<p>${escapeHtml(text).replace(/\n/g, '<br>')}</p>`,
    });
    return { ok: true, channel: 'email' };
  } catch (error) {
    return { ok: false, channel: 'email', error: error instanceof Error ? error.message : String(error) };
  }
}
