/** What the order logic needs from a payment gateway (Alipay face-to-face, WeChat Pay Native). */

export type GatewayTrade =
  /** the gateway has no such trade (never scanned, or unknown) */
  | { state: 'missing' }
  | { state: 'pending' }
  | { state: 'closed' }
  | { state: 'paid'; amountCents: number; tradeNo: string; paidAt: number };

export type PrecreateInput = {
  orderId: string;
  moneyCents: number;
  subject: string;
  /** unix seconds the gateway closes the trade itself */
  expiresAt: number;
};

export interface PaymentGateway {
  /** creates the trade; answers the QR content (code_url) */
  precreate(input: PrecreateInput): Promise<string>;
  query(orderId: string): Promise<GatewayTrade>;
  /** closes an unpaid trade; a trade the gateway does not know counts as closed */
  close(orderId: string): Promise<void>;
}

/** A gateway call failed (transport, refused, or an answer whose signature does not verify). */
export class GatewayError extends Error {
  readonly code: string;
  constructor(message: string, code = '') {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
  }
}
