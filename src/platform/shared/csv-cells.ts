// Every CSV this service writes is opened in a spreadsheet by someone (finance, a payroll clerk, a bank
// upload screen). A spreadsheet runs a cell that starts with '=', '+', '-' or '@' as a formula (and some
// strip a leading tab or carriage return first), so a name or reference that came from outside, such as
// an employer called "=HYPERLINK(...)", could run in their session. Such text gets a leading apostrophe,
// which spreadsheets show as text and never evaluate (OWASP's CSV injection advice, and csv-stringify's
// `escape_formulas`). Amounts are not touched: they are decimals this service formats, a leading minus
// is their sign, and finance must be able to add them up.

const FORMULA_START = /^[=+\-@\t\r]/;

/** Text from outside as a CSV cell a spreadsheet will show, never evaluate. */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}
