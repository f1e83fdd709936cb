import { defineConfig } from 'vitest/config';

// End-to-end tests: the built product is started once by tests/e2e/global-setup.ts (or E2E_BASE_URL points at a
// running one) and driven with playwright-core + Debian chromium, with JavaScript on and off.
export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.e2e.ts'],
    globalSetup: ['tests/e2e/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
