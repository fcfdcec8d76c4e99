import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './support/longest-first-sequencer.ts';
import { unitTestFiles } from './unit-project.ts';

// Two projects. `unit`: the pure rules listed in test/unit-project.ts, no database, no Redis, no
// global setup (`npm run test:unit`, seconds). `db`: every other test file, on a private clone of
// the template database the global setup migrates once, and a private Redis prefix (`npm run test:db`).
// `npm test` runs both. Options here apply to both projects.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // Property tests run with one fixed seed in both projects.
    setupFiles: ['test/support/property-seed.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: a couple of files at a time keeps Postgres and Redis responsive.
    maxWorkers: 3,
    // A worker keeps the modules it has loaded from one file to the next: loading the service took
    // two thirds of the suite's time when every file loaded it afresh. Files share no data (each has
    // its own database and Redis prefix), and the service keeps no state in its modules that a test
    // relies on being fresh; the suite passing in any order is what holds this.
    isolate: false,
    // Longest first, on a fresh clone too (test/durations.json).
    sequence: { sequencer: LongestFirstSequencer },
    // Fake payroll providers listen on 127.0.0.1 over http: adapters built without a URL policy, and
    // commands the tests start, read PROVIDER_ALLOW_PRIVATE_URLS from the environment.
    env: { LOG_LEVEL: 'silent', NODE_ENV: 'test', PROVIDER_ALLOW_PRIVATE_URLS: 'true', CONSOLE_PASSWORD_SCRYPT_LOG_N: '14' },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [...unitTestFiles] },
      },
      {
        extends: true,
        test: {
          name: 'db',
          include: ['test/**/*.test.ts'],
          exclude: ['test/bench/**', 'node_modules/**', ...unitTestFiles],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
