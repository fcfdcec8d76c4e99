import { attentionSummary, formatAge, type AttentionKind, type AttentionList } from '../../attention/attention.ts';
import { formatInstant } from '../console-format.ts';
import { html, type Html } from '../html.ts';

/** Where all of a kind are listed, for a kind with more items than the overview shows. */
const listOf: Record<AttentionKind, string> = {
  worker_not_alive: '/console/queues/',
  nightly_not_run: '/console/runs?kind=nightly',
  nightly_run_failed: '/console/runs?kind=nightly',
  run_stuck: '/console/runs',
  reconciliation_run_failed: '/console/runs?kind=reconciliation',
  payout_run_failed: '/console/runs?kind=payout',
  job_failed: '/console/jobs',
  pay_date_not_ready: '/console/runs?kind=nightly',
  shortfall: '/console/cash/remittances?status=shortfall',
  remittance_late: '/console/cash/remittances?status=late',
  remittance_short: '/console/cash/remittances?status=short',
  remittance_over: '/console/cash/remittances?status=over',
  credit_unmatched: '/console/cash/credits',
  payout_awaiting_bank: '/console/payouts?status=pending',
  webhook_endpoint_failing: '/console/webhooks',
};

const kindWords: Record<AttentionKind, string> = {
  worker_not_alive: 'dead workers',
  nightly_not_run: 'nightly runs not run',
  nightly_run_failed: 'pay dates the nightly run could not lock',
  run_stuck: 'stuck runs',
  reconciliation_run_failed: 'failed reconciliations',
  payout_run_failed: 'failed payout runs',
  job_failed: 'failed jobs',
  pay_date_not_ready: 'pay dates due whose payroll is not ready',
  shortfall: 'shortfalls',
  remittance_late: 'late remittances',
  remittance_short: 'short remittances',
  remittance_over: 'remittances over',
  credit_unmatched: 'credits to match',
  payout_awaiting_bank: 'payouts waiting for the bank',
  webhook_endpoint_failing: 'failing webhook endpoints',
};

/**
 * The overview's first section: what needs someone this morning, urgent first then oldest, each
 * with its age and a link to the page where it is resolved.
 */
export function attentionSection(list: AttentionList, now: Date): Html {
  const listed = new Map<AttentionKind, number>();
  for (const item of list.items) listed.set(item.kind, (listed.get(item.kind) ?? 0) + 1);
  const more = (Object.entries(list.counts) as Array<[AttentionKind, number]>)
    .map(([kind, count]) => [kind, count - (listed.get(kind) ?? 0)] as const)
    .filter(([, count]) => count > 0);
  return html`<section aria-labelledby="attention" class="attention">
<h2 id="attention">Needs attention</h2>
<p class="attention-summary">${attentionSummary(list)}</p>
${
  list.items.length === 0
    ? ''
    : html`<div class="table"><table class="attention-list">
<caption>What needs attention, urgent first, then oldest first</caption>
<thead><tr><th scope="col">Urgency</th><th scope="col">What</th><th scope="col">Waiting</th><th scope="col">Where to resolve it</th></tr></thead>
<tbody>${list.items.map(
        (item) =>
          html`<tr data-kind="${item.kind}"><td><span class="status ${item.urgency === 'urgent' ? 'status-bad' : 'status-attention'}">${item.urgency === 'urgent' ? '✖ Urgent' : '⚠ Today'}</span></td><td>${item.what}</td><td><span title="since ${formatInstant(item.since)}">${formatAge(item.since, now)}</span></td><td><a href="${item.href}">${item.action}</a></td></tr>`,
      )}</tbody>
</table></div>`
}
${more.length === 0 ? '' : html`<ul class="attention-more">${more.map(([kind, count]) => html`<li><a href="${listOf[kind]}">${count} more ${kindWords[kind]}</a></li>`)}</ul>`}
</section>`;
}
