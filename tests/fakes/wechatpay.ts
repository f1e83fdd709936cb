/**
 * A fake of WeChat Pay API v3 (Native payment), implementing the documented wire format so the product's real
 * signing, verification and decryption run against it:
 * - requests carry `Authorization: WECHATPAY2-SHA256-RSA2048 mchid="..",nonce_str="..",signature="..",
 *   timestamp="..",serial_no=".."`; the signature (RSA-SHA256, merchant private key) covers
 *   "METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n" and is verified with the merchant public key; an unsigned or
 *   forged request gets 401 {code: SIGN_ERROR};
 * - every answer is signed by the platform key: Wechatpay-Timestamp, -Nonce, -Serial (the public key id) and
 *   -Signature over "TIMESTAMP\nNONCE\nBODY\n";
 * - POST /v3/pay/transactions/native -> {code_url}; GET /v3/pay/transactions/out-trade-no/{no}?mchid= ->
 *   the transaction (trade_state NOTPAY / SUCCESS / CLOSED) or 404 ORDER_NOT_EXIST; POST .../{no}/close -> 204;
 * - notifies: POST to notify_url, JSON {id, create_time, event_type: TRANSACTION.SUCCESS, resource_type,
 *   resource: {algorithm: AEAD_AES_256_GCM, ciphertext, nonce, associated_data, original_type}, summary},
 *   the transaction encrypted with the APIv3 key (ciphertext = data || 16-byte tag, base64), headers signed
 *   like answers; the merchant answers 200/204 on success.
 */
import { createCipheriv, createSign, createVerify, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RsaPair, rsaPair } from './alipay.ts';

export type WeChatFakeTrade = {
  outTradeNo: string;
  total: number;
  description: string;
  notifyUrl: string;
  state: 'NOTPAY' | 'SUCCESS' | 'CLOSED';
  transactionId: string;
  successTime: string;
};

export type WeChatPayFake = {
  baseUrl: string;
  /** POST {controlUrl}/pay?out_trade_no=&times= drives the fake from another process */
  controlUrl: string;
  appId: string;
  mchId: string;
  /** merchant API certificate serial (WeChatPayCertSerial) */
  certSerial: string;
  /** 32 characters (WeChatPayApiV3Key) */
  apiV3Key: string;
  merchant: RsaPair;
  platform: RsaPair;
  /** WeChatPayPublicKeyId */
  platformKeyId: string;
  trades: Map<string, WeChatFakeTrade>;
  calls: { path: string; verified: boolean }[];
  /** the buyer pays; the notify goes out `times` times concurrently; answers the merchant's HTTP statuses */
  pay(outTradeNo: string, opts?: { times?: number }): Promise<number[]>;
  /** a notify with transaction fields overridden, optionally signed with another key */
  notify(
    outTradeNo: string,
    opts?: { transaction?: Record<string, unknown>; signWith?: string; apiV3Key?: string },
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
};

function sign(privateKey: string, message: string): string {
  return createSign('RSA-SHA256').update(message, 'utf8').sign(privateKey, 'base64');
}

function rfc3339Beijing(): string {
  return `${new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 19)}+08:00`;
}

export function encryptResource(apiV3Key: string, plaintext: string, associatedData = 'transaction') {
  const nonce = randomBytes(6).toString('hex');
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    original_type: 'transaction',
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext: data.toString('base64'),
    associated_data: associatedData,
    nonce,
  };
}

export async function startWeChatPayFake(): Promise<WeChatPayFake> {
  const appId = `wx${randomBytes(8).toString('hex')}`;
  const mchId = String(1_600_000_000 + Math.floor(Math.random() * 99_999_999));
  const certSerial = randomBytes(20).toString('hex').toUpperCase();
  const apiV3Key = randomBytes(16).toString('hex');
  const merchant = rsaPair();
  const platform = rsaPair();
  const platformKeyId = `PUB_KEY_ID_${randomBytes(12).toString('hex').toUpperCase()}`;
  const trades = new Map<string, WeChatFakeTrade>();
  const calls: WeChatPayFake['calls'] = [];
  let seq = 0;

  function signedHeaders(body: string, key = platform.privateKey): Record<string, string> {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(16).toString('hex');
    return {
      'Wechatpay-Timestamp': timestamp,
      'Wechatpay-Nonce': nonce,
      'Wechatpay-Serial': platformKeyId,
      'Wechatpay-Signature': sign(key, `${timestamp}\n${nonce}\n${body}\n`),
      'Request-ID': randomBytes(8).toString('hex'),
    };
  }

  function verifyRequest(method: string, pathAndQuery: string, body: string, auth: string): boolean {
    const m = /^WECHATPAY2-SHA256-RSA2048 (.*)$/.exec(auth);
    if (!m) return false;
    const fields = Object.fromEntries(
      [...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!] as [string, string]),
    );
    if (fields.mchid !== mchId || fields.serial_no !== certSerial) return false;
    if (Math.abs(Date.now() / 1000 - Number(fields.timestamp)) > 300) return false;
    try {
      return createVerify('RSA-SHA256')
        .update(`${method}\n${pathAndQuery}\n${fields.timestamp}\n${fields.nonce_str}\n${body}\n`, 'utf8')
        .verify(merchant.publicKey, fields.signature ?? '', 'base64');
    } catch {
      return false;
    }
  }

  function transaction(trade: WeChatFakeTrade, extra: Record<string, unknown> = {}) {
    return {
      appid: appId,
      mchid: mchId,
      out_trade_no: trade.outTradeNo,
      transaction_id: trade.transactionId,
      trade_type: 'NATIVE',
      trade_state: trade.state,
      trade_state_desc: trade.state === 'SUCCESS' ? '支付成功' : trade.state,
      bank_type: 'OTHERS',
      attach: '',
      ...(trade.successTime ? { success_time: trade.successTime } : {}),
      payer: { openid: 'oFAKE' },
      amount: { total: trade.total, payer_total: trade.total, currency: 'CNY', payer_currency: 'CNY' },
      ...extra,
    };
  }

  function route(method: string, pathAndQuery: string, body: string): { status: number; json?: unknown } {
    const url = new URL(pathAndQuery, 'http://x');
    if (method === 'POST' && url.pathname === '/v3/pay/transactions/native') {
      const req = JSON.parse(body || '{}') as {
        appid?: string;
        mchid?: string;
        description?: string;
        out_trade_no?: string;
        notify_url?: string;
        amount?: { total?: number; currency?: string };
      };
      if (req.appid !== appId || req.mchid !== mchId)
        return { status: 400, json: { code: 'PARAM_ERROR', message: 'appid and mchid do not match' } };
      const total = req.amount?.total;
      if (
        !req.out_trade_no ||
        !req.description ||
        !req.notify_url ||
        !Number.isInteger(total) ||
        (total ?? 0) < 1
      )
        return { status: 400, json: { code: 'PARAM_ERROR', message: 'missing or bad parameter' } };
      if (!/^[0-9A-Za-z_\-|*]{6,32}$/.test(req.out_trade_no))
        return { status: 400, json: { code: 'PARAM_ERROR', message: 'out_trade_no format' } };
      const existing = trades.get(req.out_trade_no);
      if (existing && existing.total !== total)
        return { status: 400, json: { code: 'INVALID_REQUEST', message: 'out_trade_no reused' } };
      seq += 1;
      trades.set(req.out_trade_no, {
        outTradeNo: req.out_trade_no,
        total: total as number,
        description: req.description,
        notifyUrl: req.notify_url,
        state: 'NOTPAY',
        transactionId: `4200${String(Date.now()).slice(-10)}${String(seq).padStart(8, '0')}`,
        successTime: '',
      });
      return {
        status: 200,
        json: { code_url: `weixin://wxpay/bizpayurl?pr=${randomBytes(5).toString('hex')}` },
      };
    }
    const m = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)(\/close)?$/.exec(url.pathname);
    if (m) {
      const trade = trades.get(decodeURIComponent(m[1]!));
      if (!m[2] && method === 'GET') {
        if (url.searchParams.get('mchid') !== mchId)
          return { status: 400, json: { code: 'PARAM_ERROR', message: 'mchid' } };
        if (!trade)
          return { status: 404, json: { code: 'ORDER_NOT_EXIST', message: 'order does not exist' } };
        return { status: 200, json: transaction(trade) };
      }
      if (m[2] && method === 'POST') {
        if (!trade)
          return { status: 404, json: { code: 'ORDER_NOT_EXIST', message: 'order does not exist' } };
        if (trade.state === 'SUCCESS')
          return { status: 400, json: { code: 'ORDERPAID', message: 'order paid' } };
        trade.state = 'CLOSED';
        return { status: 204 };
      }
    }
    return { status: 404, json: { code: 'NOT_FOUND', message: 'no such API' } };
  }

  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const control = new URL(req.url ?? '/', 'http://x');
      if (method === 'POST' && control.pathname === '/__control/pay') {
        // Test control over HTTP (the e2e product runs in another process): the buyer pays.
        const outTradeNo = control.searchParams.get('out_trade_no') ?? '';
        fake.pay(outTradeNo, { times: Number(control.searchParams.get('times') ?? 1) }).then(
          (statuses) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ statuses }));
          },
          (error: Error) => {
            res.writeHead(409, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: error.message }));
          },
        );
        return;
      }
      const pathAndQuery = req.url ?? '/';
      const verified = verifyRequest(method, pathAndQuery, body, String(req.headers.authorization ?? ''));
      calls.push({ path: pathAndQuery, verified });
      const out = verified
        ? route(method, pathAndQuery, body)
        : { status: 401, json: { code: 'SIGN_ERROR', message: 'signature verification failed' } };
      const text = out.json === undefined ? '' : JSON.stringify(out.json);
      res.writeHead(out.status, {
        ...(text ? { 'content-type': 'application/json' } : {}),
        ...signedHeaders(text),
      });
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  async function send(
    trade: WeChatFakeTrade,
    o: { transaction?: Record<string, unknown>; signWith?: string; apiV3Key?: string } = {},
  ) {
    const body = JSON.stringify({
      id: randomBytes(16).toString('hex'),
      create_time: rfc3339Beijing(),
      resource_type: 'encrypt-resource',
      event_type: 'TRANSACTION.SUCCESS',
      summary: '支付成功',
      resource: encryptResource(o.apiV3Key ?? apiV3Key, JSON.stringify(transaction(trade, o.transaction))),
    });
    const res = await fetch(trade.notifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(body, o.signWith) },
      body,
    });
    return { status: res.status, body: await res.text() };
  }

  function tradeOf(outTradeNo: string): WeChatFakeTrade {
    const trade = trades.get(outTradeNo);
    if (!trade) throw new Error(`wechat pay fake: no trade ${outTradeNo}`);
    return trade;
  }

  const fake: WeChatPayFake = {
    baseUrl: `http://127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${port}/__control`,
    appId,
    mchId,
    certSerial,
    apiV3Key,
    merchant,
    platform,
    platformKeyId,
    trades,
    calls,
    async pay(outTradeNo, o = {}) {
      const trade = tradeOf(outTradeNo);
      if (trade.state === 'CLOSED') throw new Error('wechat pay fake: the trade is closed');
      trade.state = 'SUCCESS';
      trade.successTime = rfc3339Beijing();
      const results = await Promise.all(Array.from({ length: o.times ?? 1 }, () => send(trade)));
      return results.map((r) => r.status);
    },
    notify(outTradeNo, o = {}) {
      return send(tradeOf(outTradeNo), o);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return fake;
}
