import { html, type Html, type HtmlValue } from './html.ts';
import type { ConsoleSession } from './console-user-service.ts';
import { errorSummary, type FormRefusal } from './console-form-refusal.ts';

export interface ConsolePageView {
  title: string;
  body: Html;
  /** The nav entry to mark as the current page. */
  section?: ConsoleSection;
  /** Reload the page every N seconds (progress pages), without script. */
  refreshSeconds?: number;
  /** A line at the top of the page after an action (a redirect's `notice`). */
  notice?: string | undefined;
  /** The page's form was refused: the error summary goes at the top, and the title says so. */
  refusal?: FormRefusal | undefined;
  /** A read-only page read off the read replica: where its data came from and how far behind (describeReadSource). */
  dataAsOf?: string | undefined;
}

export const consoleSections = [
  { id: 'overview', label: 'Overview', href: '/console' },
  { id: 'runs', label: 'Runs', href: '/console/runs' },
  { id: 'reconciliation', label: 'Reconciliation', href: '/console/reconciliation' },
  { id: 'cash', label: 'Cash', href: '/console/cash' },
  { id: 'payouts', label: 'Payouts', href: '/console/payouts' },
  { id: 'webhooks', label: 'Webhooks', href: '/console/webhooks' },
  { id: 'jobs', label: 'Failed jobs', href: '/console/jobs' },
  { id: 'queues', label: 'Queues', href: '/console/queues/' },
] as const;
export type ConsoleSection = (typeof consoleSections)[number]['id'];

/** Every console page: one stylesheet from this service, a skip link, the nav, and sign-out as a form (POST with its CSRF token). */
export function consolePage(view: ConsolePageView, session: ConsoleSession | null, csrfToken: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${view.refreshSeconds ? html`<meta http-equiv="refresh" content="${view.refreshSeconds}">` : ''}
<title>${view.refusal ? 'Error: ' : ''}${view.title} · Salary deductions console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="data:,">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Salary deductions console</span>
  ${
    session
      ? html`<nav aria-label="Sections"><ul>${consoleSections.map(
          (section) => html`<li><a href="${section.href}"${section.id === view.section ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
        )}</ul></nav>
  <form class="who" method="post" action="/console/sign-out">
    <span>${session.name} (${session.role})</span>
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <button type="submit">Sign out</button>
  </form>`
      : ''
  }
</header>
<main id="main">
${view.refusal ? errorSummary(view.refusal) : ''}
<h1>${view.title}</h1>
${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
${view.dataAsOf ? html`<p class="data-as-of">${view.dataAsOf}</p>` : ''}
${view.body}
</main>
</body>
</html>
`;
}

/** A table with a caption and header cells; rows are already-built cells. */
export function dataTable(caption: string, headers: readonly string[], rows: readonly (readonly HtmlValue[])[], empty = 'Nothing to show.'): Html {
  if (rows.length === 0) return html`<p class="empty">${caption}: ${empty}</p>`;
  return html`<div class="table"><table>
<caption>${caption}</caption>
<thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody>${rows.map((cells) => html`<tr>${cells.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A form that POSTs an action with its CSRF token; `fields` are the visible inputs. */
export function actionForm(action: string, csrfToken: string, submitLabel: string, fields: HtmlValue = ''): Html {
  return html`<form method="post" action="${action}" class="action">
<input type="hidden" name="_csrf" value="${csrfToken}">
${fields}
<button type="submit">${submitLabel}</button>
</form>`;
}

/**
 * A status word with a symbol, so it reads without colour. A shortfall (money already paid out that
 * is owed back) stands out from every other bad status; what waits for a person's look is marked apart.
 */
export function statusBadge(status: string): Html {
  const tone = /shortfall/.test(status)
    ? 'owed'
    : /fail|error|abandon|disabled|unreconciled|unfinished|short|late|overdue/.test(status)
      ? 'bad'
      : /held|conflicting|unusable|unresolved/.test(status)
        ? 'attention'
        : /complete|paid|ok|succeed|reconciled|finished|delivered|locked|instructed|confirmed|received/.test(status)
          ? 'good'
          : 'neutral';
  const symbol = tone === 'owed' || tone === 'attention' ? '⚠' : tone === 'bad' ? '✗' : tone === 'good' ? '✓' : '•';
  return html`<span class="status status-${tone}"><span aria-hidden="true">${symbol}</span> ${status}</span>`;
}
