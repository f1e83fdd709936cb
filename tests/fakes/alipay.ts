/**
 * A fake of Alipay's OpenAPI gateway (`gateway.do`) for face-to-face payment, implementing the documented wire
 * format so the product's real signing and verification code runs against it:
 * - requests: common parameters in the query string (app_id, method, charset, sign_type, sign, timestamp,
 *   version, notify_url), biz_content in the form body; the RSA2 `sign` covers every parameter but `sign`,
 *   sorted by name, joined as `k=v` with `&` (raw values), verified with the merchant (app) public key;
 * - answers: `{"<method with _>_response": {...}, "sign": "..."}` where sign is RSA-SHA256 over the exact JSON
 *   text of the response object, with the Alipay (platform) private key;
 * - alipay.trade.precreate -> qr_code; alipay.trade.query (ACQ.TRADE_NOT_EXIST until the buyer scans);
 *   alipay.trade.close;
 * - asynchronous notifies: a form POST to the trade's notify_url, signed over every parameter but sign and
 *   sign_type; the merchant answers the text `success`.
 */
import { createSign, createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RsaPair = { privateKey: string; publicKey: string };

/** An RSA-2048 pair as PEM (PKCS#8 private, SPKI public), generated per test run. */
export function rsaPair(): RsaPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

export type AlipayTradeState = 'CREATED' | 'WAIT_BUYER_PAY' | 'TRADE_SUCCESS' | 'TRADE_CLOSED';

export type AlipayFakeTrade = {
  outTradeNo: string;
  totalAmount: string;
  subject: string;
  notifyUrl: string;
  state: AlipayTradeState;
  tradeNo: string;
  paidAt: string;
};

export type AlipayFake = {
  /** the gateway URL the product is configured with (ALIPAY_GATEWAY_URL) */
  gatewayUrl: string;
  /** POST {controlUrl}/scan|pay|trade?out_trade_no=&times= drives the fake from another process */
  controlUrl: string;
  appId: string;
  /** the merchant's key pair (AlipayPrivateKey is its private half) */
  merchant: RsaPair;
  /** the platform's key pair (AlipayPublicKey is its public half) */
  platform: RsaPair;
  trades: Map<string, AlipayFakeTrade>;
  /** every call received: method name and whether its signature verified */
  calls: { method: string; verified: boolean }[];
  /** the buyer scans the QR code: the trade now exists at the gateway */
  scan(outTradeNo: string): void;
  /**
   * The buyer pays: the trade becomes TRADE_SUCCESS and the notify is sent `times` times concurrently (0: none,
   * the merchant must query). Answers the merchant's response bodies.
   */
  pay(outTradeNo: string, opts?: { times?: number }): Promise<string[]>;
  /** sends a notify for a trade with fields overridden, optionally signed with another key (forgery) */
  notify(
    outTradeNo: string,
    opts?: { fields?: Record<string, string>; signWith?: string; notifyUrl?: string },
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
};

function signContent(params: Record<string, string>, exclude: string[]): string {
  return Object.keys(params)
    .filter((k) => !exclude.includes(k) && params[k] !== undefined && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

function rsa2(privateKey: string, content: string): string {
  return createSign('RSA-SHA256').update(content, 'utf8').sign(privateKey, 'base64');
}

/** Beijing time 'yyyy-MM-dd HH:mm:ss' */
function beijingNow(): string {
  return new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}

export async function startAlipayFake(opts: { appId?: string } = {}): Promise<AlipayFake> {
  const appId = opts.appId ?? `2021${randomBytes(6).toString('hex').replace(/[a-f]/g, '7').slice(0, 12)}`;
  const merchant = rsaPair();
  const platform = rsaPair();
  const trades = new Map<string, AlipayFakeTrade>();
  const calls: AlipayFake['calls'] = [];
  let seq = 0;

  function answer(method: string, body: Record<string, unknown>): string {
    const key = `${method.replaceAll('.', '_')}_response`;
    const inner = JSON.stringify(body);
    return `{"${key}":${inner},"sign":"${rsa2(platform.privateKey, inner)}"}`;
  }

  function handle(params: Record<string, string>): string {
    const method = params.method ?? '';
    const verified =
      !!params.sign &&
      params.app_id === appId &&
      params.sign_type === 'RSA2' &&
      createVerify('RSA-SHA256')
        .update(signContent(params, ['sign']), 'utf8')
        .verify(merchant.publicKey, params.sign, 'base64');
    calls.push({ method, verified });
    if (!verified)
      return answer(method, {
        code: '40002',
        msg: 'Invalid Arguments',
        sub_code: 'isv.invalid-signature',
        sub_msg: 'invalid signature',
      });
    let biz: Record<string, string> = {};
    try {
      biz = JSON.parse(params.biz_content ?? '{}') as Record<string, string>;
    } catch {
      return answer(method, { code: '40002', msg: 'Invalid Arguments', sub_code: 'isv.invalid-parameter' });
    }
    const outTradeNo = String(biz.out_trade_no ?? '');
    const trade = trades.get(outTradeNo);
    const notExist = {
      code: '40004',
      msg: 'Business Failed',
      sub_code: 'ACQ.TRADE_NOT_EXIST',
      sub_msg: 'trade does not exist',
    };
    if (method === 'alipay.trade.precreate') {
      if (!outTradeNo || !/^\d+(\.\d{1,2})?$/.test(String(biz.total_amount ?? '')) || !biz.subject)
        return answer(method, { code: '40002', msg: 'Invalid Arguments', sub_code: 'isv.missing-parameter' });
      if (trade && trade.totalAmount !== biz.total_amount)
        return answer(method, {
          code: '40004',
          msg: 'Business Failed',
          sub_code: 'ACQ.CONTEXT_INCONSISTENT',
        });
      seq += 1;
      trades.set(outTradeNo, {
        outTradeNo,
        totalAmount: String(biz.total_amount),
        subject: String(biz.subject),
        notifyUrl: params.notify_url ?? '',
        state: 'CREATED',
        tradeNo: `2026${String(Date.now()).slice(-10)}${String(seq).padStart(6, '0')}`,
        paidAt: '',
      });
      return answer(method, {
        code: '10000',
        msg: 'Success',
        out_trade_no: outTradeNo,
        qr_code: `https://qr.alipay.com/bax${randomBytes(10).toString('hex')}`,
      });
    }
    if (method === 'alipay.trade.query') {
      if (!trade || trade.state === 'CREATED') return answer(method, notExist);
      return answer(method, {
        code: '10000',
        msg: 'Success',
        trade_no: trade.tradeNo,
        out_trade_no: trade.outTradeNo,
        trade_status: trade.state,
        total_amount: trade.totalAmount,
        ...(trade.paidAt ? { send_pay_date: trade.paidAt } : {}),
      });
    }
    if (method === 'alipay.trade.close') {
      if (!trade || trade.state === 'CREATED') {
        if (trade) trade.state = 'TRADE_CLOSED';
        return answer(method, notExist);
      }
      if (trade.state === 'TRADE_SUCCESS')
        return answer(method, { code: '40004', msg: 'Business Failed', sub_code: 'ACQ.TRADE_STATUS_ERROR' });
      trade.state = 'TRADE_CLOSED';
      return answer(method, {
        code: '10000',
        msg: 'Success',
        trade_no: trade.tradeNo,
        out_trade_no: outTradeNo,
      });
    }
    return answer(method, { code: '40004', msg: 'Business Failed', sub_code: 'isv.invalid-method' });
  }

  async function control(action: string, params: Record<string, string>): Promise<unknown> {
    const outTradeNo = params.out_trade_no ?? '';
    if (action === 'scan') {
      fake.scan(outTradeNo);
      return { ok: true };
    }
    if (action === 'pay')
      return { answers: await fake.pay(outTradeNo, { times: Number(params.times ?? 1) }) };
    if (action === 'trade') return trades.get(outTradeNo) ?? null;
    throw new Error(`unknown control ${action}`);
  }

  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const params: Record<string, string> = {
        ...Object.fromEntries(url.searchParams),
        ...Object.fromEntries(new URLSearchParams(body)),
      };
      if (req.method === 'POST' && url.pathname.startsWith('/__control/')) {
        // Test control over HTTP (the e2e product runs in another process): scan / pay a trade.
        control(url.pathname.slice('/__control/'.length), params).then(
          (out) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(out));
          },
          (error: Error) => {
            res.writeHead(409, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: error.message }));
          },
        );
        return;
      }
      const text = req.method === 'POST' && url.pathname === '/gateway.do' ? handle(params) : '';
      res.writeHead(text ? 200 : 404, { 'content-type': 'application/json;charset=utf-8' });
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  function notifyParams(trade: AlipayFakeTrade, fields: Record<string, string> = {}): Record<string, string> {
    return {
      notify_time: beijingNow(),
      notify_type: 'trade_status_sync',
      notify_id: randomBytes(16).toString('hex'),
      app_id: appId,
      charset: 'utf-8',
      version: '1.0',
      sign_type: 'RSA2',
      trade_no: trade.tradeNo,
      out_trade_no: trade.outTradeNo,
      trade_status: trade.state,
      total_amount: trade.totalAmount,
      receipt_amount: trade.totalAmount,
      buyer_pay_amount: trade.totalAmount,
      subject: trade.subject,
      gmt_create: beijingNow(),
      ...(trade.paidAt ? { gmt_payment: trade.paidAt } : {}),
      ...fields,
    };
  }

  async function send(
    trade: AlipayFakeTrade,
    o: { fields?: Record<string, string>; signWith?: string; notifyUrl?: string } = {},
  ) {
    const params = notifyParams(trade, o.fields);
    params.sign = rsa2(o.signWith ?? platform.privateKey, signContent(params, ['sign', 'sign_type']));
    const res = await fetch(o.notifyUrl ?? trade.notifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: await res.text() };
  }

  function tradeOf(outTradeNo: string): AlipayFakeTrade {
    const trade = trades.get(outTradeNo);
    if (!trade) throw new Error(`alipay fake: no trade ${outTradeNo}`);
    return trade;
  }

  const fake: AlipayFake = {
    gatewayUrl: `http://127.0.0.1:${port}/gateway.do`,
    controlUrl: `http://127.0.0.1:${port}/__control`,
    appId,
    merchant,
    platform,
    trades,
    calls,
    scan(outTradeNo) {
      const trade = tradeOf(outTradeNo);
      if (trade.state === 'CREATED') trade.state = 'WAIT_BUYER_PAY';
    },
    async pay(outTradeNo, o = {}) {
      const trade = tradeOf(outTradeNo);
      if (trade.state === 'TRADE_CLOSED') throw new Error('alipay fake: the trade is closed');
      trade.state = 'TRADE_SUCCESS';
      trade.paidAt = beijingNow();
      const times = o.times ?? 1;
      const results = await Promise.all(Array.from({ length: times }, () => send(trade)));
      return results.map((r) => r.body);
    },
    notify(outTradeNo, o = {}) {
      return send(tradeOf(outTradeNo), o);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return fake;
}
