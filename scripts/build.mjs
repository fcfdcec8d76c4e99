// Builds the command line into dist/ with esbuild: one ES module per entry, the lazily loaded
// commands and the service split into chunks of their own, packages left to node_modules. Running
// compiled JavaScript instead of TypeScript through tsx's loader makes a command start in a fraction
// of the time. Type checking stays with tsc (npm run typecheck); this only transpiles.
import { build } from 'esbuild';
import { newestSourceChange, STAMP_FILE } from './build-freshness.mjs';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
const sourcesAsOf = newestSourceChange(root);
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'bin/cli.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
// What the build saw: a source changed after this makes the build stale (bin/deductions.mjs checks).
writeFileSync(new URL(`../${STAMP_FILE}`, import.meta.url), `${sourcesAsOf}\n`);
if (!process.argv.includes('--quiet')) console.log(`built dist/ in ${Date.now() - started} ms`);
