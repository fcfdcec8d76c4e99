// Builds the command line into dist/ with esbuild: one ES module per entry, each command's services
// (loaded by its action) and the service split into chunks of their own. Running compiled JavaScript
// instead of TypeScript through tsx's loader makes a command start in a fraction of the time. Type
// checking stays with tsc (npm run typecheck); this only transpiles.
import { build } from 'esbuild';
import { newestSourceChange, STAMP_FILE } from './build-freshness.mjs';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Packages built into dist/ rather than loaded from node_modules: node loads an ES module package file
 * by file (kysely is some 260 files, zod some 100, jose some 50), which cost a database read about a
 * third of its start-up; one chunk costs a fraction of that. Only pure ES module packages that read no
 * file of their own at run time and that no other package imports (so the program holds one copy of
 * each); every other package stays in node_modules. A new lock file makes the build stale.
 */
const BUILT_IN_PACKAGES = new Set(['kysely', 'zod', 'jose']);

/** Leaves every package import to node_modules except those of BUILT_IN_PACKAGES. */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path }) => {
      const name = path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0];
      return BUILT_IN_PACKAGES.has(name) ? undefined : { path, external: true };
    });
  },
};

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
rmSync(new URL('../dist.next', import.meta.url), { recursive: true, force: true });
const sourcesAsOf = newestSourceChange(root);
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'bin/cli.ts' },
  // Built beside dist/ and swapped in whole: chunks are named by content hash, so building over the old
  // output would leave every superseded chunk behind.
  outdir: 'dist.next',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [externalPackages],
  sourcemap: 'linked',
  logLevel: 'warning',
});
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
renameSync(new URL('../dist.next', import.meta.url), new URL('../dist', import.meta.url));
// What the build saw: a source changed after this makes the build stale (bin/deductions.mjs checks).
writeFileSync(new URL(`../${STAMP_FILE}`, import.meta.url), `${sourcesAsOf}\n`);
if (!process.argv.includes('--quiet')) console.log(`built dist/ in ${Date.now() - started} ms`);
