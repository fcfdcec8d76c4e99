// npm install only when node_modules is missing or older than the lockfile or package.json (npm
// writes node_modules/.package-lock.json at every install): a no-op install still took seconds
// before every test run. Then the build, which is milliseconds.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const mtime = (path) => {
  try {
    return statSync(new URL(path, new URL('..', import.meta.url))).mtimeMs;
  } catch {
    return null;
  }
};
const installed = mtime('node_modules/.package-lock.json');
const wanted = Math.max(mtime('package-lock.json') ?? 0, mtime('package.json') ?? 0);
if (installed === null || installed < wanted) {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
}
execFileSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: root, stdio: 'inherit' });
