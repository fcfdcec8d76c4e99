import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

/**
 * /openapi.json as the service serves it, linted by Redocly CLI with the repository's redocly.yaml
 * (the recommended rules): no error and no warning may be left.
 */

const repositoryRoot = new URL('../../..', import.meta.url).pathname;
const redoclyCli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: Array<{ pointer?: string }>;
}

let t: TestApp;
let document: any;
let workDir: string;

beforeAll(async () => {
  t = await startTestApp();
  document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  workDir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
  await t?.close();
});

async function lint(file: string): Promise<{ totals: { errors: number; warnings: number }; problems: LintProblem[] }> {
  const run = promisify(execFile);
  const args = [redoclyCli, 'lint', file, '--config', join(repositoryRoot, 'redocly.yaml'), '--format', 'json', '--max-problems', '10000'];
  // No telemetry and no update check: the lint reads nothing but the document and the config.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const output = await run(process.execPath, args, { cwd: repositoryRoot, env, maxBuffer: 64 * 1024 * 1024 }).catch(
    // Redocly exits non-zero when it found errors; its report is on stdout all the same.
    (error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout) throw new Error(`redocly lint failed: ${error.stderr}`);
      return { stdout: error.stdout };
    },
  );
  return JSON.parse(output.stdout);
}

/**
 * Pairs of paths one request could match both of, with neither the more concrete one: each has a
 * template where the other has a literal segment (`/a/{x}/c` and `/a/b/{y}`). `/a/{x}` beside
 * `/a/b` is not ambiguous: OpenAPI (and the router) prefer the literal.
 */
function ambiguousPairs(paths: string[]): string[] {
  const segments = (path: string) => path.split('/');
  const templated = (segment: string) => /^\{.+\}$/.test(segment);
  const pairs: string[] = [];
  for (const [i, a] of paths.entries()) {
    for (const b of paths.slice(i + 1)) {
      const [sa, sb] = [segments(a), segments(b)];
      if (sa.length !== sb.length) continue;
      const overlap = sa.every((segment, k) => segment === sb[k] || templated(segment) || templated(sb[k]!));
      const aWider = sa.some((segment, k) => templated(segment) && !templated(sb[k]!));
      const bWider = sb.some((segment, k) => templated(segment) && !templated(sa[k]!));
      if (overlap && aWider && bWider) pairs.push([a, b].sort().join(' ~ '));
    }
  }
  return pairs.sort();
}

describe('redocly lint of /openapi.json', () => {
  it('finds no error and no warning with the recommended rules', async () => {
    const file = join(workDir, 'openapi.json');
    await writeFile(file, JSON.stringify(document, null, 2));
    const report = await lint(file);
    const problems = report.problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location.map((l) => l.pointer).join(', ')}: ${problem.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('fails a document with a known problem (the lint really runs)', async () => {
    const file = join(workDir, 'broken.json');
    const broken = structuredClone(document);
    delete broken.paths['/healthz'].get.summary;
    broken.components.schemas.PaymentResponse.example.amount = 'twenty-five pounds';
    await writeFile(file, JSON.stringify(broken));
    const report = await lint(file);
    expect(report.problems.map((problem) => problem.ruleId)).toEqual(expect.arrayContaining(['operation-summary', 'no-invalid-schema-examples']));
  }, 60_000);

  it('has no ambiguous paths but the ones the payroll reference interface fixes (redocly.yaml turns that rule off for them)', () => {
    expect(ambiguousPairs(Object.keys(document.paths))).toEqual([
      '/deductions/payroll/{payroll_id} ~ /deductions/{payroll_id}/confirmation',
      '/deductions/payroll/{payroll_id} ~ /deductions/{payroll_id}/instruction-file',
    ]);
    expect(ambiguousPairs(['/a/{id}', '/a/b', '/a/{other}', '/c/{x}/d', '/c/e/{y}'])).toEqual(['/c/e/{y} ~ /c/{x}/d']);
  });
});
