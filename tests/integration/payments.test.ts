/**
 * Online payment end to end against real PostgreSQL and the loopback gateway fakes (tests/fakes/alipay.ts,
 * tests/fakes/wechatpay.ts): the /api/order/* and /api/product routes, the notify routes reached over HTTP by
 * the fakes, the query fallback and the expiry sweep (issue 16, ADR 027).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Order, OrderStatus } from '@switchyard/db/entities/order.ts';
import { Redemption } from '@switchyard/db/entities/redemption.ts';
import { Session } from '@switchyard/db/entities/session.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import type { MailMessage } from '#app/domain/mail/mailer.server.ts';
import { type PaymentDeps, sweepOrders } from '#app/domain/payments/orders.server.ts';
import {
  REFUSAL_ROWS_PER_SOURCE,
  REFUSAL_ROWS_TOTAL,
  SUPPRESSED_ACTION,
} from '#app/domain/payments/refusals.server.ts';
import { CLIENT_IP_HEADER, createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import { loader as adminOrderList } from '#app/routes/api.order.adminOrderList.ts';
import { loader as createOrder } from '#app/routes/api.order.createOrder.ts';
import { loader as getOrderList } from '#app/routes/api.order.getOrderList.ts';
import { loader as getOrderStatus } from '#app/routes/api.order.getOrderStatus.ts';
import { action as alipayNotify } from '#app/routes/api.payment.alipay.notify.ts';
import { action as wechatNotify } from '#app/routes/api.payment.wechatpay.notify.ts';
import { loader as getProductConfig } from '#app/routes/api.product.getProductConfig.ts';
import { loader as adminOrdersPage } from '#app/routes/order._index.tsx';
import { action as topupAction, loader as topupLoader } from '#app/routes/topup.tsx';
import { loader as orderPage } from '#app/routes/topup_.order.$orderId.tsx';
import type { ConsoleServices } from '#app/services.server.ts';
import { type AlipayFake, rsaPair, startAlipayFake } from '../fakes/alipay.ts';
import { startWeChatPayFake, type WeChatPayFake } from '../fakes/wechatpay.ts';

let db: TestDatabase;
let alipay: AlipayFake;
let wechat: WeChatPayFake;
let notifyServer: Server;
let notifyBase = '';
let services: ConsoleServices;
let optionValues: Record<string, unknown>;
let mails: (MailMessage & { from: string })[];
let mailFails = false;
let seq = 0;

type Who = { id: number; session: string };

/** The notify routes served over HTTP, as the gateways reach them. */
function startNotifyServer(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) =>
          typeof v === 'string' ? [[k, v] as [string, string]] : [],
        ),
        body: req.method === 'POST' ? body : undefined,
      });
      const action = req.url?.startsWith('/api/payment/alipay/') ? alipayNotify : wechatNotify;
      const response = (await action({ request, context: { services }, params: {} } as never)) as Response;
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(await response.text());
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'payments', poolMax: 16 });
  [alipay, wechat] = await Promise.all([startAlipayFake(), startWeChatPayFake()]);
  notifyServer = await startNotifyServer();
  notifyBase = `http://127.0.0.1:${(notifyServer.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await Promise.all([alipay?.close(), wechat?.close()]);
  await new Promise((r) => notifyServer?.close(r));
  await db?.drop();
});

beforeEach(async () => {
  mails = [];
  mailFails = false;
  optionValues = {
    QuotaPerUnit: 500000,
    DisplayInCurrencyEnabled: true,
    SystemName: 'Switchyard',
    SMTPServer: '',
    SMTPPort: 587,
    SMTPAccount: '',
    SMTPToken: '',
    SMTPFrom: 'shop@example.com',
    SMTPSSLEnabled: false,
    Price: 7.3,
    MinTopUp: 1,
    TopupConfig: [10, 50],
    ProductConfig: [10, 20],
    apiAddressList: '[{"url":"https://api.example.com","description":"main"}]',
    AlipayAppId: alipay.appId,
    AlipayPrivateKey: alipay.merchant.privateKey,
    AlipayPublicKey: alipay.platform.publicKey,
    AlipayNotifyUrl: `${notifyBase}/api/payment/alipay/notify`,
    WeChatPayAppId: wechat.appId,
    WeChatPayMchId: wechat.mchId,
    WeChatPayCertSerial: wechat.certSerial,
    WeChatPayApiV3Key: wechat.apiV3Key,
    WeChatPayApiCertKey: wechat.merchant.privateKey,
    WeChatPayPublicKey: wechat.platform.publicKey,
    WeChatPayPublicKeyId: wechat.platformKeyId,
    WeChatPayNotifyUrl: `${notifyBase}/api/payment/wechatpay/notify`,
  };
  services = {
    orm: db.orm,
    options: { get: (key: string) => optionValues[key] } as never,
    secrets: {} as never,
    relay: null,
    version: 'test',
    startedAt: 0,
    limiter: createMemoryRateLimiter(),
    auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    payments: { alipayGateway: alipay.gatewayUrl, wechatPayBase: wechat.baseUrl, orderTimeoutSeconds: 1800 },
    mailTransport: {
      async sendMail(m) {
        if (mailFails) throw new Error('smtp down');
        mails.push(m);
      },
    },
  };
  await db.orm.em
    .getConnection()
    .execute(
      'truncate table orders, sessions, redemptions, audit_entries, logs, users restart identity cascade',
    );
});

async function makeUser(over: Record<string, unknown> = {}): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `pay${seq}`,
    displayName: '',
    affCode: `payaff${seq}`,
    ...over,
  } as never);
  await em.flush();
  const session = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(session),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  return { id: user.id, session };
}

type Envelope<T = Record<string, unknown>> = { success: boolean; message: string; data: T };

async function api<T = Record<string, unknown>>(
  fn: (args: never) => unknown,
  who: Who | null,
  path: string,
): Promise<{ status: number; body: Envelope<T> }> {
  const headers = new Headers({ 'Accept-Language': 'en' });
  if (who) {
    headers.set('Cookie', `sy_session=${who.session}`);
    headers.set('New-Api-User', String(who.id));
  }
  const request = new Request(`http://localhost${path}`, { headers });
  const res = (await fn({ request, context: { services }, params: {} } as never)) as Response;
  return { status: res.status, body: (await res.json()) as Envelope<T> };
}

type Created = { code_url: string; order_id: string; status: number };

async function order(who: Who, query: string): Promise<Created> {
  const { body } = await api<Created>(createOrder, who, `/api/order/createOrder?${query}`);
  expect(body, JSON.stringify(body)).toMatchObject({ success: true });
  return body.data;
}

const quotaOf = async (id: number) => Number((await db.orm.em.fork().findOneOrFail(User, { id })).quota);
const orderRow = (orderId: string) => db.orm.em.fork().findOneOrFail(Order, { orderId });
const topUps = (userId: number) => db.orm.em.fork().count(Log, { userId, type: LogType.TopUp });
const refusals = () => db.orm.em.fork().find(AuditEntry, { action: 'order.payment.refused' });

function deps(): PaymentDeps {
  return {
    em: db.orm.em.fork(),
    options: services.options,
    t: authTFor('en'),
    payments: services.payments,
    relay: null,
    mail: services,
  };
}

describe('GET /api/order/createOrder', () => {
  it('creates an Alipay order with integer amounts and answers the QR code from the gateway', async () => {
    const who = await makeUser();
    const created = await order(who, 'pay_method=1&amount=10&order_type=1');
    expect(created.status).toBe(0);
    expect(created.code_url).toMatch(/^https:\/\/qr\.alipay\.com\//);
    expect(created.order_id).toMatch(/^SY[0-9a-f]{30}$/);
    const row = await orderRow(created.order_id);
    expect([row.userId, Number(row.productCents), Number(row.moneyCents), Number(row.quota)]).toEqual([
      who.id,
      1000,
      7300,
      5_000_000,
    ]);
    expect(row.status).toBe(OrderStatus.Pending);
    expect(Number(row.expiresAt) - Number(row.createdAt)).toBe(1800);
    expect(alipay.trades.get(created.order_id)?.totalAmount).toBe('73.00');
    expect(alipay.calls.at(-1)).toEqual({ method: 'alipay.trade.precreate', verified: true });
    // order ids are unguessable: two orders share no prefix beyond 'SY'
    const other = await order(who, 'pay_method=1&amount=10');
    expect(other.order_id.slice(0, 10)).not.toBe(created.order_id.slice(0, 10));
  });

  it("takes the seed's payable `product` (amount x Price, two decimals) and checks it is exact", async () => {
    const who = await makeUser();
    const created = await order(who, 'pay_method=2&product=73.00&order_type=1');
    expect(created.code_url).toMatch(/^weixin:\/\/wxpay\/bizpayurl\?pr=/);
    expect(wechat.trades.get(created.order_id)?.total).toBe(7300);
    expect(wechat.calls.at(-1)?.verified).toBe(true);
    const row = await orderRow(created.order_id);
    expect([Number(row.productCents), Number(row.moneyCents)]).toEqual([1000, 7300]);
    const bad = await api(createOrder, who, '/api/order/createOrder?pay_method=1&product=73.01&order_type=1');
    expect(bad.body).toMatchObject({ success: false, message: 'Amount incorrect' });
  });

  it('refuses bad input with a clear message and creates nothing', async () => {
    const who = await makeUser();
    const cases: [string, string][] = [
      ['pay_method=1&amount=0', 'Amount incorrect'],
      ['pay_method=1&amount=1.234', 'Amount incorrect'],
      ['pay_method=1&amount=abc', 'Amount incorrect'],
      ['pay_method=1&amount=0.5', 'The amount must be at least $1'],
      ['pay_method=1&product=-7.30', 'Amount incorrect'],
      ['pay_method=3&amount=10', 'Unsupported pay method'],
      ['pay_method=1&amount=15&order_type=2', 'This amount is not one of the redemption card plans'],
      ['pay_method=1&amount=10&order_type=2', 'Bind an e-mail address before buying a redemption card'],
    ];
    for (const [query, message] of cases) {
      const res = await api(createOrder, who, `/api/order/createOrder?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.body, query).toMatchObject({ success: false, message });
    }
    optionValues.WeChatPayApiV3Key = '';
    expect((await api(createOrder, who, '/api/order/createOrder?pay_method=2&amount=10')).body).toMatchObject(
      {
        success: false,
        message: 'This pay method is not configured',
      },
    );
    expect(await db.orm.em.fork().count(Order, {})).toBe(0);
    expect((await api(createOrder, null, '/api/order/createOrder?pay_method=1&amount=10')).status).toBe(401);
  });

  it('closes the order and says so when the gateway refuses (a wrong app key)', async () => {
    const who = await makeUser();
    optionValues.AlipayPrivateKey = rsaPair().privateKey;
    const res = await api(createOrder, who, '/api/order/createOrder?pay_method=1&amount=10');
    expect(res.body).toMatchObject({ success: false, message: 'Create order failed' });
    expect(alipay.calls.at(-1)?.verified).toBe(false);
    const rows = await db.orm.em.fork().find(Order, {});
    expect(rows.map((r) => r.status)).toEqual([OrderStatus.Closed]);
  });

  it('limits unpaid orders per user', async () => {
    const who = await makeUser();
    for (let i = 0; i < 5; i++) await order(who, 'pay_method=1&amount=1');
    expect((await api(createOrder, who, '/api/order/createOrder?pay_method=1&amount=1')).body.message).toBe(
      'Too many unpaid orders; pay or wait for them to close first',
    );
  });
});

describe('Alipay payment', () => {
  it('credits once when the notify arrives, with one top-up log row; the poll then sees status 1', async () => {
    const who = await makeUser({ quota: 7 });
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    expect(
      (await api(getOrderStatus, who, `/api/order/getOrderStatus?order_id=${order_id}`)).body.data,
    ).toMatchObject({
      status: 0,
    });
    alipay.scan(order_id);
    expect(await alipay.pay(order_id)).toEqual(['success']);
    expect(await quotaOf(who.id)).toBe(5_000_007);
    expect(await topUps(who.id)).toBe(1);
    const row = await orderRow(order_id);
    expect([row.status, row.tradeNo]).toEqual([OrderStatus.Paid, alipay.trades.get(order_id)!.tradeNo]);
    expect(Number(row.paidAt)).toBeGreaterThan(0);
    const status = await api(getOrderStatus, who, `/api/order/getOrderStatus?order_id=${order_id}`);
    expect(status.body.data).toMatchObject({ status: 1, order_id, product: 10, money: 73 });
  });

  it('credits exactly once when the gateway replays the notify 10 times concurrently', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=3.33');
    alipay.scan(order_id);
    const answers = await alipay.pay(order_id, { times: 10 });
    expect(answers).toEqual(Array(10).fill('success'));
    expect(await quotaOf(who.id)).toBe(1_665_000);
    expect(await topUps(who.id)).toBe(1);
    // and once more, later
    expect((await alipay.notify(order_id)).body).toBe('success');
    expect(await quotaOf(who.id)).toBe(1_665_000);
  });

  it('refuses a forged notify (bad signature), records it and changes nothing', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    alipay.scan(order_id);
    const forged = await alipay.notify(order_id, {
      fields: { trade_status: 'TRADE_SUCCESS' },
      signWith: rsaPair().privateKey,
    });
    expect(forged.body).toBe('fail');
    expect(await quotaOf(who.id)).toBe(0);
    expect((await orderRow(order_id)).status).toBe(OrderStatus.Pending);
    const [entry] = await refusals();
    expect(JSON.parse(entry!.after!)).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses a notify whose amount differs from the order, and one for another app', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    alipay.scan(order_id);
    const cheap = await alipay.notify(order_id, {
      fields: { trade_status: 'TRADE_SUCCESS', total_amount: '0.01' },
    });
    expect(cheap.body).toBe('fail');
    const foreign = await alipay.notify(order_id, {
      fields: { trade_status: 'TRADE_SUCCESS', app_id: '2021000000000001' },
    });
    expect(foreign.body).toBe('fail');
    expect(await quotaOf(who.id)).toBe(0);
    expect((await orderRow(order_id)).status).toBe(OrderStatus.Pending);
    expect((await refusals()).map((r) => JSON.parse(r.after!).reason).sort()).toEqual([
      'amount_mismatch',
      'app_id_mismatch',
    ]);
  });

  it('asks the gateway when no notify arrives (trade query fallback)', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    await db.orm.em
      .fork()
      .nativeUpdate(Order, { orderId: order_id }, { createdAt: Math.floor(Date.now() / 1000) - 60 });
    alipay.scan(order_id);
    await alipay.pay(order_id, { times: 0 });
    const status = await api(getOrderStatus, who, `/api/order/getOrderStatus?order_id=${order_id}`);
    expect(status.body.data).toMatchObject({ status: 1 });
    expect(await quotaOf(who.id)).toBe(5_000_000);
    expect(alipay.calls.some((c) => c.method === 'alipay.trade.query' && c.verified)).toBe(true);
  });

  it('closes an expired order at the gateway and here; a late notify for it is refused', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    alipay.scan(order_id);
    await db.orm.em
      .fork()
      .nativeUpdate(Order, { orderId: order_id }, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expect(await sweepOrders(deps())).toEqual({ closed: 1, mailed: 0 });
    expect(alipay.trades.get(order_id)?.state).toBe('TRADE_CLOSED');
    expect(alipay.calls.some((c) => c.method === 'alipay.trade.close' && c.verified)).toBe(true);
    const row = await orderRow(order_id);
    expect(row.status).toBe(OrderStatus.Closed);
    expect(Number(row.closedAt)).toBeGreaterThan(0);
    const late = await alipay.notify(order_id, { fields: { trade_status: 'TRADE_SUCCESS' } });
    expect(late.body).toBe('fail');
    expect(await quotaOf(who.id)).toBe(0);
    expect((await refusals()).map((r) => JSON.parse(r.after!).reason)).toEqual(['closed']);
  });

  it('applies a payment found while closing instead of closing', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    alipay.scan(order_id);
    await alipay.pay(order_id, { times: 0 });
    await db.orm.em
      .fork()
      .nativeUpdate(Order, { orderId: order_id }, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expect(await sweepOrders(deps())).toEqual({ closed: 0, mailed: 0 });
    expect((await orderRow(order_id)).status).toBe(OrderStatus.Paid);
    expect(await quotaOf(who.id)).toBe(5_000_000);
  });
});

describe('refused notifications (issue 23 item 9)', () => {
  /** A notify posted straight to the route from `ip` (the address server/console.ts passes in). */
  async function post(gateway: 'alipay' | 'wechatpay', ip: string, body: string, headers = {}) {
    const action = gateway === 'alipay' ? alipayNotify : wechatNotify;
    const request = new Request(`http://127.0.0.1/api/payment/${gateway}/notify`, {
      method: 'POST',
      headers: { [CLIENT_IP_HEADER]: ip, ...headers },
      body,
    });
    const res = (await action({ request, context: { services }, params: {} } as never)) as Response;
    return { status: res.status, body: await res.text() };
  }
  const auditRows = (action: string) => db.orm.em.fork().count(AuditEntry, { action });

  it('1,000 forged notifications write a bounded number of audit rows; a genuine one still credits once', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=1&amount=10');
    alipay.scan(order_id);
    const forged = new URLSearchParams({
      out_trade_no: order_id,
      trade_status: 'TRADE_SUCCESS',
      total_amount: '73.00',
      app_id: alipay.appId,
      sign_type: 'RSA2',
      sign: 'Zm9yZ2Vk',
    }).toString();
    // 1,000 from one address, then 1,000 from as many addresses: every one is refused.
    const answers = new Set<string>();
    for (let i = 0; i < 1000; i++) answers.add((await post('alipay', '203.0.113.9', forged)).body);
    expect(await auditRows('order.payment.refused')).toBe(REFUSAL_ROWS_PER_SOURCE);
    for (let i = 0; i < 1000; i++)
      answers.add((await post('alipay', `10.${i >> 8}.${i & 255}.7`, forged)).body);
    expect([...answers]).toEqual(['fail']);
    expect(await auditRows('order.payment.refused')).toBe(REFUSAL_ROWS_TOTAL);
    // One summary row says refusals go unrecorded for the rest of the window.
    const summaries = await db.orm.em.fork().find(AuditEntry, { action: SUPPRESSED_ACTION });
    expect(summaries.map((r) => [r.targetId, r.ip])).toEqual([['alipay', '203.0.113.9']]);
    expect(JSON.parse(summaries[0]!.after!)).toMatchObject({ reason: 'bad_signature' });
    const [first] = await refusals();
    expect([first!.ip, JSON.parse(first!.after!).reason]).toEqual(['203.0.113.9', 'bad_signature']);
    // WeChat Pay's refusals have their own bound, and are still answered 401.
    const statuses = new Set<number>();
    for (let i = 0; i < 300; i++)
      statuses.add((await post('wechatpay', '203.0.113.9', '{"id":"x","resource":{}}')).status);
    expect([...statuses]).toEqual([401]);
    expect(await auditRows('order.payment.refused')).toBe(REFUSAL_ROWS_TOTAL + REFUSAL_ROWS_PER_SOURCE);
    expect(await auditRows(SUPPRESSED_ACTION)).toBe(2);
    // The genuine notification is neither delayed nor dropped, and credits once.
    expect(await quotaOf(who.id)).toBe(0);
    expect(await alipay.pay(order_id, { times: 3 })).toEqual(['success', 'success', 'success']);
    expect(await quotaOf(who.id)).toBe(5_000_000);
    expect(await topUps(who.id)).toBe(1);
  }, 60_000);
});

describe('WeChat Pay payment', () => {
  it('credits exactly once for 10 concurrent notifies; each is acknowledged with 204', async () => {
    const who = await makeUser({ quota: 1 });
    const { order_id } = await order(who, 'pay_method=2&amount=50');
    const statuses = await wechat.pay(order_id, { times: 10 });
    expect(statuses).toEqual(Array(10).fill(204));
    expect(await quotaOf(who.id)).toBe(25_000_001);
    expect(await topUps(who.id)).toBe(1);
    const row = await orderRow(order_id);
    expect([row.status, row.tradeNo, Number(row.moneyCents)]).toEqual([
      OrderStatus.Paid,
      wechat.trades.get(order_id)!.transactionId,
      36_500,
    ]);
  });

  it('refuses a forged signature, a resource not sealed with the APIv3 key and a wrong amount', async () => {
    const who = await makeUser();
    const { order_id } = await order(who, 'pay_method=2&amount=10');
    wechat.trades.get(order_id)!.state = 'SUCCESS';
    const forged = await wechat.notify(order_id, { signWith: rsaPair().privateKey });
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body)).toMatchObject({ code: 'FAIL' });
    const sealed = await wechat.notify(order_id, { apiV3Key: 'x'.repeat(32) });
    expect(sealed.status).toBe(401);
    const cheap = await wechat.notify(order_id, { transaction: { amount: { total: 1, currency: 'CNY' } } });
    expect(cheap.status).toBe(400);
    const foreign = await wechat.notify(order_id, { transaction: { mchid: '1900000109' } });
    expect(foreign.status).toBe(400);
    expect(await quotaOf(who.id)).toBe(0);
    expect((await orderRow(order_id)).status).toBe(OrderStatus.Pending);
    expect((await refusals()).map((r) => JSON.parse(r.after!).reason).sort()).toEqual([
      'amount_mismatch',
      'bad_signature',
      'bad_signature',
      'merchant_mismatch',
    ]);
  });

  it('queries the order when no notify came, and closes an expired one at the gateway', async () => {
    const who = await makeUser();
    const paid = await order(who, 'pay_method=2&amount=10');
    await db.orm.em
      .fork()
      .nativeUpdate(Order, { orderId: paid.order_id }, { createdAt: Math.floor(Date.now() / 1000) - 60 });
    await wechat.pay(paid.order_id, { times: 0 });
    const status = await api(getOrderStatus, who, `/api/order/getOrderStatus?order_id=${paid.order_id}`);
    expect(status.body.data).toMatchObject({ status: 1 });
    expect(await quotaOf(who.id)).toBe(5_000_000);

    const stale = await order(who, 'pay_method=2&amount=10');
    await db.orm.em
      .fork()
      .nativeUpdate(Order, { orderId: stale.order_id }, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    // the poll of an expired order closes it too
    const closed = await api(getOrderStatus, who, `/api/order/getOrderStatus?order_id=${stale.order_id}`);
    expect(closed.body.data).toMatchObject({ status: 2 });
    expect(wechat.trades.get(stale.order_id)?.state).toBe('CLOSED');
    expect(wechat.calls.every((c) => c.verified)).toBe(true);
  });
});

describe('redemption-card orders (order_type 2)', () => {
  it('create a code for the amount and e-mail it once, however often the notify comes', async () => {
    const who = await makeUser({ email: 'buyer@example.com' });
    const { order_id } = await order(who, 'pay_method=2&amount=20&order_type=2');
    expect(await wechat.pay(order_id, { times: 5 })).toEqual(Array(5).fill(204));
    const row = await orderRow(order_id);
    expect(row.status).toBe(OrderStatus.Paid);
    expect(await quotaOf(who.id)).toBe(0);
    const codes = await db.orm.em.fork().find(Redemption, { name: `order-${row.id}` });
    expect(codes.map((c) => Number(c.quota))).toEqual([10_000_000]);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toBe('buyer@example.com');
    expect(mails[0]!.text).toContain(codes[0]!.key);
    await sweepOrders(deps());
    expect(mails).toHaveLength(1);
  });

  it('mails again from the sweeper when the first delivery failed', async () => {
    const who = await makeUser({ email: 'late@example.com' });
    const { order_id } = await order(who, 'pay_method=1&amount=10&order_type=2');
    alipay.scan(order_id);
    mailFails = true;
    expect(await alipay.pay(order_id)).toEqual(['success']);
    expect(Number((await orderRow(order_id)).mailedAt)).toBe(0);
    mailFails = false;
    expect(await sweepOrders(deps())).toEqual({ closed: 0, mailed: 1 });
    expect(await sweepOrders(deps())).toEqual({ closed: 0, mailed: 0 });
    expect(mails.map((m) => m.to)).toEqual(['late@example.com']);
  });
});

describe('order lists and status by role', () => {
  it("a user lists and polls only their own orders; the admin lists everyone's with filters", async () => {
    const alice = await makeUser({ email: 'alice@example.com' });
    const bob = await makeUser({ email: 'bob@example.com' });
    const admin = await makeUser({ role: Role.Admin });
    const a1 = await order(alice, 'pay_method=1&amount=1');
    await order(alice, 'pay_method=1&amount=2');
    await order(alice, 'pay_method=2&amount=3');
    const b1 = await order(bob, 'pay_method=1&amount=4');

    const own = await api<{ list: { order_id: string; product: number }[]; total: number }>(
      getOrderList,
      alice,
      '/api/order/getOrderList?page=1&page_size=2',
    );
    expect(own.body.data.total).toBe(3);
    expect(own.body.data.list.map((o) => o.product)).toEqual([3, 2]);
    const page2 = await api<{ list: { order_id: string }[] }>(
      getOrderList,
      alice,
      '/api/order/getOrderList?page=2&page_size=2',
    );
    expect(page2.body.data.list.map((o) => o.order_id)).toEqual([a1.order_id]);

    const peek = await api(getOrderStatus, alice, `/api/order/getOrderStatus?order_id=${b1.order_id}`);
    expect(peek.body).toMatchObject({ success: false, message: 'Order not found' });

    expect((await api(adminOrderList, alice, '/api/order/adminOrderList')).status).toBe(403);
    const all = await api<{ list: { user_id: number }[]; total: number }>(
      adminOrderList,
      admin,
      '/api/order/adminOrderList?page=1&page_size=10',
    );
    expect(all.body.data.total).toBe(4);
    const byUser = await api<{ list: { user_id: number }[]; total: number }>(
      adminOrderList,
      admin,
      `/api/order/adminOrderList?user_id=${bob.id}`,
    );
    expect(byUser.body.data.list.map((o) => o.user_id)).toEqual([bob.id]);
    const byEmail = await api<{ total: number }>(
      adminOrderList,
      admin,
      '/api/order/adminOrderList?email=ALICE@example.com',
    );
    expect(byEmail.body.data.total).toBe(3);
    const wild = await api<{ total: number }>(adminOrderList, admin, '/api/order/adminOrderList?email=%25');
    expect(wild.body.data.total).toBe(0);
  });

  it('GET /api/product/getProductConfig answers the address list, plans and price', async () => {
    const who = await makeUser();
    const res = await api(getProductConfig, who, '/api/product/getProductConfig');
    expect(res.body).toMatchObject({
      success: true,
      data: {
        apiAddressList: '[{"url":"https://api.example.com","description":"main"}]',
        topupConfig: '[10,50]',
        productConfig: '[10,20]',
        price: 7.3,
        pay_methods: [1, 2],
      },
    });
    expect((await api(getProductConfig, null, '/api/product/getProductConfig')).status).toBe(401);
  });
});

describe('pages: /topup pay form, /topup/order/:id, bill list, /order', () => {
  function page(who: Who, path: string, form?: Record<string, string>): Request {
    return new Request(`http://localhost${path}`, {
      method: form ? 'POST' : 'GET',
      headers: { 'Accept-Language': 'en', Cookie: `sy_session=${who.session}` },
      body: form ? new URLSearchParams(form) : undefined,
    });
  }
  async function run(fn: (args: never) => unknown, request: Request, params: Record<string, string> = {}) {
    try {
      return await fn({ request, context: { services }, params } as never);
    } catch (thrown) {
      return thrown;
    }
  }
  type Reply = {
    data: { payError?: string; paid?: { order: { order_id: string; status: number }; qr: string } };
    init: { status: number } | null;
  };

  it('pays without JavaScript by a redirect to the order page, which shows the QR code as SVG', async () => {
    const who = await makeUser();
    const res = (await run(
      topupAction,
      page(who, '/topup?amount=10', { intent: 'pay', amount: '10', pay_method: '1' }),
    )) as Response;
    expect(res.status).toBe(302);
    const location = res.headers.get('Location') ?? '';
    expect(location).toMatch(/^\/topup\/order\/SY[0-9a-f]{30}$/);
    const orderId = location.split('/').pop()!;
    const view = (await run(orderPage, page(who, location), { orderId })) as {
      order: { status: number; money: number };
      qr: string;
    };
    expect(view.order).toMatchObject({ status: 0, money: 73 });
    expect(view.qr).toMatch(/^<svg[\s\S]*<path/);
    // paid: the page shows no QR code any more
    alipay.scan(orderId);
    await alipay.pay(orderId);
    const paid = (await run(orderPage, page(who, location), { orderId })) as {
      order: { status: number };
      qr: string;
    };
    expect([paid.order.status, paid.qr]).toEqual([1, '']);
    // another user gets a 404, never the order
    const other = await makeUser();
    const peek = (await run(orderPage, page(other, location), { orderId })) as { init: { status: number } };
    expect(peek.init.status).toBe(404);
  });

  it('answers the dialog data to the enhanced form (js=1) and refuses a bad amount next to the buttons', async () => {
    const who = await makeUser();
    const reply = (await run(
      topupAction,
      page(who, '/topup', { intent: 'pay', amount: '20', pay_method: '2', js: '1' }),
    )) as Reply;
    expect(reply.data.paid?.order.status).toBe(0);
    expect(reply.data.paid?.qr).toContain('<svg');
    expect(wechat.trades.get(reply.data.paid!.order.order_id)?.total).toBe(14_600);
    const bad = (await run(
      topupAction,
      page(who, '/topup', { intent: 'pay', amount: '0.5', pay_method: '1' }),
    )) as Reply;
    expect(bad.init?.status).toBe(400);
    expect(bad.data.payError).toBe('The amount must be at least $1');
  });

  it('lists the bills of the signed-in user only, paged, and offers the configured pay methods', async () => {
    const who = await makeUser();
    const other = await makeUser();
    for (let i = 1; i <= 12; i++)
      await db.orm.em
        .fork()
        .getConnection()
        .execute(
          `insert into orders (user_id, order_id, product_cents, money_cents, quota, status, created_at) values (?, ?, ?, ?, 0, 1, ?)`,
          [who.id, `SYbill${who.id}x${i}`, i * 100, i * 730, 1000 + i],
        );
    await order(other, 'pay_method=1&amount=3');
    const first = (await run(topupLoader, page(who, '/topup?dialog=bills'))) as {
      bills: { list: { order_id: string }[]; total: number; pages: number };
      payMethods: number[];
    };
    expect(first.payMethods).toEqual([1, 2]);
    expect([first.bills.total, first.bills.pages, first.bills.list.length]).toEqual([12, 2, 10]);
    expect(first.bills.list[0]!.order_id).toBe(`SYbill${who.id}x12`);
    const second = (await run(topupLoader, page(who, '/topup?dialog=bills&p=2'))) as {
      bills: { list: unknown[] };
    };
    expect(second.bills.list).toHaveLength(2);
    const plain = (await run(topupLoader, page(who, '/topup'))) as { bills: unknown };
    expect(plain.bills).toBeNull();
  });

  it('shows /order to admins only, with the user id and e-mail filters', async () => {
    const user = await makeUser({ email: 'u@example.com' });
    const admin = await makeUser({ role: Role.Admin });
    await order(user, 'pay_method=1&amount=1');
    const refused = (await run(adminOrdersPage, page(user, '/order'))) as { init: { status: number } };
    expect(refused.init.status).toBe(403);
    const all = (await run(adminOrdersPage, page(admin, '/order'))) as {
      data: { result: { total: number } };
    };
    expect(all.data.result.total).toBe(1);
    const none = (await run(adminOrdersPage, page(admin, '/order?email=nobody@example.com'))) as {
      data: { result: { total: number } };
    };
    expect(none.data.result.total).toBe(0);
    const byId = (await run(adminOrdersPage, page(admin, `/order?user_id=${user.id}`))) as {
      data: { result: { list: { user_id: number }[] } };
    };
    expect(byId.data.result.list.map((o) => o.user_id)).toEqual([user.id]);
  });
});
