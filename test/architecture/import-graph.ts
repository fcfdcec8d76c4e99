// The import graph of the repository's own TypeScript, read from the files as text: static imports,
// re-exports and dynamic imports with a literal path. Rules over it live in import-rules.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface SourceFile {
  /** Repository-relative, forward slashes: `src/collections/payments/payment-service.ts`. */
  path: string;
  text: string;
  /** Repository-relative paths this file imports (relative specifiers only; packages are left out). */
  imports: string[];
  /** Package names this file imports (`kysely`, `fastify`, `node:fs`...). */
  packages: string[];
}

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The module specifiers a file's text imports, as written; `valuesOnly` leaves out `import type` (erased at run time). */
export function importSpecifiers(text: string, options: { valuesOnly?: boolean } = {}): string[] {
  const specifiers: string[] = [];
  for (const match of text.matchAll(SPECIFIER)) {
    if (options.valuesOnly && match[1]) continue;
    specifiers.push(match[2] ?? match[3]!);
  }
  return specifiers;
}

export function importsOf(filePath: string, text: string): { imports: string[]; packages: string[] } {
  const imports: string[] = [];
  const packages: string[] = [];
  for (const specifier of importSpecifiers(text)) {
    if (specifier.startsWith('.')) imports.push(path.posix.normalize(path.posix.join(path.posix.dirname(filePath), specifier)));
    else packages.push(specifier);
  }
  return { imports, packages };
}

function walk(root: string, dir: string, into: string[]): void {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) walk(root, relative, into);
    else if (/\.(ts|mjs)$/.test(entry.name)) into.push(relative);
  }
}

/** Every source file under the given top-level folders of the repository. */
export function readSourceFiles(root: string, folders: readonly string[]): SourceFile[] {
  const paths: string[] = [];
  for (const folder of folders) walk(root, folder, paths);
  return paths.sort().map((filePath) => {
    const text = readFileSync(path.join(root, filePath), 'utf8');
    return { path: filePath, text, ...importsOf(filePath, text) };
  });
}
