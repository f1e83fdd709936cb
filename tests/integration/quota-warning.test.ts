/**
 * Quota-warning notifications (issue 14, ADR 022): usage reported to the console's Billing gRPC service takes a
 * balance below the user's warning threshold; exactly one notification per crossing goes out after the commit, by
 * e-mail (real nodemailer to the smtp-server capture) or by webhook (an http receiver on loopback), and a failing
 * or hanging delivery neither fails nor holds up billing. One test drives a real call through the relay.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  BillingServiceClient,
  type ReportUsageResponse,
  UsageAckStatus,
  type UsageEvent,
  UsageKind,
} from '@switchyard/proto/switchyard/billing/v1/billing.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaWarning } from '#app/domain/billing/billing.server.ts';
import type { NotifyOptions, NotifyResult } from '#app/domain/notify/notifier.server.ts';
import {
  MAX_NOTIFY_ATTEMPTS,
  NOTIFY_LEASE_MS,
  retryDelayMs,
  sweepNotifications,
} from '#app/domain/notify/outbox.server.ts';
import {
  createQuotaWarningQueue,
  deliverQuotaWarning,
  type QuotaWarningQueue,
} from '#app/domain/notify/quota-warning.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { type SmtpCapture, startSmtpCapture } from '../fakes/smtp.ts';
import {
  drained,
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

type Hook = { headers: http.IncomingHttpHeaders; body: string };

let stack: Stack;
let smtp: SmtpCapture;
let fake: FakeOpenAI;
let receiver: http.Server;
let hookUrl = '';
const hooks: Hook[] = [];
/** How the receiver answers: a status, or 'hold' to keep the request open until `release` is called. */
let hookMode: number | 'hold' = 204;
let release: (() => void) | null = null;
let queue: QuotaWarningQueue;
const results: Array<{ warning: QuotaWarning; result: NotifyResult }> = [];

function useQueue(notify: NotifyOptions = { allowInsecureForTests: true, timeoutMs: 2_000 }) {
  queue = createQuotaWarningQueue(
    { options: stack.options, secrets: stack.secrets },
    {
      notify,
      log: () => {},
      onResult: (warning, result) => results.push({ warning, result }),
      em: () => stack.orm.em.fork(),
    },
  );
}

type OutboxRow = { status: number; attempts: number; next_attempt_at: string; last_error: string | null };

async function outboxOf(userId: number): Promise<OutboxRow[]> {
  return stack.sql<OutboxRow>(
    'select status, attempts, next_attempt_at, last_error from notification_outbox where user_id = ? order by id',
    [userId],
  );
}

/** Earlier tests' failed deliveries stay pending in the outbox: set them aside so a sweep here sees only its own. */
async function abandonPending(): Promise<void> {
  await stack.sql('update notification_outbox set status = 2 where status = 0');
}

const sweepDeliver = (w: QuotaWarning) =>
  deliverQuotaWarning({ options: stack.options, secrets: stack.secrets }, w, {
    allowInsecureForTests: true,
    timeoutMs: 2_000,
  });
const sweep = (nowMs: number) => sweepNotifications(() => stack.orm.em.fork(), sweepDeliver, { nowMs });

beforeAll(async () => {
  smtp = await startSmtpCapture();
  fake = await startFakeOpenAI();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      hooks.push({ headers: req.headers, body });
      if (hookMode === 'hold') {
        release = () => {
          res.statusCode = 500;
          res.end();
        };
        return;
      }
      res.statusCode = hookMode;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  stack = await startStack({ suffix: 'quota_warning', quotaWarnings: (w) => queue.push(w) });
  await setOptions(stack, {
    SMTPServer: smtp.host,
    SMTPPort: String(smtp.port),
    SMTPFrom: 'noreply@switchyard.test',
    ServerAddress: 'https://gw.example.com/',
    QuotaPerUnit: '500000',
    DisplayInCurrencyEnabled: 'true',
    ModelPrice: JSON.stringify({ 'fixed-chat': 0.002 }),
    RetryTimes: '0',
    ModelRequestRateLimitEnabled: 'false',
  });
  useQueue();
  // The notifier refuses loopback addresses unless told otherwise (tests only).
  process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
}, 60_000);

afterAll(async () => {
  delete process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES;
  await stack?.close();
  await smtp?.close();
  await fake?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

afterEach(async () => {
  await queue.idle();
  hooks.length = 0;
  results.length = 0;
  hookMode = 204;
  useQueue();
});

let seq = 0;

function event(userId: number, quota: number): UsageEvent {
  return {
    requestId: `qw-${Date.now()}-${seq++}`,
    userId,
    tokenId: 0,
    channelIds: [],
    modelName: 'gpt-4o',
    upstreamModel: '',
    usage: undefined,
    quota,
    isStream: false,
    useTimeMs: 10,
    frtMs: 0,
    group: 'default',
    otherJson: '',
    createdAtMs: Date.now(),
    ip: '',
    tokenName: '',
    kind: UsageKind.USAGE_KIND_CONSUME,
    content: '',
  };
}

/** One ReportUsage call over gRPC, as the relay's outbox makes it. */
function report(events: UsageEvent[]): Promise<ReportUsageResponse> {
  const client = new BillingServiceClient(stack.billing.address, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${stack.internalSecret}`);
  return new Promise<ReportUsageResponse>((resolve, reject) => {
    client.reportUsage(
      { events },
      metadata,
      { deadline: Date.now() + 10_000 },
      (err: ServiceError | null, res?: ReportUsageResponse) => (err || !res ? reject(err) : resolve(res)),
    );
  }).finally(() => client.close());
}

async function user(quota: number, email: string, setting: Record<string, unknown> | null) {
  const u = await seedUser(stack, { quota });
  await stack.sql('update users set email = ?, setting = ? where id = ?', [
    email,
    setting ? JSON.stringify(setting) : '',
    u.id,
  ]);
  return u.id;
}

async function quotaOf(id: number): Promise<number> {
  const [row] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [id]);
  return Number(row?.quota);
}

const mailsTo = (to: string) => smtp.messages.filter((m) => m.to.includes(to));

describe('quota warnings from Billing', () => {
  it('mails once when a charge crosses the threshold, not on later calls; a top-up re-arms it', async () => {
    const to = 'crossing@example.com';
    const id = await user(150_000, to, { notify_type: 'email', quota_warning_threshold: 100_000 });
    await report([event(id, 30_000)]); // 120,000: above
    await queue.idle();
    expect(mailsTo(to)).toHaveLength(0);

    const crossing = event(id, 30_000); // 90,000: crosses
    await report([crossing]);
    const mail = await smtp.waitFor((m) => m.to.includes(to));
    expect(mail.subject).toBe('您的额度即将用尽');
    expect(mail.text).toContain('当前剩余额度为 $0.18');
    expect(mail.text).toContain('https://gw.example.com/topup');

    await report([event(id, 10_000)]); // 80,000
    await report([event(id, 10_000), event(id, 10_000)]); // 60,000
    const replay = await report([crossing]); // a replay bills nothing and warns nothing
    expect(replay.acks[0]?.status).toBe(UsageAckStatus.USAGE_ACK_STATUS_DUPLICATE);
    await queue.idle();
    expect(await quotaOf(id)).toBe(60_000);
    expect(mailsTo(to)).toHaveLength(1);

    // A top-up (or redemption, or an administrator's change) above the threshold re-arms the warning.
    await stack.sql('update users set quota = quota + 100000 where id = ?', [id]); // 160,000
    await report([event(id, 50_000)]); // 110,000: above, no mail
    await queue.idle();
    expect(mailsTo(to)).toHaveLength(1);
    await report([event(id, 20_000)]); // 90,000: crosses again
    await report([event(id, 20_000)]); // 70,000
    await queue.idle();
    expect(mailsTo(to)).toHaveLength(2);
  });

  it('posts the seed body with the bearer secret to the webhook, once', async () => {
    const id = await user(100_500, 'hook-owner@example.com', {
      notify_type: 'webhook',
      quota_warning_threshold: 100_000,
      webhook_url: hookUrl,
      webhook_secret: 'shh',
    });
    await report([event(id, 1_000)]); // 99,500
    await report([event(id, 1_000)]);
    await queue.idle();
    expect(hooks).toHaveLength(1);
    expect(hooks[0]?.headers.authorization).toBe('Bearer shh');
    const body = JSON.parse(hooks[0]?.body ?? '{}');
    expect(body).toEqual({
      type: 'quota_exceed',
      title: '您的额度即将用尽',
      content: '{{value}}，当前剩余额度为 {{value}}，为了不影响您的使用，请及时充值。充值链接：{{value}}',
      values: ['您的额度即将用尽', '$0.20', 'https://gw.example.com/topup'],
      timestamp: expect.any(Number),
    });
    expect(mailsTo('hook-owner@example.com')).toHaveLength(0);
  });

  it('with WorkerUrl set, delivers the webhook through the worker as {url, key, method, headers, body}', async () => {
    const worker = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        workerCalls.push(JSON.parse(body));
        res.statusCode = 200;
        res.end('{}');
      });
    });
    const workerCalls: Array<Record<string, unknown>> = [];
    await new Promise<void>((resolve) => worker.listen(0, '127.0.0.1', resolve));
    try {
      await stack.options.set('WorkerUrl', `http://127.0.0.1:${(worker.address() as AddressInfo).port}/`);
      await stack.options.set('WorkerValidKey', 'worker-secret');
      // The worker fetches from its own network: a name only it can resolve is not resolved here.
      const target = 'https://hooks.worker-only.invalid/notify';
      const id = await user(100_500, 'worker-hook@example.com', {
        notify_type: 'webhook',
        quota_warning_threshold: 100_000,
        webhook_url: target,
        webhook_secret: 'shh',
      });
      await report([event(id, 1_000)]);
      await queue.idle();
      expect(hooks).toHaveLength(0);
      expect(results[0]?.result).toEqual({ ok: true, channel: 'webhook', status: 200 });
      expect(workerCalls).toHaveLength(1);
      expect(workerCalls[0]).toEqual({
        url: target,
        key: 'worker-secret',
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer shh' },
        body: expect.objectContaining({ type: 'quota_exceed', values: expect.any(Array) }),
      });
    } finally {
      await stack.options.set('WorkerUrl', '');
      await stack.options.set('WorkerValidKey', '');
      await new Promise<void>((resolve) => worker.close(() => resolve()));
    }
  });

  it('warns once when concurrent batches cross together; QuotaRemindThreshold applies without an own threshold', async () => {
    await setOptions(stack, { QuotaRemindThreshold: '100000' });
    const to = 'concurrent@example.com';
    const id = await user(100_800, to, null);
    // 8 batches of 2 events of 100 at once: the balance ends at 99,200; one batch takes it across 100,000.
    const acks = await Promise.all(Array.from({ length: 8 }, () => report([event(id, 100), event(id, 100)])));
    expect(acks.flatMap((a) => a.acks.map((x) => x.status))).toEqual(
      Array(16).fill(UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED),
    );
    await queue.idle();
    expect(await quotaOf(id)).toBe(99_200);
    expect(mailsTo(to)).toHaveLength(1);
    expect(results.filter((r) => r.warning.userId === id)).toHaveLength(1);
    expect(results[0]?.warning.threshold).toBe(100_000);
    await setOptions(stack, { QuotaRemindThreshold: '1000' });
  });

  it('bills before a hanging webhook answers, and a failing one changes nothing in billing', async () => {
    hookMode = 'hold';
    const id = await user(100_500, 'hold@example.com', {
      notify_type: 'webhook',
      quota_warning_threshold: 100_000,
      webhook_url: hookUrl,
    });
    const ack = await report([event(id, 1_000)]);
    // Billing has answered; the delivery reaches the receiver afterwards and is still waiting for its answer.
    expect(ack.acks[0]?.status).toBe(UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED);
    expect(await quotaOf(id)).toBe(99_500);
    await expect.poll(() => hooks.length).toBe(1);
    expect(results).toHaveLength(0);
    release?.();
    await queue.idle();
    expect(results[0]?.result).toMatchObject({ ok: false, error: 'webhook answered 500' });
    // Not retried by the queue, nor warned again by later calls (the outbox sweeper retries it: tests below).
    await report([event(id, 1_000)]);
    await queue.idle();
    expect(hooks).toHaveLength(1);
  });

  it('a dead SMTP server fails the mail, not the billing', async () => {
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const closedPort = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    await setOptions(stack, { SMTPPort: String(closedPort) });
    try {
      const id = await user(100_500, 'dead-smtp@example.com', { quota_warning_threshold: 100_000 });
      const ack = await report([event(id, 1_000)]);
      expect(ack.acks[0]?.status).toBe(UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED);
      expect(await quotaOf(id)).toBe(99_500);
      await queue.idle();
      expect(results[0]?.result).toMatchObject({ ok: false, channel: 'email' });
      expect(mailsTo('dead-smtp@example.com')).toHaveLength(0);
    } finally {
      await setOptions(stack, { SMTPPort: String(smtp.port) });
    }
  });

  it('keeps the https-only and private-address rules of the notifier', async () => {
    useQueue({}); // production options: https only
    const id = await user(100_500, 'plain@example.com', {
      notify_type: 'webhook',
      quota_warning_threshold: 100_000,
      webhook_url: hookUrl,
    });
    await report([event(id, 1_000)]);
    await queue.idle();
    expect(results[0]?.result).toMatchObject({ ok: false, error: 'webhook url must use https' });
    delete process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES;
    try {
      const other = await user(100_500, 'private@example.com', {
        notify_type: 'webhook',
        quota_warning_threshold: 100_000,
        webhook_url: hookUrl.replace('http:', 'https:'),
      });
      await report([event(other, 1_000)]);
      await queue.idle();
      expect(results[1]?.result).toMatchObject({ ok: false, error: 'refusing private address 127.0.0.1' });
    } finally {
      process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    }
    expect(hooks).toHaveLength(0);
  });

  it('a warning committed but never delivered (the console died after the commit) is delivered by the sweeper exactly once', async () => {
    await abandonPending();
    // The crash: Billing commits, nothing runs after the commit.
    queue = { push() {}, idle: async () => {} };
    const id = await user(100_500, 'crashed@example.com', {
      notify_type: 'webhook',
      quota_warning_threshold: 100_000,
      webhook_url: hookUrl,
    });
    const ack = await report([event(id, 1_000)]);
    expect(ack.acks[0]?.status).toBe(UsageAckStatus.USAGE_ACK_STATUS_ACCEPTED);
    expect(await outboxOf(id)).toMatchObject([{ status: 0, attempts: 1, last_error: null }]);
    expect(hooks).toHaveLength(0);

    // Within the lease of the (lost) attempt after commit no sweeper takes it.
    expect((await sweep(Date.now())).claimed).toBe(0);
    // Past it, two consoles sweeping at once: one of them claims it (skip locked), it goes out once.
    const later = Date.now() + NOTIFY_LEASE_MS + 1;
    const [a, b] = await Promise.all([sweep(later), sweep(later)]);
    expect(a.claimed + b.claimed).toBe(1);
    expect(a.delivered + b.delivered).toBe(1);
    expect(hooks).toHaveLength(1);
    expect(JSON.parse(hooks[0]?.body ?? '{}')).toMatchObject({
      type: 'quota_exceed',
      values: expect.any(Array),
    });
    expect(await outboxOf(id)).toMatchObject([{ status: 1, attempts: 2 }]);
    // Delivered rows are never taken again.
    expect((await sweep(later + 24 * 3600_000)).claimed).toBe(0);
    expect(hooks).toHaveLength(1);
  });

  it('a delivered warning is marked at once; a failing one is retried with backoff and abandoned after the last attempt', async () => {
    await abandonPending();
    const ok = await user(100_500, 'marked@example.com', { quota_warning_threshold: 100_000 });
    await report([event(ok, 1_000)]);
    await queue.idle();
    expect(await outboxOf(ok)).toMatchObject([{ status: 1, attempts: 1 }]);

    hookMode = 500;
    const id = await user(100_500, 'failing@example.com', {
      notify_type: 'webhook',
      quota_warning_threshold: 100_000,
      webhook_url: hookUrl,
    });
    await report([event(id, 1_000)]);
    await queue.idle();
    const [first] = await outboxOf(id);
    expect(first).toMatchObject({ status: 0, attempts: 1, last_error: 'webhook answered 500' });
    let now = Date.now();
    // Before the backoff is over nothing is retried.
    expect((await sweep(now + retryDelayMs(1) - 5_000)).claimed).toBe(0);
    for (let attempt = 2; attempt <= MAX_NOTIFY_ATTEMPTS; attempt++) {
      now += retryDelayMs(attempt - 1) + 1_000;
      const r = await sweep(now);
      expect(r.claimed).toBe(1);
      expect((await outboxOf(id))[0]).toMatchObject({
        attempts: attempt,
        status: attempt === MAX_NOTIFY_ATTEMPTS ? 2 : 0,
      });
    }
    expect(hooks).toHaveLength(MAX_NOTIFY_ATTEMPTS);
    // Abandoned: never sent again, even once the receiver is back.
    hookMode = 204;
    expect((await sweep(now + 365 * 24 * 3600_000)).claimed).toBe(0);
    expect(hooks).toHaveLength(MAX_NOTIFY_ATTEMPTS);
  });

  it('warns after a real call through the relay takes the balance across', async () => {
    const channel = await seedChannel(stack, { baseUrl: fake.url, models: ['fixed-chat'] });
    expect(channel.id).toBeGreaterThan(0);
    await reload(stack);
    const to = 'relay-call@example.com';
    const id = await user(100_500, to, { notify_type: 'email', quota_warning_threshold: 100_000 });
    const token = await seedToken(stack, id, { remainQuota: 1_000_000 });
    const call = () =>
      fetch(`${stack.relays[0]!.httpUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'fixed-chat',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
    for (let i = 0; i < 2; i++) expect((await call()).status).toBe(200); // 1,000 each (0.002 × 500,000)
    await drained(stack);
    await queue.idle();
    expect(await quotaOf(id)).toBe(98_500);
    expect(mailsTo(to)).toHaveLength(1);
  });
});
