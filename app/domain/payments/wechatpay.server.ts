/**
 * WeChat Pay API v3, Native payment (ADR 027: node:crypto, no SDK): every request signed
 * (`Authorization: WECHATPAY2-SHA256-RSA2048 mchid=..,nonce_str=..,signature=..,timestamp=..,serial_no=..` over
 * "METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n" with the merchant private key); every answer and notify checked
 * with the platform public key (Wechatpay-Signature over "TIMESTAMP\nNONCE\nBODY\n", Wechatpay-Serial naming
 * the key, the timestamp within 5 minutes); the notify's resource decrypted with AEAD_AES_256_GCM and the
 * APIv3 key.
 */
import { createDecipheriv, createSign, createVerify, randomBytes } from 'node:crypto';
import type { WeChatPayConfig } from './config.server.ts';
import { GatewayError, type GatewayTrade, type PaymentGateway, type PrecreateInput } from './gateway.ts';

/** Seconds a signed answer or notify may be off the local clock (WeChat Pay's recommendation). */
export const SIGNATURE_MAX_SKEW_SECONDS = 300;

export function signMessage(privateKey: string, message: string): string {
  return createSign('RSA-SHA256').update(message, 'utf8').sign(privateKey, 'base64');
}

export function authorizationHeader(
  config: Pick<WeChatPayConfig, 'mchId' | 'certSerial' | 'privateKey'>,
  method: string,
  pathAndQuery: string,
  body: string,
): string {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomBytes(16).toString('hex');
  const signature = signMessage(
    config.privateKey,
    `${method}\n${pathAndQuery}\n${timestamp}\n${nonce}\n${body}\n`,
  );
  return `WECHATPAY2-SHA256-RSA2048 mchid="${config.mchId}",nonce_str="${nonce}",signature="${signature}",timestamp="${timestamp}",serial_no="${config.certSerial}"`;
}

export type SignedHeaders = { timestamp: string; nonce: string; signature: string; serial: string };

export function signedHeaders(headers: Headers): SignedHeaders {
  return {
    timestamp: headers.get('Wechatpay-Timestamp') ?? '',
    nonce: headers.get('Wechatpay-Nonce') ?? '',
    signature: headers.get('Wechatpay-Signature') ?? '',
    serial: headers.get('Wechatpay-Serial') ?? '',
  };
}

/** True when the platform key signed exactly this body with these headers, recently. */
export function verifyWeChatSignature(
  config: Pick<WeChatPayConfig, 'platformPublicKey' | 'platformPublicKeyId'>,
  h: SignedHeaders,
  body: string,
  now = Date.now(),
): boolean {
  if (!h.timestamp || !h.nonce || !h.signature) return false;
  if (config.platformPublicKeyId && h.serial !== config.platformPublicKeyId) return false;
  const ts = Number(h.timestamp);
  if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > SIGNATURE_MAX_SKEW_SECONDS) return false;
  try {
    return createVerify('RSA-SHA256')
      .update(`${h.timestamp}\n${h.nonce}\n${body}\n`, 'utf8')
      .verify(config.platformPublicKey, h.signature, 'base64');
  } catch {
    return false;
  }
}

export type EncryptedResource = {
  algorithm?: string;
  ciphertext: string;
  nonce: string;
  associated_data?: string;
};

/** AEAD_AES_256_GCM with the APIv3 key; the ciphertext's last 16 bytes are the tag. Throws on tampering. */
export function decryptResource(apiV3Key: string, resource: EncryptedResource): string {
  if (resource.algorithm && resource.algorithm !== 'AEAD_AES_256_GCM')
    throw new GatewayError(`wechat pay: unsupported resource algorithm ${resource.algorithm}`);
  const data = Buffer.from(resource.ciphertext, 'base64');
  if (data.length < 17) throw new GatewayError('wechat pay: resource too short');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    Buffer.from(apiV3Key, 'utf8'),
    Buffer.from(resource.nonce, 'utf8'),
  );
  decipher.setAAD(Buffer.from(resource.associated_data ?? '', 'utf8'));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
    'utf8',
  );
}

/** RFC 3339 in Beijing time, as time_expire wants it: 2026-11-25T20:30:00+08:00 */
function rfc3339Beijing(unixSeconds: number): string {
  const d = new Date((unixSeconds + 8 * 3600) * 1000);
  return `${d.toISOString().slice(0, 19)}+08:00`;
}

/** A transaction (query answer or decrypted notify resource) to the order's view. */
export function wechatTrade(tx: Record<string, unknown>): GatewayTrade {
  const state = String(tx.trade_state ?? '');
  if (state === 'SUCCESS') {
    const amount = (tx.amount ?? {}) as { total?: unknown; currency?: unknown };
    const total = amount.total;
    if (typeof total !== 'number' || !Number.isInteger(total) || total < 0)
      throw new GatewayError('wechat pay: paid transaction without an integer amount.total');
    if (amount.currency !== undefined && amount.currency !== 'CNY')
      throw new GatewayError('wechat pay: paid transaction in another currency');
    const paid = Date.parse(String(tx.success_time ?? ''));
    return {
      state: 'paid',
      amountCents: total,
      tradeNo: String(tx.transaction_id ?? ''),
      paidAt: Number.isFinite(paid) ? Math.floor(paid / 1000) : Math.floor(Date.now() / 1000),
    };
  }
  if (state === 'CLOSED' || state === 'REVOKED' || state === 'PAYERROR') return { state: 'closed' };
  return { state: 'pending' };
}

export function createWeChatPayGateway(config: WeChatPayConfig): PaymentGateway {
  async function call(method: 'GET' | 'POST', pathAndQuery: string, payload?: unknown) {
    const body = payload === undefined ? '' : JSON.stringify(payload);
    let res: Response;
    try {
      res = await fetch(`${config.base}${pathAndQuery}`, {
        method,
        headers: {
          Authorization: authorizationHeader(config, method, pathAndQuery, body),
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: payload === undefined ? undefined : body,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new GatewayError(`wechat pay ${pathAndQuery}: ${(error as Error).message}`);
    }
    const text = await res.text();
    if (!verifyWeChatSignature(config, signedHeaders(res.headers), text))
      throw new GatewayError(
        `wechat pay ${pathAndQuery}: answer signature does not verify (HTTP ${res.status})`,
      );
    let json: Record<string, unknown> = {};
    if (text) {
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new GatewayError(`wechat pay ${pathAndQuery}: answer is not JSON`);
      }
    }
    return { status: res.status, json };
  }

  const orderPath = (orderId: string) => `/v3/pay/transactions/out-trade-no/${encodeURIComponent(orderId)}`;

  return {
    async precreate(input: PrecreateInput) {
      const { status, json } = await call('POST', '/v3/pay/transactions/native', {
        appid: config.appId,
        mchid: config.mchId,
        description: input.subject,
        out_trade_no: input.orderId,
        time_expire: rfc3339Beijing(input.expiresAt),
        notify_url: config.notifyUrl,
        amount: { total: input.moneyCents, currency: 'CNY' },
      });
      if (status !== 200 || typeof json.code_url !== 'string' || !json.code_url)
        throw new GatewayError(
          `wechat pay native refused: ${String(json.code ?? status)} ${String(json.message ?? '')}`,
          String(json.code ?? ''),
        );
      return json.code_url;
    },
    async query(orderId) {
      const { status, json } = await call(
        'GET',
        `${orderPath(orderId)}?mchid=${encodeURIComponent(config.mchId)}`,
      );
      if (status === 404 || json.code === 'ORDER_NOT_EXIST') return { state: 'missing' };
      if (status !== 200)
        throw new GatewayError(
          `wechat pay query refused: ${String(json.code ?? status)}`,
          String(json.code ?? ''),
        );
      return wechatTrade(json);
    },
    async close(orderId) {
      const { status, json } = await call('POST', `${orderPath(orderId)}/close`, { mchid: config.mchId });
      if (status === 204 || status === 200) return;
      if (json.code === 'ORDER_NOT_EXIST' || json.code === 'ORDER_CLOSED') return;
      throw new GatewayError(
        `wechat pay close refused: ${String(json.code ?? status)}`,
        String(json.code ?? ''),
      );
    },
  };
}

export type WeChatNotify = {
  id: string;
  event_type: string;
  resource: EncryptedResource;
};

/**
 * Verifies a notify (signature over the raw body) and decrypts its transaction. Null when the signature or the
 * decryption fails: the caller refuses it.
 */
export function openWeChatNotify(
  config: WeChatPayConfig,
  headers: Headers,
  body: string,
): { event: string; transaction: Record<string, unknown> } | null {
  if (!verifyWeChatSignature(config, signedHeaders(headers), body)) return null;
  try {
    const notify = JSON.parse(body) as WeChatNotify;
    if (!notify?.resource?.ciphertext || !notify.resource.nonce) return null;
    const plain = decryptResource(config.apiV3Key, notify.resource);
    return {
      event: String(notify.event_type ?? ''),
      transaction: JSON.parse(plain) as Record<string, unknown>,
    };
  } catch {
    return null;
  }
}
