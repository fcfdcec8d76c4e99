import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { cashPolicy, parsedStatement, reconciledPayDate } from '../../support/cash.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { moneyInWordsFaults } from '../../support/money-in-words.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

// A person's decisions over the API and the CLI: what an import made of each entry, setting a credit
// aside and restoring it, and placing a reversal no rule could place.

let t: TestApp;
let operator: Record<string, string>;
let account: { sort_code: string; account_number: string };
beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
  operator = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

let number = 0;
const importCredits = (credits: Parameters<typeof parsedStatement>[2]) => {
  const read = parsedStatement(account, `API-${++number}`, credits, { format: 'camt.053' });
  return t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: cliActor('test'), policy: cashPolicy('2026-11-02') }));
};
const post = (url: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url, headers: { ...operator, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers: operator });

describe('credits a person decides on', () => {
  it("lists a statement's entries with what the import made of each", async () => {
    const outcome = await importCredits([{ amount: 500 }, { amount: 0, problem: "the entry's amount is zero" }, { amount: 90, direction: 'debit' }]);
    const response = await get(`/bank-statements/${outcome.statement.id}/entries`);
    expect(response.statusCode).toBe(200);
    expect(response.json().entries.map((e: { outcome: string; entry_index: number }) => [e.entry_index, e.outcome])).toEqual([
      [0, 'new'],
      [1, 'unusable'],
      [2, 'debit'],
    ]);
    const statement = await get(`/bank-statements/${outcome.statement.id}`);
    expect(statement.json().bank_statement).toMatchObject({ entry_outcomes: { new: 1, unusable: 1, debit: 1 }, page_number: 1, last_page: true });
    expect((await get('/bank-statements/00000000-0000-7000-8000-000000000000/entries')).statusCode).toBe(404);
  });

  it('sets a credit aside with a category and reason (422 without), shows its state, and restores it', async () => {
    const outcome = await importCredits([{ amount: 4_321, remittanceInformation: 'INTEREST' }]);
    const creditId = outcome.statements[0]!.entries[0]!.creditId!;
    const missing = await post(`/bank-credits/${creditId}/set-aside`, { category: 'bank_interest' });
    expect(missing.statusCode).toBe(422);
    const wrong = await post(`/bank-credits/${creditId}/set-aside`, { category: 'gift', reason: 'x' });
    expect(wrong.statusCode).toBe(422);

    const aside = await post(`/bank-credits/${creditId}/set-aside`, { category: 'bank_interest', reason: 'interest for November' });
    expect(aside.statusCode).toBe(200);
    expect(aside.json().bank_credit).toMatchObject({
      id: creditId,
      state: 'set_aside',
      set_aside_category: 'bank_interest',
      state_reason: 'interest for November',
      booked: true,
    });
    const queue = await get('/bank-credits?limit=1000');
    expect(queue.json().bank_credits.map((c: { id: string }) => c.id)).not.toContain(creditId);
    expect((await post(`/bank-credits/${creditId}/set-aside`, { category: 'other', reason: 'again' })).statusCode).toBe(409);

    const restored = await post(`/bank-credits/${creditId}/restore`, { reason: 'not interest after all' });
    expect(restored.statusCode).toBe(200);
    expect(restored.json().bank_credit).toMatchObject({ state: 'open', set_aside_category: null });
    expect((await post(`/bank-credits/${creditId}/restore`, { reason: 'again' })).statusCode).toBe(409);
    const shown = await get(`/bank-credits/${creditId}`);
    expect(shown.json().bank_credit).toMatchObject({ state: 'open', state_reason: 'not interest after all' });
  });

  it('lists an unresolved reversal and places it on the credit a person names', async () => {
    const w = await reconciledPayDate(t.db);
    await importCredits([
      { amount: 24_800, remittanceInformation: w.reference },
      { amount: 24_800, remittanceInformation: 'another payer' },
    ]);
    const outcome = await importCredits([{ amount: 24_800, direction: 'debit', reversal: true, bookingDate: '2026-10-31' }]);
    expect(outcome.reversals).toMatchObject({ unresolved: 1 });
    const listed = await get('/bank-reversals');
    const entry = listed.json().entries.find((e: { bank_statement_id: string }) => e.bank_statement_id === outcome.statement.id);
    expect(entry).toMatchObject({ outcome: 'unresolved_reversal', amount: 24_800, direction: 'debit' });

    const [credit] = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', w.reference).execute();
    const wrongAmount = await t.db.selectFrom('bank_credits').select('id').where('amount', '<>', 24_800).executeTakeFirstOrThrow();
    expect((await post(`/bank-reversals/${entry.id}/place`, { bank_credit_id: wrongAmount.id, reason: 'bank says so' })).statusCode).toBe(422);
    const placed = await post(`/bank-reversals/${entry.id}/place`, { bank_credit_id: credit!.id, reason: 'bank recalled it' });
    expect(placed.statusCode).toBe(200);
    expect(placed.json()).toEqual({ entry_id: entry.id, bank_credit_id: credit!.id, shortfall: 0 });
    const remittance = await get(`/remittances/${w.payroll.id}/2026-10-30`);
    expect(remittance.json().remittance).toMatchObject({ received: 0, shortfall: 0 });
    expect((await get('/bank-reversals')).json().entries.map((e: { id: string }) => e.id)).not.toContain(entry.id);
  });

  it('sets a credit aside from the CLI, refusing a category it does not know', async () => {
    const outcome = await importCredits([{ amount: 777, remittanceInformation: 'RETURN ME' }]);
    const creditId = outcome.statements[0]!.entries[0]!.creditId!;
    const env = cliEnvOf(t.config);
    const aside = await runDeductions(
      ['credits', 'set-aside', '--credit', creditId, '--category', 'returned_to_sender', '--reason', 'sent back to the payer', '--by', 'clerk'],
      env,
    );
    expect(aside.stderr).toBe('');
    expect(aside.stdout).toContain(`credit ${creditId} set aside (returned_to_sender): £7.77 leaves the queue`);
    const stored = await t.db.selectFrom('bank_credits').select(['state', 'state_changed_by']).where('id', '=', creditId).executeTakeFirstOrThrow();
    expect(stored).toEqual({ state: 'set_aside', state_changed_by: 'clerk' });
    const bad = await runDeductions(['credits', 'set-aside', '--credit', creditId, '--category', 'gift', '--reason', 'x'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('expected one of not_a_remittance, bank_interest, returned_to_sender, duplicate, other');
  }, 90_000);

  it('matches a credit by hand from the CLI in major units, refusing minor units and more decimals than the currency has, and says money in words', async () => {
    const w = await reconciledPayDate(t.db);
    const outcome = await importCredits([{ amount: 30_000, remittanceInformation: 'PAYROLL NOV' }]);
    const creditId = outcome.statements[0]!.entries[0]!.creditId!;
    const env = cliEnvOf(t.config);
    const match = (...args: string[]) => runDeductions(['credits', 'match', '--credit', creditId, ...args, '--reason', 'employer confirmed', '--by', 'clerk'], env);
    const outputs: string[] = [];
    const ran = async (run: Promise<{ code: number | null; stdout: string; stderr: string }>) => {
      const result = await run;
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    // The old form, minor units in --to, is refused whole: 24800 would now mean £24,800.00.
    const old = await ran(match('--to', `${w.payroll.id}:2026-10-30:24800`));
    expect(old.code).not.toBe(0);
    expect(old.stderr).toContain('expected PAYROLL_ID:PAY_DATE; give the amount with --amount, in major units (--amount 31.42)');
    const fine = await ran(match('--to', `${w.payroll.id}:2026-10-30`, '--amount', '248.005'));
    expect(fine.code).toBe(1);
    expect(fine.stderr).toBe('--amount 248.005: 248.005 has more decimal places than GBP allows (at most 2 decimal places)\n');
    const unpaired = await ran(match('--to', `${w.payroll.id}:2026-10-30`, '--amount', '100', '--amount', '48'));
    expect(unpaired.code).not.toBe(0);
    expect(unpaired.stderr).toContain('give one --amount for each --to (1 --to, 2 --amount)');
    const over = await ran(match('--to', `${w.payroll.id}:2026-10-30`, '--amount', '400'));
    expect(over.code).toBe(1);
    expect(over.stderr).toBe('the credit has £300.00 unmatched; the allocations add up to £400.00\n');
    expect(await t.db.selectFrom('remittance_matches').select('id').where('bank_credit_id', '=', creditId).execute()).toEqual([]);

    const matched = await ran(match('--to', `${w.payroll.id}:2026-10-30`, '--amount', '248'));
    const named = await t.db
      .selectFrom('payrolls as p')
      .innerJoin('employers as e', 'e.id', 'p.employer_id')
      .select(['p.name', 'e.name as employer'])
      .where('p.id', '=', w.payroll.id)
      .executeTakeFirstOrThrow();
    const payrollName = `${named.employer}: ${named.name}`;
    expect(matched.stderr).toBe('');
    const [stored] = await t.db.selectFrom('remittance_matches').select(['id', 'amount']).where('bank_credit_id', '=', creditId).execute();
    expect(stored!.amount).toBe(24_800);
    expect(matched.stdout).toBe(`matched £248.00 to ${payrollName} (payroll ${w.payroll.id}), pay date 2026-10-30 (match ${stored!.id})\n`);

    const listed = await ran(runDeductions(['credits', 'list'], env));
    expect(listed.stdout).toContain('£52.00 of £300.00');
    await ran(runDeductions(['remittances', 'list'], env));
    await ran(runDeductions(['statements', 'list'], env));
    const unmatched = await ran(runDeductions(['unmatch', '--match', stored!.id, '--reason', 'wrong pay date', '--by', 'clerk'], env));
    expect(unmatched.stdout).toBe(
      `unmatched £248.00 from ${payrollName} (payroll ${w.payroll.id}), pay date 2026-10-30; received now £0.00; 0 unpaid entries lost their funding\n`,
    );

    // Everything the commands said, money in words: never minor units, never an amount without its pence.
    expect(outputs.flatMap(moneyInWordsFaults)).toEqual([]);
  }, 120_000);
});
