/** Namespace 'wallet' (the /topup page) in Chinese (default and fallback). en/wallet.ts has exactly these keys. */
const wallet = {
  title: '钱包',
  balance: {
    heading: '账户余额',
    current: '当前余额',
    used: '历史消耗',
    requests: '请求次数',
  },
  redeem: {
    heading: '兑换码充值',
    label: '兑换码',
    placeholder: '请输入兑换码',
    submit: '兑换余额',
    submitting: '兑换中…',
    buy: '购买兑换码',
    buyHint: '兑换码可在这里获取：',
  },
  online: {
    heading: '在线充值',
    disabled: '管理员未开启在线充值',
    presets: '选择金额',
    amount: '充值金额（美元）',
    min: '最低充值 {{min}}',
    calculate: '计算实付金额',
    payable: '实付金额：{{payable}}',
    unavailable: '此服务器暂不支持在线支付（支付宝 / 微信支付），请使用兑换码充值。',
  },
  toast: {
    redeemed: '兑换成功！已充值 {{amount}}',
  },
  errors: {
    unauthorized: '未登录或登录已过期，请重新登录',
    unknownIntent: '未知操作',
    amountInvalid: '金额不正确',
    amountBelowMin: '充值金额不能低于 {{min}}',
  },
};

export type WalletResources = typeof wallet;
export default wallet;
