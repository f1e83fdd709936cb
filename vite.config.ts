import { vitePlugin as remix } from '@remix-run/dev';
import { defineConfig } from 'vite';
import { remixOptions } from './remix.config.ts';

// Workspace packages stay external to the server bundle: the console process (server/console.ts) and the Remix
// build must share one copy of the MikroORM entity classes (a bundled copy would be a different class and
// entity metadata lookups would fail). Node loads them at runtime with its native type stripping.
const workspacePackage = /^@switchyard\//;

export default defineConfig(({ isSsrBuild }) => ({
  plugins: [remix(remixOptions)],
  ssr: { external: ['@switchyard/db', '@switchyard/proto', '@switchyard/relay'] },
  build: {
    target: 'es2022',
    rollupOptions: isSsrBuild ? { external: (id: string) => workspacePackage.test(id) } : {},
  },
}));
