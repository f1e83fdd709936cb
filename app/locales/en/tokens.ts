import type { TokensResources } from '#app/locales/zh/tokens.ts';

const tokens: TokensResources = {};

export default tokens;
