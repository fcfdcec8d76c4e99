// `npm run test:durations`: copies the test durations vitest cached in the last run on this machine into
// test/durations.json, which orders a fresh clone's first run longest file first
// (test/support/longest-first-sequencer.ts). Whole seconds are enough to order by.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cacheRoot = join(root, 'node_modules/.vite/vitest');
const caches = existsSync(cacheRoot)
  ? readdirSync(cacheRoot)
      .map((dir) => join(cacheRoot, dir, 'results.json'))
      .filter(existsSync)
  : [];
if (caches.length === 0) {
  console.error('No vitest results cached yet: run npm test first.');
  process.exit(1);
}
const durations = {};
for (const cache of caches) {
  for (const [key, { duration }] of JSON.parse(readFileSync(cache, 'utf8')).results) {
    const file = key.slice(key.indexOf(':') + 1);
    if (existsSync(join(root, file)) && duration >= 1_000) durations[key] = Math.round(duration / 1_000) * 1_000;
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(root, 'test/durations.json'), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files of a second or more`);
