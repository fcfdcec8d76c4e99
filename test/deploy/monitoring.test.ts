import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attentionKinds, attentionUrgency, type AttentionKind } from '../../src/faces/attention/attention.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// The alerting rules, their unit tests, the example Prometheus configuration and the Grafana dashboard
// under deploy/ (docs/operators.md, "Alerts and dashboard"). promtool is Prometheus's own checker,
// from Debian's prometheus package (.ci/run installs it): a missing promtool fails this file, since
// rules nobody checked are rules that page nobody. The metric names the rules and the dashboard use are
// checked against a scrape of the real service, so a renamed metric cannot leave an alert silent.

const root = new URL('../..', import.meta.url).pathname;
const RULES = 'deploy/prometheus/deductions-alerts.yml';
// The alerts that look a day back have a file of their own, evaluated every 10 minutes instead of every minute.
const RULE_TESTS = ['deploy/prometheus/deductions-alerts.test.yml', 'deploy/prometheus/deductions-alerts.daily.test.yml'];
const PROMETHEUS_CONFIG = 'deploy/prometheus/prometheus.example.yml';
const DASHBOARD = 'deploy/grafana/deductions-dashboard.json';
const METRICS_TOKEN = 'metrics-token-for-monitoring-tests';

const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** promtool's output; its failure carries what promtool said, and a missing promtool says how to install it. */
function promtool(args: string[], cwd = root): string {
  try {
    return execFileSync('promtool', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error: any) {
    if (error.code === 'ENOENT') throw new Error('promtool is not installed: apt-get install prometheus (as .ci/run does)', { cause: error });
    throw new Error(`promtool ${args.join(' ')} exited ${error.status}:\n${error.stdout}${error.stderr}`, { cause: error });
  }
}

/**
 * The `expr` of every rule in a rules file: a one-line value or a folded block (`>-`), the two forms
 * deductions-alerts.yml uses. The count is checked against promtool's, so a form this misses fails.
 */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const expressions: string[] = [];
  lines.forEach((line, index) => {
    const match = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!match) return;
    const [, indent, value] = match as unknown as [string, string, string];
    if (!/^[>|]/.test(value)) {
      expressions.push(value.replace(/^(['"])(.*)\1$/, '$2'));
      return;
    }
    const block: string[] = [];
    for (const next of lines.slice(index + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= indent.length) break;
      block.push(next.trim());
    }
    expressions.push(block.join(' ').trim());
  });
  return expressions;
}

/** Metric names in PromQL: identifiers of the service's and Node's families, and `up`; strings and label values left out. */
function metricNames(expression: string): string[] {
  const code = expression.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  const identifiers = code.match(/(?<![\w:$])[a-z_:][a-z0-9_:]*/gi) ?? [];
  return identifiers.filter((name) => /^(deductions_|process_|nodejs_)/.test(name) || name === 'up');
}

/**
 * The sample names a scrape exposes: every family's `# TYPE` name, with the series a histogram or a
 * summary is exposed as, and every sample line's name.
 */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line);
    if (type) {
      const [, name, kind] = type as unknown as [string, string, string];
      names.add(name);
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      if (kind === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}

/** Names used but not exposed (`up` is Prometheus's own, about the scrape). */
const unexposed = (used: Iterable<string>, exposed: Set<string>) => [...new Set(used)].filter((name) => name !== 'up' && !exposed.has(name)).sort();

/** Every panel of a dashboard, those inside collapsed rows included. */
function allPanels(panels: any[]): any[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

const dashboard = JSON.parse(read(DASHBOARD));
const dashboardExpressions: string[] = allPanels(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target: any) => target.expr));
const rulesText = read(RULES);
const alertNames = [...rulesText.matchAll(/^\s*- alert: (\w+)$/gm)].map((match) => match[1]!);
const expressions = ruleExpressions(rulesText);
/** The series the rule tests feed in must be real metrics too, or a test passes on a name nobody exposes. */
const ruleTestsText = RULE_TESTS.map(read).join('\n');
const testSeriesNames = [...ruleTestsText.matchAll(/^\s*- series: '([a-zA-Z_:][a-zA-Z0-9_:]*)/gm)].map((match) => match[1]!);

describe('the alerting rules, with promtool', () => {
  it('are valid rules, one per alert, each with an expression', () => {
    const output = promtool(['check', 'rules', RULES]);
    expect(output).toContain(`SUCCESS: ${alertNames.length} rules found`);
    expect(expressions).toHaveLength(alertNames.length);
    expect(expressions.every((expression) => expression.length > 0)).toBe(true);
  });

  it('cover what must wake someone and what waits for a person', () => {
    expect(alertNames).toEqual(
      expect.arrayContaining([
        'DeductionsNightlyRunFailed',
        'DeductionsNightlyNotRun',
        'DeductionsNightlyNoSuccess',
        'DeductionsNoLiveWorker',
        'DeductionsWorkersUnknown',
        'DeductionsWebhookBacklog',
        'DeductionsWebhookEndpointsFailing',
        'DeductionsCreditsUnmatched',
        'DeductionsShortfallRecorded',
        'DeductionsJobsFailed',
        'DeductionsMetricsSourceDown',
        'DeductionsScrapeDown',
      ]),
    );
    expect(new Set(alertNames).size).toBe(alertNames.length);
  });

  it('fire on the series of their unit tests, and stay quiet on the others', () => {
    const output = promtool(['test', 'rules', ...RULE_TESTS]);
    expect(output.match(/^\s*SUCCESS$/gm)).toHaveLength(RULE_TESTS.length);
    expect(output).not.toContain('FAILED');
  });

  it('give every alert a unit test', () => {
    const tested = new Set([...ruleTestsText.matchAll(/^\s*alertname: (\w+)$/gm)].map((match) => match[1]!));
    expect(alertNames.filter((name) => !tested.has(name))).toEqual([]);
  });

  it('are loaded by the example Prometheus configuration, which promtool accepts', () => {
    // promtool refuses a credentials file it cannot read: check a copy beside a token file.
    const scratch = mkdtempSync(join(tmpdir(), 'prometheus-config-'));
    try {
      copyFileSync(join(root, PROMETHEUS_CONFIG), join(scratch, 'prometheus.yml'));
      copyFileSync(join(root, RULES), join(scratch, 'deductions-alerts.yml'));
      writeFileSync(join(scratch, 'deductions-metrics-token'), `${METRICS_TOKEN}\n`, { mode: 0o600 });
      const output = promtool(['check', 'config', 'prometheus.yml'], scratch);
      expect(output).toContain('SUCCESS: 1 rule files found');
      expect(output).toContain(`SUCCESS: ${alertNames.length} rules found`);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('the Grafana dashboard', () => {
  it('asks for its Prometheus data source, and every panel and query uses it', () => {
    expect(dashboard.schemaVersion).toBe(39);
    const variable = dashboard.templating.list.find((item: any) => item.type === 'datasource');
    expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
    const panels = allPanels(dashboard.panels).filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(12);
    const uids = panels.flatMap((panel) => [panel.datasource, ...panel.targets.map((target: any) => target.datasource)].map((source) => source?.uid));
    expect(new Set(uids)).toEqual(new Set([`\${datasource}`]));
  });

  it('has one id per panel and no panel over another', () => {
    const panels = allPanels(dashboard.panels);
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
    const overlaps = (a: any, b: any) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
    const found = panels.flatMap((a, i) =>
      panels
        .slice(i + 1)
        .filter((b) => overlaps(a.gridPos, b.gridPos))
        .map((b) => `${a.title} / ${b.title}`),
    );
    expect(found).toEqual([]);
    expect(panels.every((panel) => panel.gridPos.x + panel.gridPos.w <= 24)).toBe(true);
  });

  it('shows the figures operators act on', () => {
    const used = new Set(dashboardExpressions.flatMap(metricNames));
    for (const name of [
      'deductions_attention_items',
      'deductions_workers_alive',
      'deductions_nightly_last_success_timestamp_seconds',
      'deductions_nightly_last_success_duration_seconds',
      'deductions_queue_jobs',
      'deductions_job_attempts_total',
      'deductions_job_duration_seconds_bucket',
      'deductions_http_request_duration_seconds_count',
      'deductions_http_request_duration_seconds_bucket',
      'deductions_webhook_deliveries',
      'deductions_reconciliation_exceptions',
      'deductions_metrics_source_up',
    ]) {
      expect(used, name).toContain(name);
    }
  });
});

describe('metric names, against a scrape of the service', () => {
  let t: TestApp;
  let scrape: string;
  let exposed: Set<string>;

  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN } });
    const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.statusCode).toBe(200);
    scrape = response.body;
    exposed = exposedNames(scrape);
  });
  afterAll(async () => t?.close());

  it('reads the exposed names from a real scrape, histogram series included', () => {
    expect(exposed).toContain('deductions_http_request_duration_seconds_bucket');
    expect(exposed).toContain('deductions_job_attempts_total');
    expect(exposed).toContain('process_cpu_seconds_total');
    // What the check below would say of a misspelt name (a lost `s`), in a rule or a panel.
    expect(unexposed(metricNames('max(deductions_queue_job{state="failed"}) > 0 and up == 0'), exposed)).toEqual(['deductions_queue_job']);
    expect(metricNames('max by (kind) (deductions_attention_items{kind="nightly_run_failed", x="deductions_not_a_name"})')).toEqual(['deductions_attention_items']);
  });

  it('uses in the alerting rules only metrics the service exposes', () => {
    const used = expressions.flatMap(metricNames);
    expect(used).toContain('deductions_attention_items');
    expect(unexposed(used, exposed)).toEqual([]);
  });

  it('feeds the rules unit tests only series the service exposes (or the scrape health `up`)', () => {
    expect(testSeriesNames.length).toBeGreaterThan(alertNames.length);
    expect(unexposed(testSeriesNames, exposed)).toEqual([]);
  });

  it('uses in the dashboard only metrics the service exposes', () => {
    expect(unexposed(dashboardExpressions.flatMap(metricNames), exposed)).toEqual([]);
  });

  it('has an alert for every kind of attention item the service reports', () => {
    // The one kind alerted on through another metric: the service counts it exactly when that metric is 0.
    const alertedElsewhere: Record<string, string> = { worker_not_alive: 'DeductionsNoLiveWorker, on deductions_workers_alive == 0' };
    const kinds = [...scrape.matchAll(/^deductions_attention_items\{[^}]*\bkind="([^"]+)"/gm)].map((match) => match[1]!);
    expect(kinds).toEqual(expect.arrayContaining(Object.keys(alertedElsewhere)));
    const named = new Set(expressions.flatMap((expression) => [...expression.matchAll(/\bkind=~?"([^"]+)"/g)].flatMap((match) => match[1]!.split('|'))));
    expect(kinds.filter((kind) => !named.has(kind) && !(kind in alertedElsewhere))).toEqual([]);
  });

  it('pages for exactly the kinds the attention list calls urgent, and raises tickets for the rest', () => {
    const paged = new Set<string>(['worker_not_alive']);
    const ticketed = new Set<string>();
    for (const block of rulesText.split(/^\s*- alert: /m).slice(1)) {
      const kindsOfAlert = [...block.matchAll(/\bkind=~?"([^"]+)"/g)].flatMap((match) => match[1]!.split('|'));
      const severity = /^\s*severity: (\w+)$/m.exec(block)?.[1];
      for (const kind of kindsOfAlert) (severity === 'page' ? paged : ticketed).add(kind);
    }
    const urgent = attentionKinds.filter((kind) => attentionUrgency[kind] === 'urgent');
    expect([...paged].sort()).toEqual([...urgent].sort());
    expect([...ticketed].filter((kind) => attentionUrgency[kind as AttentionKind] === 'urgent')).toEqual([]);
  });
});
