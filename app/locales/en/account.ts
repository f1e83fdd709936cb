import type { AccountResources } from '#app/locales/zh/account.ts';

const account: AccountResources = {};

export default account;
