import type { VersionsResources } from '#app/locales/zh/versions.ts';

const versions: VersionsResources = {};

export default versions;
