/** Settings "pay" tab (seed 000 §2): plans and exchange rate, Alipay, WeChat Pay; one form each (ADR 023). */
import { useTranslation } from 'react-i18next';
import {
  OptionForm,
  OptionInput,
  OptionNumberList,
  OptionSecret,
  OptionTextArea,
} from '#app/components/settings/option-form.tsx';
import type { PayTabData } from '#app/domain/settings/pay.server.ts';

export function PayTab({ data }: { data: PayTabData }) {
  const { t } = useTranslation('settings');
  return (
    <div className="settings-grid pay-tab">
      <OptionForm
        tab="pay"
        id="payPlan"
        title={t('payTab.plan')}
        data={data}
        saveLabel={t('payTab.savePlan')}
      >
        <OptionInput
          name="Price"
          type="number"
          min={0}
          step={0.01}
          label={t('payTab.price')}
          help={t('payTab.priceHelp')}
        />
        <OptionInput
          name="MinTopUp"
          type="number"
          min={1}
          step={1}
          label={t('payTab.minTopUp')}
          help={t('payTab.minTopUpHelp')}
        />
        <OptionNumberList
          name="ProductConfig"
          label={t('payTab.productConfig')}
          help={t('payTab.listHelp')}
        />
        <OptionNumberList name="TopupConfig" label={t('payTab.topupConfig')} help={t('payTab.listHelp')} />
      </OptionForm>
      <OptionForm
        tab="pay"
        id="alipay"
        title={t('payTab.alipay')}
        data={data}
        saveLabel={t('payTab.saveAlipay')}
      >
        <OptionInput name="AlipayAppId" label={t('payTab.alipayAppId')} />
        <OptionInput name="AlipayNotifyUrl" type="url" label={t('payTab.alipayNotifyUrl')} />
        <OptionSecret name="AlipayPrivateKey" label={t('payTab.alipayPrivateKey')} />
        <OptionSecret name="AlipayPublicKey" label={t('payTab.alipayPublicKey')} />
      </OptionForm>
      <OptionForm
        tab="pay"
        id="wechatPay"
        title={t('payTab.wechatPay')}
        data={data}
        saveLabel={t('payTab.saveWechatPay')}
      >
        <OptionInput name="WeChatPayAppId" label={t('payTab.wechatPayAppId')} />
        <OptionInput name="WeChatPayMchId" label={t('payTab.wechatPayMchId')} />
        <OptionInput name="WeChatPayCertSerial" label={t('payTab.wechatPayCertSerial')} />
        <OptionInput name="WeChatPayNotifyUrl" type="url" label={t('payTab.wechatPayNotifyUrl')} />
        <OptionSecret name="WeChatPayApiV3Key" label={t('payTab.wechatPayApiV3Key')} />
        <OptionSecret name="WeChatPayApiCertKey" label={t('payTab.wechatPayApiCertKey')} />
        <OptionInput name="WeChatPayPublicKeyId" label={t('payTab.wechatPayPublicKeyId')} />
        <OptionTextArea name="WeChatPayPublicKey" label={t('payTab.wechatPayPublicKey')} />
      </OptionForm>
    </div>
  );
}
