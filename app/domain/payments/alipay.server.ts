/**
 * Alipay face-to-face payment (当面付) through the official `alipay-sdk`: alipay.trade.precreate (QR code),
 * alipay.trade.query, alipay.trade.close, each request RSA2-signed with the app private key and each answer's
 * `sign` verified with the Alipay public key (validateSign); the asynchronous notify verified with the same key
 * (checkNotifySignV2: every parameter but sign and sign_type, sorted, joined as k=v with &, RSA-SHA256).
 */
import { AlipaySdk } from 'alipay-sdk';
import type { AlipayConfig } from './config.server.ts';
import { GatewayError, type GatewayTrade, type PaymentGateway, type PrecreateInput } from './gateway.ts';
import { formatCents, parseCents } from './money.ts';

function sdkFor(config: AlipayConfig): AlipaySdk {
  const pkcs8 = config.privateKey.includes('BEGIN PRIVATE KEY');
  return new AlipaySdk({
    appId: config.appId,
    privateKey: config.privateKey,
    alipayPublicKey: config.alipayPublicKey,
    gateway: config.gateway,
    signType: 'RSA2',
    keyType: pkcs8 ? 'PKCS8' : 'PKCS1',
    camelcase: false,
    timeout: 10_000,
  });
}

type AlipayAnswer = Record<string, unknown> & {
  code?: string;
  msg?: string;
  sub_code?: string;
  sub_msg?: string;
};

async function exec(sdk: AlipaySdk, method: string, params: Record<string, unknown>): Promise<AlipayAnswer> {
  try {
    return (await sdk.exec(method, params, { validateSign: true })) as AlipayAnswer;
  } catch (error) {
    throw new GatewayError(`alipay ${method}: ${(error as Error).message.slice(0, 300)}`);
  }
}

/** Alipay's times are Beijing time 'yyyy-MM-dd HH:mm:ss'. */
function beijingSeconds(text: unknown): number {
  if (typeof text !== 'string') return Math.floor(Date.now() / 1000);
  const ms = Date.parse(`${text.replace(' ', 'T')}+08:00`);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : Math.floor(Date.now() / 1000);
}

/** Trade statuses (alipay.trade.query / notify trade_status) to the order's view. */
export function alipayTrade(answer: Record<string, unknown>): GatewayTrade {
  const status = String(answer.trade_status ?? '');
  if (status === 'TRADE_SUCCESS' || status === 'TRADE_FINISHED') {
    const amountCents = parseCents(String(answer.total_amount ?? ''));
    if (amountCents === null) throw new GatewayError('alipay: paid trade without a readable total_amount');
    return {
      state: 'paid',
      amountCents,
      tradeNo: String(answer.trade_no ?? ''),
      paidAt: beijingSeconds(answer.gmt_payment ?? answer.send_pay_date),
    };
  }
  if (status === 'TRADE_CLOSED') return { state: 'closed' };
  return { state: 'pending' };
}

export function createAlipayGateway(config: AlipayConfig): PaymentGateway {
  const sdk = sdkFor(config);
  return {
    async precreate(input: PrecreateInput) {
      const minutes = Math.max(1, Math.floor((input.expiresAt - Date.now() / 1000) / 60));
      const answer = await exec(sdk, 'alipay.trade.precreate', {
        notify_url: config.notifyUrl,
        bizContent: {
          out_trade_no: input.orderId,
          total_amount: formatCents(input.moneyCents),
          subject: input.subject,
          timeout_express: `${minutes}m`,
        },
      });
      if (answer.code !== '10000' || typeof answer.qr_code !== 'string' || !answer.qr_code)
        throw new GatewayError(
          `alipay precreate refused: ${answer.sub_code ?? answer.code} ${answer.sub_msg ?? answer.msg ?? ''}`,
          String(answer.sub_code ?? answer.code ?? ''),
        );
      return answer.qr_code;
    },
    async query(orderId) {
      const answer = await exec(sdk, 'alipay.trade.query', { bizContent: { out_trade_no: orderId } });
      if (answer.code === '40004' && answer.sub_code === 'ACQ.TRADE_NOT_EXIST') return { state: 'missing' };
      if (answer.code !== '10000')
        throw new GatewayError(
          `alipay query refused: ${answer.sub_code ?? answer.code}`,
          String(answer.sub_code ?? ''),
        );
      return alipayTrade(answer);
    },
    async close(orderId) {
      const answer = await exec(sdk, 'alipay.trade.close', { bizContent: { out_trade_no: orderId } });
      if (answer.code === '10000') return;
      if (answer.code === '40004' && answer.sub_code === 'ACQ.TRADE_NOT_EXIST') return;
      throw new GatewayError(
        `alipay close refused: ${answer.sub_code ?? answer.code}`,
        String(answer.sub_code ?? ''),
      );
    },
  };
}

/** The notify's parameters (form fields) verified with the Alipay public key; false on any mismatch. */
export function verifyAlipayNotify(config: AlipayConfig, params: Record<string, string>): boolean {
  if (!params.sign) return false;
  if (params.sign_type && params.sign_type !== 'RSA2') return false;
  try {
    return sdkFor(config).checkNotifySignV2(params);
  } catch {
    return false;
  }
}
