import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The checkout's own files (package.json, the console's assets, the API docs page) read at run time,
// found from wherever this module runs: src/platform/shared/ from the sources, a chunk of dist/ from the build.

let root: string | undefined;

/** The project's root: the nearest directory above this module holding package.json. */
export function projectRoot(): string {
  if (root !== undefined) return root;
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    directory = parent;
  }
  root = directory;
  return root;
}

/** A path under the project's root. */
export function projectPath(...segments: string[]): string {
  return join(projectRoot(), ...segments);
}
