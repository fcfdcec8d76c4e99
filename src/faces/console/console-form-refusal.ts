import { html, type Html } from './html.ts';

// A form the service refused (a validation or a state refusal, never a fault of ours) is shown again
// on its own page, as GOV.UK's error summary pattern has it: at the top, what did not happen and each
// reason, every one linking to the field it is about; below, the form with what the person entered.

/** One reason a form was refused, and the id of the field it is about when it is about one. */
export interface FormRefusalReason {
  detail: string;
  fieldId?: string | undefined;
}

/** A refused form, as its page is rendered again. */
export interface FormRefusal {
  /** What did not happen, the summary's heading: "The match was not made". */
  heading: string;
  reasons: readonly FormRefusalReason[];
  /** The path the form posted to: only the form with this action is filled again. */
  action: string;
  /** What was entered, by field name (never the form token, never a file). */
  values: Readonly<Record<string, string>>;
  /** A file was being uploaded: a browser cannot be handed it back, so it is chosen again. */
  fileDropped: boolean;
}

/** A reason as a sentence: the service's refusals start with a word in lower case ("the credit has..."); a file name stays as it is. */
const sentence = (text: string) => (/^[a-z]+ /.test(text) ? text[0]!.toUpperCase() + text.slice(1) : text);

/** The error summary at the top of a page whose form was refused. */
export function errorSummary(refusal: FormRefusal): Html {
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
<h2 id="error-summary-title">${refusal.heading}</h2>
<ul>
${refusal.reasons.map((reason) => html`<li>${reason.fieldId ? html`<a href="#${reason.fieldId}">${sentence(reason.detail)}</a>` : sentence(reason.detail)}</li>`)}
</ul>
<p>Nothing was changed. ${
    refusal.fileDropped
      ? 'Correct what is listed and send the form again. The file is not kept (a browser cannot be handed a file back): choose it again; any other field is as you left it.'
      : 'Correct what is listed and send the form again: the form below is as you left it.'
  }</p>
</div>`;
}

/**
 * What the person entered in the form posting to `action`, when that is the form refused: a field's
 * value ('' when none), whether a choice was the one made, and the marks of a field a reason is about.
 */
export function enteredIn(refusal: FormRefusal | undefined, action: string) {
  const values = refusal?.action === action ? refusal.values : {};
  const invalidIds = new Set(refusal?.action === action ? refusal.reasons.flatMap((reason) => (reason.fieldId ? [reason.fieldId] : [])) : []);
  return {
    value: (name: string): string => values[name] ?? '',
    selected: (name: string, option: string): Html | string => (values[name] === option ? html` selected` : ''),
    checked: (name: string, option: string): Html | string => (values[name] === option ? html` checked` : ''),
    /** ` aria-invalid="true"` on a field a reason links to. */
    invalid: (fieldId: string): Html | string => (invalidIds.has(fieldId) ? html` aria-invalid="true"` : ''),
  };
}
