// The layout's rules as pure checks over the import graph, so each can be shown failing on a
// made-up graph (import-rules.test.ts) and passing on the real one (architecture.test.ts).
import type { SourceFile } from './import-graph.ts';

export interface Violation {
  rule: 'area-imports-http' | 'src-imports-jobs' | 'processor-not-a-leaf' | 'sql-outside-repository' | 'folder-loop';
  file: string;
  detail: string;
}

/**
 * Folders of src/ that are edges rather than areas: the HTTP adapter itself, the command line
 * (with the demo), which drives the service from outside as a user would, and the console's pages
 * for people, served over HTTP.
 */
export const EDGE_FOLDERS: ReadonlySet<string> = new Set(['http', 'cli', 'console']);

/** `payments` for `src/payments/payment-service.ts`; undefined outside src/ or for a file at its top. */
export function folderOf(filePath: string): string | undefined {
  const parts = filePath.split('/');
  return parts[0] === 'src' && parts.length > 2 ? parts[1] : undefined;
}

const isUnder = (filePath: string, folder: string) => filePath.startsWith(`${folder}/`);

export function areasImportingHttp(files: readonly SourceFile[]): Violation[] {
  return files.flatMap((file) => {
    const folder = folderOf(file.path);
    if (folder === undefined || EDGE_FOLDERS.has(folder)) return [];
    return file.imports
      .filter((target) => isUnder(target, 'src/http'))
      .map((target) => ({ rule: 'area-imports-http' as const, file: file.path, detail: `imports ${target}` }));
  });
}

export function srcImportingJobs(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => isUnder(file.path, 'src'))
    .flatMap((file) =>
      file.imports.filter((target) => isUnder(target, 'jobs')).map((target) => ({ rule: 'src-imports-jobs' as const, file: file.path, detail: `imports ${target}` })),
    );
}

/** A processor is imported by the one registry (jobs/index.ts) and by tests, by nothing else. */
export function processorsThatAreNotLeaves(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => file.path !== 'jobs/index.ts' && !isUnder(file.path, 'test'))
    .flatMap((file) =>
      file.imports
        .filter((target) => isUnder(target, 'jobs') && target !== 'jobs/index.ts')
        .map((target) => ({ rule: 'processor-not-a-leaf' as const, file: file.path, detail: `imports ${target}` })),
    );
}

const SQL_TALK = [
  /\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|with)\(/,
  /\bsql(<[^>]*>)?`/,
  /\bsql\.(raw|ref|id|table|lit|join)\(/,
  /\.query\(\s*['"`]/,
];

/** Whether a file's text builds or sends SQL (Kysely's builders, the sql tag, pg's query). */
export function talksSql(text: string): boolean {
  return SQL_TALK.some((pattern) => pattern.test(text));
}

/** Files allowed to talk SQL: repositories, and the database plumbing itself. */
export function mayTalkSql(filePath: string): boolean {
  return filePath.endsWith('-repository.ts') || isUnder(filePath, 'src/db') || isUnder(filePath, 'migrations');
}

export function sqlOutsideRepositories(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => (isUnder(file.path, 'src') || isUnder(file.path, 'jobs')) && !mayTalkSql(file.path) && talksSql(file.text))
    .map((file) => ({ rule: 'sql-outside-repository' as const, file: file.path, detail: 'builds or sends SQL but is not a repository' }));
}

/** The folders of src/ that import each other in a loop (Tarjan's strongly connected components). */
export function folderLoops(files: readonly SourceFile[]): Violation[] {
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file.path);
    if (from === undefined) continue;
    for (const target of file.imports) {
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) loops.push(component.sort());
    }
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return loops.map((loop) => ({ rule: 'folder-loop' as const, file: `src/{${loop.join(',')}}`, detail: `${loop.join(', ')} import each other` }));
}

export function allViolations(files: readonly SourceFile[]): Violation[] {
  return [
    ...areasImportingHttp(files),
    ...srcImportingJobs(files),
    ...processorsThatAreNotLeaves(files),
    ...sqlOutsideRepositories(files),
    ...folderLoops(files),
  ];
}
