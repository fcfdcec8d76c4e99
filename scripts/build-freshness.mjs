// Whether dist/ was built from the sources as they are: the newest change to a source file (in ms)
// against the one recorded when dist/ was built. A few hundred stats: milliseconds.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP_FILE = 'dist/.sources-as-of';
const SOURCE_DIRECTORIES = ['bin', 'src', 'jobs', 'migrations'];
/** The lock file says which packages the build took in (scripts/build.mjs builds some into dist/), and the build script how. */
const SOURCE_FILES = ['package.json', 'package-lock.json', 'scripts/build.mjs'];

function newestIn(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    const time = entry.isDirectory() ? Math.max(statSync(path).mtimeMs, newestIn(path)) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

/** The newest modification (or addition, or removal) among the sources the build reads. */
export function newestSourceChange(root) {
  let newest = 0;
  for (const directory of SOURCE_DIRECTORIES) newest = Math.max(newest, statSync(join(root, directory)).mtimeMs, newestIn(join(root, directory)));
  for (const file of SOURCE_FILES) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return Math.floor(newest);
}

/** True when dist/ exists and no source changed since it was built. */
export function buildIsFresh(root) {
  let builtFrom;
  try {
    builtFrom = Number(readFileSync(join(root, STAMP_FILE), 'utf8'));
  } catch {
    return false;
  }
  return Number.isFinite(builtFrom) && newestSourceChange(root) <= builtFrom;
}
