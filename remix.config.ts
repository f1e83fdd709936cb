import type { VitePluginConfig } from '@remix-run/dev';

// Remix Vite reads no remix.config; these typed plugin options are imported by vite.config.ts (ADR 0001).
export const remixOptions: VitePluginConfig = {
  appDirectory: 'app',
  buildDirectory: 'build',
  serverModuleFormat: 'esm',
  ignoredRouteFiles: ['**/*.server.*', '**/*.client.*', '**/*.test.*', '**/__*.*', '**/.*'],
  future: {
    v3_fetcherPersist: true,
    v3_relativeSplatPath: true,
    v3_throwAbortReason: true,
    v3_singleFetch: true,
    v3_lazyRouteDiscovery: true,
  },
};

declare module '@remix-run/server-runtime' {
  interface Future {
    v3_singleFetch: true;
  }
}
