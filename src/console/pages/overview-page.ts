import { listRuns } from '../../runs/run-history-service.ts';
import { dataTable, statusBadge } from '../console-layout.ts';
import type { ConsolePageModule } from '../console-plugin.ts';
import { formatInstant } from '../console-format.ts';
import { html } from '../html.ts';

/** The landing page: how last night went, and where to look next. */
export const registerOverviewPage: ConsolePageModule = (app, context) => {
  app.get('/', async (request, reply) => {
    const [lastNightly] = await listRuns(context.deps.db, { kind: 'nightly', limit: 1 });
    const recent = await listRuns(context.deps.db, { limit: 10 });
    return context.page(request, reply, {
      title: 'Overview',
      section: 'overview',
      body: html`<section aria-labelledby="last-night">
<h2 id="last-night">Last nightly run</h2>
${lastNightly
  ? html`<p class="last-run">${statusBadge(lastNightly.outcome)} <a href="/console/runs/nightly/${lastNightly.id}">${lastNightly.summary}</a>, started ${formatInstant(lastNightly.startedAt)}, finished ${formatInstant(lastNightly.finishedAt)}.</p>`
  : html`<p class="empty">No nightly run yet.</p>`}
</section>
<section aria-labelledby="recent-runs">
<h2 id="recent-runs">Recent runs</h2>
${dataTable(
  'The ten latest runs of every kind',
  ['Kind', 'Started', 'Outcome', 'Summary'],
  recent.map((run) => [run.kind, formatInstant(run.startedAt), statusBadge(run.outcome), html`<a href="/console/runs/${run.kind}/${run.id}">${run.summary}</a>`]),
)}
</section>`,
    });
  });
};
