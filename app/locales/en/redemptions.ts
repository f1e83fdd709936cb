import type { RedemptionsResources } from '#app/locales/zh/redemptions.ts';

const redemptions: RedemptionsResources = {};

export default redemptions;
