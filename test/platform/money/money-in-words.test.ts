import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { problemCatalogue } from '../../../src/platform/shared/problem-codes.ts';
import { readSourceFiles } from '../../architecture/import-graph.ts';
import { moneyInWordsFaults } from '../../support/money-in-words.ts';

// Money a person reads is in major units with its currency (£31.42, 1,500 JPY), written by formatMoney
// (src/platform/money/money-text.ts): never "3142", never "minor units". This reads every place the
// service words something for a person (a refusal's message, a problem's detail, an exception's or
// finding's detail, a line of the command line, a console notice) and fails on "minor units" and on
// an amount interpolated as a bare number. The flows that print amounts are checked on what they
// really print with moneyInWordsFaults (test/support/money-in-words.ts): the CLI's credit matching
// (test/settlement/cash/credit-decisions-api.test.ts), re-runs and the pay-date views.

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Constructors whose first string argument (or second, after a code) is read by a person. */
const MESSAGE_CLASSES = /^(?:[A-Z]\w*Error|HttpProblem|InvalidArgumentError)$/;
/** Built-in errors are bugs, said to developers (RangeError: "must be a safe integer of minor units"). */
const DEVELOPER_CLASSES = new Set(['Error', 'RangeError', 'TypeError', 'AmountOutOfRangeError']);
/** Calls that print for a person. */
const PRINTING_CALLS = /^(?:console\.(?:log|error|warn)|print|process\.(?:stdout|stderr)\.write|program\.error|lines\.push|context\.redirectWithNotice|redirectWithNotice)$/;
/** Object members a person reads: a problem's or exception's detail, a parser's problem, a run's summary. */
const READ_MEMBERS = new Set(['detail', 'problem', 'summary', 'reason', 'notice']);

/** Names of values that hold money: interpolated bare, they print minor units. */
const MONEY_NAME =
  /^(?:amount|total|remaining|paidOut|paid_out|shortfall|received|expected|deducted|collected|owed|net|sum|unallocated|salary|balance|credits_total|requested|held|unmatched_amount|matched_amount|total_amount|deductionAmount)$/i;

interface Finding {
  file: string;
  line: number;
  text: string;
  fault: string;
}

/** The last name of an interpolated expression when it is a plain name or property chain (`row.amount` -> amount). */
function bareName(expression: ts.Expression): string | null {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
  if (ts.isNonNullExpression(expression) || ts.isParenthesizedExpression(expression)) return bareName(expression.expression);
  return null;
}

function wordedTexts(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  const check = (node: ts.Node) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    const visit = (inner: ts.Node) => {
      if (ts.isStringLiteral(inner) || ts.isNoSubstitutionTemplateLiteral(inner) || ts.isTemplateHead(inner) || ts.isTemplateMiddle(inner) || ts.isTemplateTail(inner)) {
        if (/minor units?\b/i.test(inner.text)) findings.push({ file, line, text: inner.text, fault: 'says "minor units"' });
      }
      if (ts.isTemplateSpan(inner)) {
        const name = bareName(inner.expression);
        if (name !== null && MONEY_NAME.test(name)) findings.push({ file, line, text: inner.getText(source), fault: `interpolates ${name} as a bare number` });
      }
      // A nested function (a formatter passed in) is not the message itself.
      if (ts.isArrowFunction(inner) || ts.isFunctionExpression(inner)) return;
      ts.forEachChild(inner, visit);
    };
    visit(node);
  };
  const walk = (node: ts.Node) => {
    if (ts.isNewExpression(node)) {
      const name = node.expression.getText(source);
      if (MESSAGE_CLASSES.test(name) && !DEVELOPER_CLASSES.has(name)) for (const argument of node.arguments ?? []) check(argument);
    } else if (ts.isCallExpression(node) && PRINTING_CALLS.test(node.expression.getText(source))) {
      for (const argument of node.arguments) check(argument);
    } else if (ts.isPropertyAssignment(node) && READ_MEMBERS.has(node.name.getText(source)) && !ts.isObjectLiteralExpression(node.initializer)) {
      check(node.initializer);
    }
    ts.forEachChild(node, walk);
  };
  walk(source);
  return findings;
}

/** Where a message names money on purpose in its own, non-money sense; each with why. */
const ALLOWED: ReadonlyArray<{ file: string; text: string; why: string }> = [
  // `expected` there counts a batch's entries.
  { file: 'src/settlement/cash/credit-identity.ts', text: 'expected}', why: 'a count of entries' },
  // The API's own integer amounts, each beside its money: the biller finds its field by the number.
  { file: 'src/collections/schedules/schedule-service.ts', text: 'sum} (${', why: 'the body’s integer, then formatMoney' },
  // The example of a validation error about an API field in integer minor units: the field's unit, not an amount.
  { file: 'src/faces/http/problem.ts', text: 'must be an integer in minor units', why: 'names the unit of an API field' },
];

describe('money in words', () => {
  it('never words money for a person in minor units, nor interpolates an amount as a bare number', () => {
    const files = readSourceFiles(root, ['src', 'jobs', 'bin']).filter((file) => !file.path.startsWith('src/platform/money/'));
    const faults = files
      .flatMap((file) => wordedTexts(file.path, file.text))
      .filter((finding) => !ALLOWED.some((allowed) => finding.file === allowed.file && finding.text.includes(allowed.text)))
      .map((finding) => `${finding.file}:${finding.line} ${finding.fault}: ${finding.text}`);
    expect(faults).toEqual([]);
  });

  it('finds the faults it looks for, on made-up code', () => {
    // The made-up source, as a file would hold it ("$" and "{" apart, so this file interpolates nothing).
    const code = [
      "throw new ConflictError('credit-over-allocated', `the credit has $ {remaining} minor units unmatched; the allocations add up to $ {total}`);",
      'console.log(`matched $ {m.amount} to payroll $ {m.payroll_id}`);',
      'exceptions.push({ detail: `Payroll deducted $ {record.deductionAmount} from an employee` });',
      'throw new RangeError(`amount must be an integer of minor units, got $ {amount}`);',
      'console.log(`matched $ {formatMoney(m.amount, currency)} to payroll $ {m.payroll_id} ($ {outcome.matches} matches)`);',
    ]
      .join('\n')
      .replaceAll('$ {', '${');
    expect(wordedTexts('made-up.ts', code).map((finding) => `${finding.line} ${finding.fault}`)).toEqual([
      '1 interpolates remaining as a bare number',
      '1 says "minor units"',
      '1 interpolates total as a bare number',
      '2 interpolates amount as a bare number',
      '3 interpolates deductionAmount as a bare number',
    ]);
  });

  it('describes no problem of the catalogue in minor units', () => {
    const faults = Object.entries(problemCatalogue)
      .filter(([, entry]) => /minor units?\b/i.test(`${entry.title} ${entry.description}`))
      .map(([code]) => code);
    expect(faults).toEqual([]);
  });

  it('documents the command line in major units: no option of the operators guide takes minor units', () => {
    const guide = readFileSync(path.join(root, 'docs/operators.md'), 'utf8') + readFileSync(path.join(root, 'docs/finance.md'), 'utf8');
    const commandLines = guide.split('\n').filter((line) => line.includes('deductions ') && /minor units?\b/i.test(line));
    expect(commandLines).toEqual([]);
  });

  it('knows money in words from money in minor units (the check the flows use)', () => {
    expect(moneyInWordsFaults('matched £31.42 to payroll p; £3,142.00 in 3 items; 1,500 JPY; 1.234 BHD; refunds -£0.01')).toEqual([]);
    expect(moneyInWordsFaults('the credit has 10000 minor units unmatched')).toEqual(['says "minor units"']);
    expect(moneyInWordsFaults('23 employees  £3142')).toEqual(['£3142 has no decimals, or not the currency’s']);
    expect(moneyInWordsFaults('reported £705.6')).toEqual(['£705.6 has no decimals, or not the currency’s']);
    expect(moneyInWordsFaults('Total GBP 290.58')).toEqual(['GBP 290.58 is not how formatMoney writes GBP (£290.58)']);
    expect(moneyInWordsFaults('collected 15200.00 GBP')).toEqual(['15200.00 GBP is not how formatMoney writes GBP (£15,200.00)']);
    expect(moneyInWordsFaults('owes 31.4 CHF')).toEqual(['31.4 CHF has no decimals, or not the currency’s']);
  });
});
