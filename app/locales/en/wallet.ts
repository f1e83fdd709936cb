import type { WalletResources } from '#app/locales/zh/wallet.ts';

const wallet: WalletResources = {
  title: 'Wallet',
  balance: {
    heading: 'Balance',
    current: 'Current balance',
    used: 'Used',
    requests: 'Requests',
  },
  redeem: {
    heading: 'Redeem a code',
    label: 'Redemption code',
    placeholder: 'Enter a redemption code',
    submit: 'Redeem',
    submitting: 'Redeeming…',
    buy: 'Buy redemption codes',
    buyHint: 'Codes can be bought here:',
  },
  online: {
    heading: 'Online top-up',
    disabled: 'Online top-up is not enabled',
    presets: 'Choose an amount',
    amount: 'Amount (USD)',
    min: 'Minimum top-up {{min}}',
    calculate: 'Calculate payable amount',
    payable: 'Payable: {{payable}}',
    unavailable:
      'Online payment (Alipay / WeChat Pay) is not available on this server yet; please redeem a code instead.',
  },
  toast: {
    redeemed: 'Redeemed! {{amount}} added',
  },
  errors: {
    unauthorized: 'Not signed in or the session expired; please sign in again',
    unknownIntent: 'Unknown action',
    amountInvalid: 'Amount incorrect',
    amountBelowMin: 'The amount must be at least {{min}}',
  },
};

export default wallet;
