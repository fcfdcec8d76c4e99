// ESLint (flat config): JavaScript's and typescript-eslint's recommended rules, a few more that guard
// against mistakes (none of them about layout: Prettier owns layout, and eslint-config-prettier turns
// off any rule that would fight it). `npm run lint`; `.ci/run` runs it after `npm run format:check`.
//
// Not type-aware: typescript-eslint's recommendedTypeChecked took 65–80 s of CPU for one run on the
// 2-core machine (the non-type-checked rules: about 15 s), and tsc --noEmit in `npm test` already
// checks types.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// A leading underscore marks what is left unused on purpose (a skipped parameter, a field taken out
// of an object with a rest pattern).
const unusedVars = { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true };

export default defineConfig(
  // The example integration's API types are openapi-typescript's output, kept as it writes them.
  globalIgnores(['dist/', 'var/', 'test-artifacts/', '.scratch/', 'examples/integration/src/generated/']),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  { files: ['**/*.{js,mjs,ts}'], extends: [js.configs.recommended], languageOptions: { globals: globals.node } },
  { files: ['**/*.ts'], extends: [tseslint.configs.recommended] },
  {
    files: ['**/*.{js,mjs,ts}'],
    rules: {
      // `== null` stays allowed: it is the codebase's way of saying "null or undefined".
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-throw-literal': 'error',
      'no-self-compare': 'error',
      // A `${...}` in a plain string is a template literal that lost its backticks.
      'no-template-curly-in-string': 'error',
      radix: 'error',
    },
  },
  { files: ['**/*.{js,mjs}'], rules: { 'no-unused-vars': ['error', unusedVars] } },
  { files: ['**/*.ts'], rules: { '@typescript-eslint/no-unused-vars': ['error', unusedVars] } },
  {
    // Migrations take Kysely<any>, as Kysely's documentation advises: a migration must not depend on
    // the schema types of today's code. Tests read JSON responses and documents as `any`.
    files: ['migrations/**/*.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Deliberate `any` at untyped boundaries, each file checked by hand: schema-agnostic Kysely
    // (migrator, ping), a pg client override of an overloaded method, a generic keyset pager, route
    // specs of every body/query/params type in one list, the OpenAPI document as plain JSON, and
    // Redis commands defined with defineCommand. `any` anywhere else in src/ is an error.
    files: [
      'src/platform/db/connection.ts',
      'src/platform/db/keyset-paging.ts',
      'src/platform/db/migrator.ts',
      'src/platform/db/ping.ts',
      'src/faces/http/effect-runner.ts',
      'src/faces/http/openapi.ts',
      'src/faces/http/route.ts',
      'src/platform/shared/rate-limiter.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Served to the browser next to Swagger UI's bundle, which defines SwaggerUIBundle.
    files: ['src/faces/http/api-docs/*.js'],
    languageOptions: { globals: { ...globals.browser, SwaggerUIBundle: 'readonly' } },
  },
  prettier,
);
