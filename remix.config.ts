import type { VitePluginConfig } from '@remix-run/dev';

// Remix Vite reads no remix.config; these typed plugin options are imported by vite.config.ts (ADR 0001).
export const remixOptions: VitePluginConfig = {
  appDirectory: 'app',
  buildDirectory: 'build',
  serverModuleFormat: 'esm',
  // Test files end in .test.ts(x); a route segment named "test" (api.channel.test.$id.ts) must not be ignored.
  ignoredRouteFiles: ['**/*.server.*', '**/*.client.*', '**/*.test.ts', '**/*.test.tsx', '**/__*.*', '**/.*'],
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
