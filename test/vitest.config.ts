import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/property-seed.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: a couple of files at a time keeps Postgres and Redis responsive.
    maxWorkers: 3,
    env: { LOG_LEVEL: 'silent', NODE_ENV: 'test' },
  },
});
