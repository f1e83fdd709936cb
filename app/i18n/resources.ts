import enAccount from '#app/locales/en/account.ts';
import enAuth from '#app/locales/en/auth.ts';
import enChannels from '#app/locales/en/channels.ts';
import enCommon from '#app/locales/en/common.ts';
import enContent from '#app/locales/en/content.ts';
import enDashboard from '#app/locales/en/dashboard.ts';
import enLogs from '#app/locales/en/logs.ts';
import enMidjourney from '#app/locales/en/midjourney.ts';
import enOauth from '#app/locales/en/oauth.ts';
import enPlayground from '#app/locales/en/playground.ts';
import enPricing from '#app/locales/en/pricing.ts';
import enRedemptions from '#app/locales/en/redemptions.ts';
import enSettings from '#app/locales/en/settings.ts';
import enTasks from '#app/locales/en/tasks.ts';
import enTokens from '#app/locales/en/tokens.ts';
import enUsers from '#app/locales/en/users.ts';
import enVersions from '#app/locales/en/versions.ts';
import enWallet from '#app/locales/en/wallet.ts';
import zhAccount from '#app/locales/zh/account.ts';
import zhAuth from '#app/locales/zh/auth.ts';
import zhChannels from '#app/locales/zh/channels.ts';
import zhCommon from '#app/locales/zh/common.ts';
import zhContent from '#app/locales/zh/content.ts';
import zhDashboard from '#app/locales/zh/dashboard.ts';
import zhLogs from '#app/locales/zh/logs.ts';
import zhMidjourney from '#app/locales/zh/midjourney.ts';
import zhOauth from '#app/locales/zh/oauth.ts';
import zhPlayground from '#app/locales/zh/playground.ts';
import zhPricing from '#app/locales/zh/pricing.ts';
import zhRedemptions from '#app/locales/zh/redemptions.ts';
import zhSettings from '#app/locales/zh/settings.ts';
import zhTasks from '#app/locales/zh/tasks.ts';
import zhTokens from '#app/locales/zh/tokens.ts';
import zhUsers from '#app/locales/zh/users.ts';
import zhVersions from '#app/locales/zh/versions.ts';
import zhWallet from '#app/locales/zh/wallet.ts';

/**
 * Translations are bundled (no network backend): both the server and the browser import them.
 * Namespaces: common (shell), auth (server-side auth messages and mail), account (login, register, reset and
 * OAuth callback pages), oauth (third-party login), users (admin users page), settings (personal settings),
 * tokens, redemptions and versions (their console pages), wallet (/topup), content (home, about, guide,
 * usebook, chat pages, notice), playground (/playground), dashboard (/detail), tasks (/task).
 */
export const resources = {
  zh: {
    common: zhCommon,
    auth: zhAuth,
    account: zhAccount,
    oauth: zhOauth,
    users: zhUsers,
    settings: zhSettings,
    tokens: zhTokens,
    redemptions: zhRedemptions,
    channels: zhChannels,
    versions: zhVersions,
    pricing: zhPricing,
    logs: zhLogs,
    midjourney: zhMidjourney,
    wallet: zhWallet,
    content: zhContent,
    playground: zhPlayground,
    dashboard: zhDashboard,
    tasks: zhTasks,
  },
  en: {
    common: enCommon,
    auth: enAuth,
    account: enAccount,
    oauth: enOauth,
    users: enUsers,
    settings: enSettings,
    tokens: enTokens,
    redemptions: enRedemptions,
    channels: enChannels,
    versions: enVersions,
    pricing: enPricing,
    logs: enLogs,
    midjourney: enMidjourney,
    wallet: enWallet,
    content: enContent,
    playground: enPlayground,
    dashboard: enDashboard,
    tasks: enTasks,
  },
} as const;
