import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultOptionValues } from '@switchyard/db/options/registry.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailMessage } from '#app/domain/mail/mailer.server.ts';
import { fillPlaceholders, isPrivateAddress, notifyUser, vetWebhookUrl } from './notifier.server.ts';

type Received = { headers: http.IncomingHttpHeaders; body: string };

let server: http.Server;
let port = 0;
const received: Received[] = [];
let answer = 200;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.statusCode = answer;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  delete process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES;
  received.length = 0;
  answer = 200;
});

function services(sent: MailMessage[] = [], extra: Record<string, unknown> = {}) {
  const values = { ...defaultOptionValues(), SMTPServer: '', ...extra } as Record<string, unknown>;
  return {
    options: { get: (k: string) => values[k] } as never,
    secrets: PLAINTEXT_BOX,
    mailTransport: {
      async sendMail(m: MailMessage) {
        sent.push(m);
      },
    },
  };
}

const webhookUser = (url: string, secret = '') => ({
  id: 1,
  email: 'bound@example.com',
  setting: JSON.stringify({ notify_type: 'webhook', webhook_url: url, webhook_secret: secret }),
});

const note = {
  type: 'quota_exceed',
  title: 'Low balance',
  content: 'left {{value}} of {{value}}',
  values: ['$1', '$5'],
};

describe('address checks', () => {
  it('treats loopback, private, link-local and mapped addresses as private', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '169.254.169.254',
      '172.20.0.1',
      '192.168.1.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['1.1.1.1', '8.8.8.8', '2606:4700:4700::1111'])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses 127.0.0.1, 10.x and 169.254.x webhooks', async () => {
    for (const host of ['127.0.0.1', '10.0.0.8', '169.254.169.254', '[::1]']) {
      await expect(vetWebhookUrl(`https://${host}/hook`)).rejects.toThrow(/private address/);
    }
    await expect(vetWebhookUrl('https://localhost/hook')).rejects.toThrow(/private address/);
  });

  it('is https only unless the test option is given', async () => {
    await expect(vetWebhookUrl('http://example.com/hook')).rejects.toThrow(/https/);
    await expect(vetWebhookUrl('ftp://example.com/hook', { allowInsecureForTests: true })).rejects.toThrow(
      /https/,
    );
  });
});

describe('notifyUser by webhook', () => {
  it('never reaches a private address by default, and returns a failure instead of throwing', async () => {
    const result = await notifyUser(services(), webhookUser(`http://127.0.0.1:${port}/h`), note, {
      allowInsecureForTests: true,
    });
    expect(result).toMatchObject({ ok: false, channel: 'webhook' });
    expect(received).toHaveLength(0);
  });

  it('refuses an http url without the test option even when private addresses are allowed', async () => {
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    const result = await notifyUser(services(), webhookUser(`http://127.0.0.1:${port}/h`), note);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/https/) });
    expect(received).toHaveLength(0);
  });

  it('posts {type,title,content,values,timestamp} with the bearer secret', async () => {
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    const result = await notifyUser(services(), webhookUser(`http://localhost:${port}/h`, 'shh'), note, {
      allowInsecureForTests: true,
    });
    expect(result).toEqual({ ok: true, channel: 'webhook', status: 200 });
    expect(received).toHaveLength(1);
    const body = JSON.parse(received[0]?.body ?? '{}');
    expect(body).toMatchObject({
      type: 'quota_exceed',
      title: 'Low balance',
      content: note.content,
      values: ['$1', '$5'],
    });
    expect(Math.abs(body.timestamp - Date.now() / 1000)).toBeLessThan(5);
    expect(received[0]?.headers.authorization).toBe('Bearer shh');
    expect(received[0]?.headers['content-type']).toBe('application/json');
  });

  it('sends no Authorization without a secret and reports non-2xx answers', async () => {
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    answer = 500;
    const result = await notifyUser(services(), webhookUser(`http://127.0.0.1:${port}/h`), note, {
      allowInsecureForTests: true,
    });
    expect(result).toMatchObject({ ok: false, error: 'webhook answered 500' });
    expect(received[0]?.headers.authorization).toBeUndefined();
  });

  it('through a worker, still refuses a literal private address and an http url, and never calls the worker', async () => {
    const viaWorker = services([], { WorkerUrl: `http://127.0.0.1:${port}/worker`, WorkerValidKey: 'k' });
    for (const url of ['https://10.0.0.8/h', 'https://[::1]/h', 'http://example.com/h']) {
      const result = await notifyUser(viaWorker, webhookUser(url), note);
      expect(result).toMatchObject({ ok: false, channel: 'webhook' });
    }
    expect(received).toHaveLength(0);
  });

  it('times out', async () => {
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const p = (silent.address() as AddressInfo).port;
    const result = await notifyUser(services(), webhookUser(`http://127.0.0.1:${p}/h`), note, {
      allowInsecureForTests: true,
      timeoutMs: 300,
    });
    expect(result.ok).toBe(false);
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});

describe('notifyUser by e-mail', () => {
  it('fills the placeholders and prefers notification_email over the bound e-mail', async () => {
    const sent: MailMessage[] = [];
    const user = {
      id: 1,
      email: 'bound@example.com',
      setting: JSON.stringify({ notify_type: 'email', notification_email: 'n@example.com' }),
    };
    expect(await notifyUser(services(sent), user, note)).toEqual({ ok: true, channel: 'email' });
    expect(sent[0]).toMatchObject({ to: 'n@example.com', subject: 'Low balance', text: 'left $1 of $5' });
    await notifyUser(services(sent), { ...user, setting: '' }, note);
    expect(sent[1]?.to).toBe('bound@example.com');
  });

  it('fails softly without any address or when delivery fails', async () => {
    expect(await notifyUser(services(), { id: 1, email: '', setting: '' }, note)).toMatchObject({
      ok: false,
    });
    const broken = {
      ...services(),
      mailTransport: { sendMail: async () => Promise.reject(new Error('down')) },
    };
    expect(await notifyUser(broken, { id: 1, email: 'a@b.co', setting: '' }, note)).toMatchObject({
      ok: false,
      channel: 'email',
    });
  });

  it('fillPlaceholders fills in order', () => {
    expect(fillPlaceholders('{{value}}/{{value}}/{{value}}', [1, 'b'])).toBe('1/b/');
  });
});
