import type { OauthResources } from '#app/locales/zh/oauth.ts';

const oauth: OauthResources = {};

export default oauth;
