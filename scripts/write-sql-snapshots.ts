// `npm run sql`: writes the .sql snapshot of every big statement the areas list in
// src/<area>/sql-snapshots.ts (src/platform/db/sql-snapshot.ts), and removes the .sql files of those folders
// that no statement writes any more.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadSqlSnapshotFolders, renderSqlSnapshotFiles, REPOSITORY_ROOT } from '../src/platform/db/sql-snapshot.ts';

const folders = await loadSqlSnapshotFolders();
const files = renderSqlSnapshotFiles(folders);
let changed = 0;
for (const [path, text] of files) {
  const absolute = join(REPOSITORY_ROOT, path);
  let current: string | null = null;
  try {
    current = readFileSync(absolute, 'utf8');
  } catch {
    // Not written yet.
  }
  if (current === text) continue;
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, text);
  changed += 1;
  process.stdout.write(`wrote ${path}\n`);
}
for (const { folder } of folders) {
  for (const name of readdirSync(join(REPOSITORY_ROOT, folder))) {
    const path = `${folder}/${name}`;
    if (name.endsWith('.sql') && !files.has(path)) {
      rmSync(join(REPOSITORY_ROOT, path));
      changed += 1;
      process.stdout.write(`removed ${path}\n`);
    }
  }
}
process.stdout.write(changed === 0 ? `${files.size} SQL snapshots up to date\n` : `${changed} of the SQL snapshot files changed (${files.size} in all)\n`);
