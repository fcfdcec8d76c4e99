// The layout's rules as pure checks over the import graph, so each can be shown failing on a
// made-up graph (import-rules.test.ts) and passing on the real one (architecture.test.ts).
import type { SourceFile } from './import-graph.ts';

export interface Violation {
  rule:
    | 'area-imports-http'
    | 'src-imports-jobs'
    | 'processor-not-a-leaf'
    | 'sql-outside-repository'
    | 'folder-loop'
    | 'file-loop'
    | 'outside-districts'
    | 'district-upward'
    | 'bullmq-outside-queue-edges';
  file: string;
  detail: string;
}

/**
 * The districts of src/, in the order the cycle builds on them: each may import its own areas and
 * the districts before it, never one after it.
 *  - platform: money, configuration, the database, events, audit, idempotency, the runtime and queue;
 *  - directory: payroll providers, calendars, employers, payrolls and employees, API clients;
 *  - collections: what billers ask for (payments, mandates, schedules, availability, enablement) and
 *    what an employee's change means for it;
 *  - cycle: the pay-date cycle (lock, instruction files, deduction records, re-runs, reconciliation,
 *    the nightly run, the ledger);
 *  - settlement: cash in (statements, remittances), payouts out, finance's reports;
 *  - faces: how people and systems meet the service (HTTP, console, CLI, sandbox, webhooks, workers).
 */
export const DISTRICTS = ['platform', 'directory', 'collections', 'cycle', 'settlement', 'faces'] as const;

/**
 * Areas that are edges rather than areas: the HTTP adapter itself, the command line (with the demo),
 * which drives the service from outside as a user would, and the console's pages for people, served
 * over HTTP.
 */
export const EDGE_FOLDERS: ReadonlySet<string> = new Set(['faces/http', 'faces/cli', 'faces/console']);

/** `collections/payments` for `src/collections/payments/payment-service.ts`; undefined outside src/ or above an area. */
export function folderOf(filePath: string): string | undefined {
  const parts = filePath.split('/');
  return parts[0] === 'src' && parts.length > 3 ? `${parts[1]}/${parts[2]}` : undefined;
}

/** `collections` for `src/collections/payments/payment-service.ts`; undefined outside src/. */
export function districtOf(filePath: string): string | undefined {
  const parts = filePath.split('/');
  return parts[0] === 'src' && parts.length > 2 ? parts[1] : undefined;
}

const isUnder = (filePath: string, folder: string) => filePath.startsWith(`${folder}/`);

export function areasImportingHttp(files: readonly SourceFile[]): Violation[] {
  return files.flatMap((file) => {
    const folder = folderOf(file.path);
    if (folder === undefined || EDGE_FOLDERS.has(folder)) return [];
    return file.imports
      .filter((target) => isUnder(target, 'src/faces/http'))
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

const SQL_TALK = [/\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|with)\(/, /\bsql(<[^>]*>)?`/, /\bsql\.(raw|ref|id|table|lit|join)\(/, /\.query\(\s*['"`]/];

/** Whether a file's text builds or sends SQL (Kysely's builders, the sql tag, pg's query). */
export function talksSql(text: string): boolean {
  return SQL_TALK.some((pattern) => pattern.test(text));
}

/** Files allowed to talk SQL: repositories, and the database plumbing itself. */
export function mayTalkSql(filePath: string): boolean {
  return filePath.endsWith('-repository.ts') || isUnder(filePath, 'src/platform/db') || isUnder(filePath, 'migrations');
}

export function sqlOutsideRepositories(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => (isUnder(file.path, 'src') || isUnder(file.path, 'jobs')) && !mayTalkSql(file.path) && talksSql(file.text))
    .map((file) => ({ rule: 'sql-outside-repository' as const, file: file.path, detail: 'builds or sends SQL but is not a repository' }));
}

/** The strongly connected components of more than one node (Tarjan): every loop, however long. */
function loopsIn(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
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
  return loops;
}

function edgesBetween(files: readonly SourceFile[], nodeOf: (path: string) => string | undefined): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = nodeOf(file.path);
    if (from === undefined) continue;
    for (const target of file.imports) {
      const to = nodeOf(target);
      if (to === undefined || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  return edges;
}

/** The areas of src/ that import each other in a loop. */
export function folderLoops(files: readonly SourceFile[]): Violation[] {
  return loopsIn(edgesBetween(files, folderOf)).map((loop) => ({
    rule: 'folder-loop' as const,
    file: `src/{${loop.join(',')}}`,
    detail: `${loop.join(', ')} import each other`,
  }));
}

/** Files of src/ that import each other in a loop, type-only imports included: a loop is one module in two files. */
export function fileLoops(files: readonly SourceFile[]): Violation[] {
  return loopsIn(edgesBetween(files, (path) => (isUnder(path, 'src') ? path : undefined))).map((loop) => ({
    rule: 'file-loop' as const,
    file: loop[0]!,
    detail: `${loop.join(', ')} import each other`,
  }));
}

/** Every file of src/ lives in an area of a district. */
export function filesOutsideDistricts(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => isUnder(file.path, 'src'))
    .filter((file) => !(DISTRICTS as readonly string[]).includes(districtOf(file.path) ?? '') || folderOf(file.path) === undefined)
    .map((file) => ({ rule: 'outside-districts' as const, file: file.path, detail: `not in src/<district>/<area>/ (districts: ${DISTRICTS.join(', ')})` }));
}

/** No arrow back up: a district imports only itself and the districts before it. */
export function districtsImportingUpward(files: readonly SourceFile[]): Violation[] {
  const rank = (path: string) => (DISTRICTS as readonly string[]).indexOf(districtOf(path) ?? '');
  return files.flatMap((file) => {
    const from = rank(file.path);
    if (from < 0) return [];
    return file.imports
      .filter((target) => rank(target) > from)
      .map((target) => ({ rule: 'district-upward' as const, file: file.path, detail: `imports ${target} (${districtOf(target)} comes after ${districtOf(file.path)})` }));
  });
}

/**
 * The folders that may import BullMQ, type-only imports included. Everything else produces jobs
 * through the job contract (src/platform/queue/job-contract.ts: enqueueJob checks the payload against
 * the job's schema and adds it to the catalogue's queue) and holds queues by their JobQueue type, so
 * BullMQ's own API stays where it is truly needed:
 *  - src/platform/queue: the seam itself (job options, createQueue, the contract, the scheduler's cron);
 *  - src/faces/workers: a Worker per queue, QueueEvents for a command that waits on its re-run, a
 *    delivery job parking itself (moveToDelayed, DelayedError), retrying a re-run's finished job;
 *  - src/faces/console: the operator's view of the queues works on BullMQ's jobs themselves (failed
 *    jobs, their retry and removal, the queues board);
 *  - jobs/: a processor is handed BullMQ's Job;
 *  - test/: tests add, inspect and wait on jobs directly.
 * bin/ and the rest of src/ need none: the nightly run, reconciliation, webhooks, metrics, the CLI
 * and the runtime's Redis connections go through src/platform/queue.
 */
export const BULLMQ_FOLDERS: readonly string[] = ['src/platform/queue', 'src/faces/workers', 'src/faces/console', 'jobs', 'test'];

const isBullmq = (packageName: string) => packageName === 'bullmq' || packageName.startsWith('bullmq/');

export function bullmqOutsideQueueEdges(files: readonly SourceFile[]): Violation[] {
  return files
    .filter((file) => !BULLMQ_FOLDERS.some((folder) => isUnder(file.path, folder)))
    .flatMap((file) => file.packages.filter(isBullmq).map((name) => ({ rule: 'bullmq-outside-queue-edges' as const, file: file.path, detail: `imports ${name}` })));
}

export function allViolations(files: readonly SourceFile[]): Violation[] {
  return [
    ...areasImportingHttp(files),
    ...srcImportingJobs(files),
    ...processorsThatAreNotLeaves(files),
    ...sqlOutsideRepositories(files),
    ...folderLoops(files),
    ...fileLoops(files),
    ...filesOutsideDistricts(files),
    ...districtsImportingUpward(files),
    ...bullmqOutsideQueueEdges(files),
  ];
}
