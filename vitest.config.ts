import { defineConfig } from 'vitest/config';

// Unit and integration tests (real PostgreSQL and Redis). The console's Vite config (Remix plugin) is not
// loaded here on purpose: route modules are tested by calling their loaders and actions directly.
export default defineConfig({
  test: {
    include: [
      'app/**/*.test.{ts,tsx}',
      'db/**/*.test.ts',
      'relay-service/src/**/*.test.ts',
      'relay-service/tests/node/**/*.test.ts',
      'proto/**/*.test.ts',
      'k8s/**/*.test.ts',
      'scripts/**/*.test.ts',
      'server/**/*.test.ts',
      'tests/integration/**/*.test.ts',
      'tests/fuzz/**/*.test.ts',
      'tests/fakes/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', 'relay-service/tests/deno/**', 'tests/e2e/**'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
