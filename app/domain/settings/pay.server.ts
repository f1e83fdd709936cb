/**
 * Settings "pay" tab (seed 000 §2 "payment config", §3 Payment, §5, §9): plan and exchange rate (Price, default
 * 7.3 CNY per USD; MinTopUp >= 1 USD; ProductConfig and TopupConfig, lists of USD amounts >= 0), the Alipay and
 * WeChat Pay configuration. Keys are write-only secrets where the registry says so (private keys, APIv3 key,
 * API certificate key). Stored now; the payments issue uses them.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';

export const PAY_FORMS = [
  {
    tab: 'pay',
    id: 'payPlan',
    keys: ['Price', 'MinTopUp', 'ProductConfig', 'TopupConfig'],
    numberLists: ['ProductConfig', 'TopupConfig'],
    saved: 'payTab.saved.plan',
  },
  {
    tab: 'pay',
    id: 'alipay',
    keys: ['AlipayAppId', 'AlipayNotifyUrl', 'AlipayPrivateKey', 'AlipayPublicKey'],
    saved: 'payTab.saved.alipay',
  },
  {
    tab: 'pay',
    id: 'wechatPay',
    keys: [
      'WeChatPayAppId',
      'WeChatPayMchId',
      'WeChatPayCertSerial',
      'WeChatPayNotifyUrl',
      'WeChatPayApiV3Key',
      'WeChatPayApiCertKey',
      'WeChatPayPublicKeyId',
      'WeChatPayPublicKey',
    ],
    saved: 'payTab.saved.wechatPay',
  },
] as const satisfies readonly OptionFormSpec[];

export type PayTabData = OptionFormValues;

export function loadPayTab(
  options: Pick<OptionService, 'getRaw'>,
  viewer: Pick<SessionUser, 'role'>,
): PayTabData {
  return loadOptionForms(options, PAY_FORMS, viewer);
}
