import type { AuthResources } from '#app/locales/zh/auth.ts';

const auth: AuthResources = {};

export default auth;
