import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG 2.1 A and AA violations on the page, evaluated over the DevTools protocol: the
 * console's policy allows no script, and none is added to its pages. A page that reloads itself (a
 * re-run's progress page, every 2 s) may navigate while axe runs; the check then runs again on the
 * page it reloaded to, so a slow machine's check is not lost to the refresh.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.evaluate(async (source) => {
        // eslint-disable-next-line no-eval
        (0, eval)(source);
        const axe = (globalThis as unknown as { axe: { run(options: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
        const result = await axe.run({
          runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
          // A re-run's page reloads itself while it runs, with a link that stops it (WCAG 2.2.1 allows a
          // limit the user can turn off; axe flags every meta refresh, controllable or not).
          rules: { 'meta-refresh': { enabled: false } },
        });
        return result.violations.map((violation) => `${violation.id} (${violation.impact}, ${violation.nodes.length} nodes)`);
      }, axeSource);
    } catch (error) {
      if (attempt >= 5 || !/Execution context was destroyed|navigat/i.test(String(error))) throw error;
      await page.waitForLoadState('load');
    }
  }
}
