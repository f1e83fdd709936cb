import enAccount from '#app/locales/en/account.ts';
import enAuth from '#app/locales/en/auth.ts';
import enCommon from '#app/locales/en/common.ts';
import enOauth from '#app/locales/en/oauth.ts';
import enRedemptions from '#app/locales/en/redemptions.ts';
import enSettings from '#app/locales/en/settings.ts';
import enTokens from '#app/locales/en/tokens.ts';
import enUsers from '#app/locales/en/users.ts';
import enVersions from '#app/locales/en/versions.ts';
import zhAccount from '#app/locales/zh/account.ts';
import zhAuth from '#app/locales/zh/auth.ts';
import zhCommon from '#app/locales/zh/common.ts';
import zhOauth from '#app/locales/zh/oauth.ts';
import zhRedemptions from '#app/locales/zh/redemptions.ts';
import zhSettings from '#app/locales/zh/settings.ts';
import zhTokens from '#app/locales/zh/tokens.ts';
import zhUsers from '#app/locales/zh/users.ts';
import zhVersions from '#app/locales/zh/versions.ts';

/**
 * Translations are bundled (no network backend): both the server and the browser import them.
 * Namespaces: common (shell), auth (server-side auth messages and mail), account (login, register, reset and
 * OAuth callback pages), oauth (third-party login), users (admin users page), settings (personal settings),
 * tokens, redemptions and versions (their console pages).
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
    versions: zhVersions,
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
    versions: enVersions,
  },
} as const;
