import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { problemCatalogue, problemCodeEntry, problemCodes, type InternalEdge, type ProblemCode } from '../../../src/platform/shared/problem-codes.ts';
import { importSpecifiers, readSourceFiles } from '../../architecture/import-graph.ts';

/**
 * The catalogue of problem codes against the source that raises them. The constructors take a
 * ProblemCode, so tsc already refuses a code the catalogue lacks; this reads the raise sites as
 * text as well, so that a code the catalogue keeps but nothing raises (a dead one) fails, a status
 * the catalogue does not list fails, and so does a code cast past the type.
 */

const root = fileURLToPath(new URL('../../..', import.meta.url));
const CATALOGUE_FILE = 'src/platform/shared/problem-codes.ts';
const files = readSourceFiles(root, ['src', 'jobs']).filter((file) => file.path !== CATALOGUE_FILE);

/** The status each domain-error class is answered with (statusOfKind in src/faces/http/plugins/errors.ts). */
const statusOfClass: Record<string, number> = {
  MalformedRequestError: 400,
  ForbiddenError: 403,
  ConflictError: 409,
  InvalidError: 422,
  RateLimitedError: 429,
  UpstreamError: 502,
};
const statusOfKind: Record<string, number> = {
  malformed: 400,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  invalid: 422,
  'rate-limited': 429,
  'upstream-failed': 502,
  'upstream-timed-out': 504,
};

interface RaiseSite {
  code: string;
  file: string;
  line: number;
  /** The statuses the site answers with, when the text says (an HttpProblem's literal status, a class's kind). */
  statuses: number[];
}

const STRING = String.raw`'([^'\\]*)'`;
const CLASS_NAMES = Object.keys(statusOfClass).join('|');
const literalsOf = (text: string) => [...text.matchAll(new RegExp(STRING, 'g'))].map((m) => m[1]!);

/** The ways a code is raised, each with the codes a match names and the statuses it says they are answered with. */
const raisePatterns: Array<{ pattern: RegExp; codes: (m: RegExpMatchArray) => string[]; statuses: (m: RegExpMatchArray) => number[] }> = [
  // new InvalidError('code', ...), new ConflictError(\n 'code', ...)
  { pattern: new RegExp(String.raw`new (${CLASS_NAMES})\(\s*${STRING}`, 'g'), codes: (m) => [m[2]!], statuses: (m) => [statusOfClass[m[1]!]!] },
  // new HttpProblem(413, 'code', ...), new HttpProblem(what === 'body' ? 422 : 400, 'code', ...)
  {
    pattern: new RegExp(String.raw`new HttpProblem\(\s*([^,]*?),\s*${STRING}`, 'g'),
    codes: (m) => [m[2]!],
    statuses: (m) => [...m[1]!.matchAll(/\b[45]\d\d\b/g)].map((n) => Number(n[0])),
  },
  // new DomainError('conflict', 'code', ...)
  { pattern: new RegExp(String.raw`new DomainError\(\s*${STRING},\s*${STRING}`, 'g'), codes: (m) => [m[2]!], statuses: (m) => [statusOfKind[m[1]!]!] },
  // class StatementRejected extends InvalidError { constructor(...) { super('code', ...
  {
    pattern: new RegExp(String.raw`extends (${CLASS_NAMES}) \{[^}]*?super\(\s*${STRING}`, 'g'),
    codes: (m) => [m[2]!],
    statuses: (m) => [statusOfClass[m[1]!]!],
  },
  // invalidInput(parsed.error, 'code')
  { pattern: new RegExp(String.raw`invalidInput\([^,()]+,\s*${STRING}\)`, 'g'), codes: (m) => [m[1]!], statuses: () => [422] },
  // Codes chosen before the raise: a table ({ kind: 'upstream-failed', code: 'code' }), a slug
  // (slug: 'code', and types slug: 'a' | 'b'), a choice (const code = cond ? 'a' : 'b';).
  { pattern: new RegExp(String.raw`kind: ${STRING}, code: ${STRING}`, 'g'), codes: (m) => [m[2]!], statuses: (m) => [statusOfKind[m[1]!]!] },
  { pattern: new RegExp(String.raw`\bslug: ${STRING}(?:\s*\|\s*${STRING})*`, 'g'), codes: (m) => literalsOf(m[0]), statuses: () => [] },
  {
    pattern: /\b(?:const|let) (?:code|slug) = ([^;]+);/g,
    codes: (m) => [...m[1]!.matchAll(new RegExp(String.raw`[?:]\s*${STRING}`, 'g'))].map((literal) => literal[1]!),
    statuses: () => [],
  },
];

function raiseSites(): RaiseSite[] {
  const sites: RaiseSite[] = [];
  for (const file of files) {
    for (const { pattern, codes, statuses } of raisePatterns) {
      for (const match of file.text.matchAll(pattern)) {
        const line = file.text.slice(0, match.index).split('\n').length;
        for (const code of codes(match)) sites.push({ code, file: file.path, line, statuses: statuses(match) });
      }
    }
  }
  return sites;
}

const sites = raiseSites();
const isCode = (code: string): code is ProblemCode => Object.hasOwn(problemCatalogue, code);
const statusesOf = (code: ProblemCode): number[] => {
  const { status } = problemCodeEntry(code);
  return typeof status === 'number' ? [status] : [...status];
};

describe('the problem-code catalogue', () => {
  it('gives every code a title, its statuses and a one-line description', () => {
    const faults: string[] = [];
    for (const code of problemCodes) {
      const { title, description, internal } = problemCodeEntry(code);
      if (!/^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/.test(code)) faults.push(`${code}: not a slug`);
      if (!(title.trim() === title && title.length > 0 && title.length <= 60 && !title.endsWith('.'))) faults.push(`${code}: title ${JSON.stringify(title)}`);
      const statuses = statusesOf(code);
      if (statuses.length === 0 || new Set(statuses).size !== statuses.length) faults.push(`${code}: statuses ${statuses.join(', ')}`);
      for (const status of statuses) if (!(Number.isInteger(status) && status >= 400 && status <= 599)) faults.push(`${code}: status ${status}`);
      if (!(description.length >= 20 && description.length <= 200 && !description.includes('\n'))) faults.push(`${code}: description of ${description.length} characters`);
      if (internal !== undefined && internal.length === 0) faults.push(`${code}: internal lists no edge`);
    }
    expect(faults).toEqual([]);
  });

  it('finds the raise sites in the source', () => {
    expect(sites.length).toBeGreaterThan(150);
    expect(new Set(sites.map((site) => site.file)).size).toBeGreaterThan(50);
  });

  it('lists every code the source raises: a free-text code is not in it and fails here', () => {
    const unknown = sites.filter((site) => !isCode(site.code)).map((site) => `${site.file}:${site.line} raises ${site.code}`);
    expect(unknown).toEqual([]);
  });

  it('keeps no dead code: every code of the catalogue is raised somewhere', () => {
    const raised = new Set(sites.map((site) => site.code));
    expect(problemCodes.filter((code) => !raised.has(code))).toEqual([]);
  });

  it("lists the status every raise site answers with among its code's", () => {
    const mismatches = sites
      .filter((site) => isCode(site.code))
      .flatMap((site) =>
        site.statuses
          .filter((status) => !statusesOf(site.code as ProblemCode).includes(status))
          .map((status) => `${site.file}:${site.line}: ${site.code} answered ${status}, the catalogue says ${statusesOf(site.code as ProblemCode).join('/')}`),
      );
    expect(mismatches).toEqual([]);
    // Each status the catalogue gives a code is one some site answers with, when all its sites say.
    const unused = problemCodes.flatMap((code) => {
      const raising = sites.filter((site) => site.code === code);
      if (raising.some((site) => site.statuses.length === 0)) return [];
      const said = new Set(raising.flatMap((site) => site.statuses));
      return statusesOf(code)
        .filter((status) => !said.has(status))
        .map((status) => `${code}: ${status} is never answered`);
    });
    expect(unused).toEqual([]);
  });

  it('marks internal exactly the codes the HTTP API cannot answer, with the edges that do', () => {
    // Who imports each file (value imports only: a type import raises nothing).
    const importers = new Map<string, string[]>();
    for (const file of files) {
      for (const specifier of importSpecifiers(file.text, { valuesOnly: true })) {
        if (!specifier.startsWith('.')) continue;
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), specifier));
        importers.set(target, [...(importers.get(target) ?? []), file.path]);
      }
    }
    type Edge = InternalEdge | 'api';
    // The edge a file is, if any. The console is mounted by app.ts but answers its pages as HTML,
    // the sandbox provider is a server of its own that the CLI starts: neither leads on to the API.
    const edgeOf = (file: string): Edge | undefined =>
      file === 'src/faces/http/app.ts' || file.startsWith('src/faces/http/routes/')
        ? 'api'
        : file === 'src/faces/http/sandbox-server.ts'
          ? 'sandbox-provider'
          : file.startsWith('src/faces/cli/')
            ? 'cli'
            : file.startsWith('src/faces/console/')
              ? 'console'
              : undefined;
    const edgesReaching = (start: string): Set<Edge> => {
      const edges = new Set<Edge>();
      const seen = new Set([start]);
      const queue = [start];
      while (queue.length > 0) {
        const file = queue.pop()!;
        const edge = edgeOf(file);
        if (edge) edges.add(edge);
        if (edge && edge !== 'console') continue;
        for (const importer of importers.get(file) ?? []) {
          if (edge === 'console' && edgeOf(importer) !== 'console' && edgeOf(importer) !== 'cli') continue;
          if (!seen.has(importer)) {
            seen.add(importer);
            queue.push(importer);
          }
        }
      }
      return edges;
    };
    const wrong: string[] = [];
    for (const code of problemCodes) {
      const edges = new Set<Edge>();
      for (const file of new Set(sites.filter((site) => site.code === code).map((site) => site.file))) edgesReaching(file).forEach((edge) => edges.add(edge));
      const { internal } = problemCodeEntry(code);
      const expected = edges.has('api') ? undefined : [...edges].sort().join(',');
      const actual = internal === undefined ? undefined : [...internal].sort().join(',');
      if (expected !== actual) wrong.push(`${code}: internal ${actual ?? '(none)'}, the raise sites reach ${[...edges].sort().join(',') || 'no edge'}`);
    }
    expect(wrong).toEqual([]);
  });
});
