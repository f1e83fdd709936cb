/**
 * Payment configuration (ADR 027): the pay tab's options (seed 000 §3 Payment) turned into one config per pay
 * method, or null when that method is not fully configured, and the gateway addresses from the environment
 * (ALIPAY_GATEWAY_URL, WECHATPAY_API_URL; tests point them at the loopback fakes).
 */
import { PayMethod } from '@switchyard/db/entities/order.ts';

export type PaymentEnv = {
  /** Alipay's OpenAPI gateway (the classic `gateway.do` endpoint the face-to-face calls use) */
  alipayGateway: string;
  /** WeChat Pay API v3 base URL */
  wechatPayBase: string;
  /** a pending order is closed (here and at the gateway) this many seconds after creation */
  orderTimeoutSeconds: number;
};

export const DEFAULT_PAYMENT_ENV: PaymentEnv = {
  alipayGateway: 'https://openapi.alipay.com/gateway.do',
  wechatPayBase: 'https://api.mch.weixin.qq.com',
  orderTimeoutSeconds: 30 * 60,
};

export type OptionReader = { get(key: string): unknown };

function str(options: OptionReader, key: string): string {
  const value = options.get(key);
  return typeof value === 'string' ? value.trim() : '';
}

export type AlipayConfig = {
  appId: string;
  privateKey: string;
  alipayPublicKey: string;
  notifyUrl: string;
  gateway: string;
};

export type WeChatPayConfig = {
  appId: string;
  mchId: string;
  /** serial number of the merchant API certificate (sent in every request's Authorization) */
  certSerial: string;
  apiV3Key: string;
  /** the merchant API private key (WeChatPayApiCertKey), PEM */
  privateKey: string;
  /** WeChat Pay's platform public key, PEM: verifies answers and notifies */
  platformPublicKey: string;
  /** its id (PUB_KEY_ID_...); answers and notifies name it in Wechatpay-Serial */
  platformPublicKeyId: string;
  notifyUrl: string;
  base: string;
};

export function alipayConfig(options: OptionReader, env: PaymentEnv): AlipayConfig | null {
  const config = {
    appId: str(options, 'AlipayAppId'),
    privateKey: str(options, 'AlipayPrivateKey'),
    alipayPublicKey: str(options, 'AlipayPublicKey'),
    notifyUrl: str(options, 'AlipayNotifyUrl'),
    gateway: env.alipayGateway,
  };
  return config.appId && config.privateKey && config.alipayPublicKey && config.notifyUrl ? config : null;
}

export function wechatPayConfig(options: OptionReader, env: PaymentEnv): WeChatPayConfig | null {
  const config = {
    appId: str(options, 'WeChatPayAppId'),
    mchId: str(options, 'WeChatPayMchId'),
    certSerial: str(options, 'WeChatPayCertSerial'),
    apiV3Key: str(options, 'WeChatPayApiV3Key'),
    privateKey: str(options, 'WeChatPayApiCertKey'),
    platformPublicKey: str(options, 'WeChatPayPublicKey'),
    platformPublicKeyId: str(options, 'WeChatPayPublicKeyId'),
    notifyUrl: str(options, 'WeChatPayNotifyUrl'),
    base: env.wechatPayBase.replace(/\/+$/, ''),
  };
  const complete = Object.entries(config).every(([k, v]) => k === 'platformPublicKeyId' || v !== '');
  return complete && config.apiV3Key.length === 32 ? config : null;
}

/** The pay methods an order can be created with now. */
export function enabledPayMethods(options: OptionReader, env: PaymentEnv = DEFAULT_PAYMENT_ENV): PayMethod[] {
  const methods: PayMethod[] = [];
  if (alipayConfig(options, env)) methods.push(PayMethod.Alipay);
  if (wechatPayConfig(options, env)) methods.push(PayMethod.WeChatPay);
  return methods;
}
