#!/usr/bin/env node
// The `deductions` command. It runs the build in dist/ (npm install and npm test make it) while that
// is fresh, and the TypeScript sources through tsx's loader otherwise, so an edited checkout never runs
// stale code and a fresh clone works before any build.
import { fileURLToPath } from 'node:url';
import { buildIsFresh } from '../scripts/build-freshness.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.env.DEDUCTIONS_FROM_SOURCE !== '1' && buildIsFresh(root)) {
  await import('../dist/cli.mjs');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
}
