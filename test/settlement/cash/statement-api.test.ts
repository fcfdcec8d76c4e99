import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate } from '../../support/cash.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createBiller, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

// Bank statements over the API and the CLI: a good file imported once, every bad one refused whole with
// a ProblemDetails (or one CLI line) saying why and where, nothing stored.

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

let t: TestApp;
let operator: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp({ env: { STATEMENT_LIMIT_BYTES: '65536' } });
  // The fixtures' account: 60-16-13 31926819, in GBP.
  await t.db
    .insertInto('collection_accounts')
    .values({ currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Collections Ltd' })
    .execute();
  operator = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

const post = (body: string | Buffer, contentType: string, headers: Record<string, string> = operator, query = '') =>
  t.app.inject({ method: 'POST', url: `/bank-statements${query}`, headers: { ...headers, 'content-type': contentType }, payload: body });
const statementCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('bank_statements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const creditCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('bank_credits')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /bank-statements', () => {
  it('imports a camt.053 file once: 201 with its credits, then 200 replayed with nothing changed', async () => {
    const file = fixture('camt053-v02.xml');
    const first = await post(file, 'application/xml', operator, '?file_name=camt053-v02.xml');
    expect(first.statusCode).toBe(201);
    const body = first.json();
    expect(body).toMatchObject({ replayed: false, statement: { format: 'camt.053', file_name: 'camt053-v02.xml', currency: 'GBP' } });
    const stored = await t.db.selectFrom('bank_credits').select(['amount', 'bank_reference']).where('bank_statement_id', '=', body.statement.id).execute();
    expect(stored.length).toBe(body.statement.credits);
    expect(stored.reduce((sum, c) => sum + c.amount, 0)).toBe(body.statement.credits_total);
    expect(body.statement.debits_ignored).toBeGreaterThan(0);

    const again = await post(file, 'application/xml');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ replayed: true, new_credits: 0, matching: null, statement: { id: body.statement.id } });
    expect(await statementCount()).toBe(1);

    const listed = await t.app.inject({ method: 'GET', url: '/bank-statements', headers: operator });
    expect(listed.json().bank_statements.map((s: { id: string }) => s.id)).toEqual([body.statement.id]);
    const queue = await t.app.inject({ method: 'GET', url: '/bank-credits', headers: operator });
    // No remittance exists here, so every credit waits in the exceptions queue.
    expect(queue.json().bank_credits).toHaveLength(stored.length);
  });

  it.each([
    [
      'a DTD (no entity is ever expanded)',
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>',
      'application/xml',
      /DOCTYPE/i,
    ],
    ['malformed XML', '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt></Document>', 'application/xml', /line 1/],
    [
      'an account that is not ours',
      'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account\nS-X,11-22-33,12345678,GBP,R1,2026-11-27,,credit,10.00,SDR1,,\n',
      'text/csv',
      /11-22-33 12345678, which is not one of our collection accounts/,
    ],
    [
      'another currency than the account',
      'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account\nS-E,60-16-13,31926819,EUR,R1,2026-11-27,,credit,10.00,SDR1,,\n',
      'text/csv',
      /in EUR; collection account 60-16-13 31926819 holds GBP/,
    ],
  ])('refuses %s with a 422 problem saying why and where, and stores nothing', async (_what, body, contentType, detail) => {
    const before = [await statementCount(), await creditCount()];
    const response = await post(body, contentType);
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json()).toMatchObject({ title: 'Bank statement rejected' });
    expect(response.json().detail).toMatch(detail);
    expect([await statementCount(), await creditCount()]).toEqual(before);
  });

  it('imports entries it cannot use or that repeat a bank reference, saying per entry what became of them', async () => {
    const header = 'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account\n';
    const body =
      header +
      'S-DZ,60-16-13,31926819,GBP,R1,2026-11-27,,credit,10.00,SDR1,,\n' +
      'S-DZ,60-16-13,31926819,GBP,R1,2026-11-27,,credit,11.00,SDR2,,\n' +
      'S-DZ,60-16-13,31926819,GBP,R2,2026-11-27,,credit,0.00,SDR3,,\n';
    const response = await post(body, 'text/csv');
    expect(response.statusCode).toBe(201);
    const [imported] = response.json().statements;
    expect(imported.entries.map((e: { bank_reference: string; outcome: string; amount: number }) => [e.bank_reference, e.outcome, e.amount])).toEqual([
      ['R1', 'new', 1_000],
      ['R1', 'new', 1_100],
      ['R2', 'unusable', 0],
    ]);
    expect(imported.entries[2].detail).toMatch(/zero/);
    expect(imported.statement.entry_outcomes).toEqual({ new: 2, unusable: 1 });
  });

  it('refuses a file over the limit (413), a body that is neither XML nor CSV (415), another statement with the same id (409), and billers (403)', async () => {
    const big = `${'x'.repeat(70_000)}`;
    expect((await post(big, 'text/csv')).statusCode).toBe(413);
    expect((await post('{}', 'application/json')).statusCode).toBe(415);
    // The same statement in another file (here, with a comment) is the same statement: replayed.
    const commented = fixture('camt053-v02.xml').toString('utf8').replace('</BkToCstmrStmt>', '</BkToCstmrStmt><!-- another file -->');
    expect((await post(commented, 'application/xml')).json()).toMatchObject({ replayed: true });
    const changed = fixture('camt053-v02.xml').toString('utf8').replace('<Amt Ccy="GBP">1250.00</Amt>', '<Amt Ccy="GBP">1250.01</Amt>');
    const conflict = await post(changed, 'application/xml');
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ bank_statement_id: expect.any(String) });
    const biller = await authHeaders(t.app, await createBiller(t.db));
    expect((await post(fixture('statement.csv'), 'text/csv', biller)).statusCode).toBe(403);
  });
});

describe('statements banks published (test/settlement/cash/fixtures/public, see its PROVENANCE.md)', () => {
  const publicFile = (name: string) => readFileSync(new URL(`./fixtures/public/${name}`, import.meta.url));
  const outcomesOf = (statement: { entries: Array<{ outcome: string }> }) => statement.entries.map((entry) => entry.outcome);

  it('imports each whole: no entry lost, reversals and returns placed or left for a person, integrity recorded', async () => {
    // Goldman Sachs' two statements are of two accounts of its own: once ours, now replaced (inactive).
    for (const accountNumber of ['60000635', '50000970']) {
      await t.db
        .insertInto('collection_accounts')
        .values({ currency: 'GBP', account_number: accountNumber, sort_code: '04-29-62', account_holder_name: 'Collections Ltd', active: false })
        .execute();
    }
    const goldman = await post(publicFile('goldman-sachs-uk-camt053-v02.xml'), 'application/xml');
    expect(goldman.statusCode).toBe(201);
    const statements = goldman.json().statements;
    // Two statements in one file; the second's closing balance is 108.35 off as published.
    expect(statements).toHaveLength(2);
    expect(statements[1].statement.integrity_findings.map((f: { code: string }) => f.code)).toContain('balance_mismatch');
    // Its BACS credit payment return (CRDT, RvslInd true, PMNT/ICDT/ARET) is a payment of ours coming back: held, never a remittance.
    expect(statements.flatMap(outcomesOf).filter((outcome: string) => outcome === 'held')).toHaveLength(1);

    const outcomes = new Map<string, string[]>();
    for (const name of ['postfinance-camt053-v04.xml', 'postfinance-camt054-v08.xml', 'iso20022-business-sample-camt053-v04.xml']) {
      const response = await post(publicFile(name), 'application/xml', operator, `?file_name=${name}`);
      expect(response.statusCode, name).toBe(201);
      const body = response.json();
      const entries = body.statements.flatMap(outcomesOf);
      expect(entries.length, name).toBeGreaterThan(0);
      const listed = await t.app.inject({ method: 'GET', url: `/bank-statements/${body.statement.id}/entries`, headers: operator });
      expect(listed.json().entries.length, name).toBe(body.statements[0].entries.length);
      outcomes.set(name, entries);
    }
    // PostFinance's two direct-debit refunds (DBIT, RvslInd true, MD06) take back credits this account never had: left for a person.
    expect(outcomes.get('postfinance-camt053-v04.xml')!.filter((outcome) => outcome === 'unresolved_reversal').length).toBeGreaterThanOrEqual(2);
  });
});

describe('manual matching over the API', () => {
  it('matches a waiting credit by hand and takes the match back, answering the matches as stored', async () => {
    const w = await reconciledPayDate(t.db);
    const account = { sort_code: '60-16-13', account_number: '31926819' };
    const read = parsedStatement(account, `API-MATCH-${w.reference}`, [{ amount: 20_000, remittanceInformation: `part ${w.reference}` }]);
    await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: cliActor('test'), policy: cashPolicy('2026-11-02') }));
    const credit = await t.db.selectFrom('bank_credits').select('id').where('bank_reference', '=', `API-MATCH-${w.reference}-0`).executeTakeFirstOrThrow();

    const matched = await t.app.inject({
      method: 'POST',
      url: `/bank-credits/${credit.id}/matches`,
      headers: { ...operator, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      payload: { allocations: [{ payroll_id: w.payroll.id, pay_date: PD1, amount: 20_000 }], reason: 'employer confirmed' },
    });
    expect(matched.statusCode).toBe(201);
    const [match] = matched.json().matches;
    const stored = await t.db.selectFrom('remittance_matches').selectAll().where('id', '=', match.id).executeTakeFirstOrThrow();
    expect(match).toEqual({ ...match, rule: 'manual', amount: 20_000, matched_at: stored.matched_at.toISOString(), matched_by: stored.matched_by, unmatched_at: null });

    const undone = await t.app.inject({
      method: 'POST',
      url: `/remittance-matches/${match.id}/unmatch`,
      headers: { ...operator, 'content-type': 'application/json' },
      payload: { reason: 'wrong employer' },
    });
    expect(undone.statusCode).toBe(200);
    const after = await t.db.selectFrom('remittance_matches').selectAll().where('id', '=', match.id).executeTakeFirstOrThrow();
    expect(undone.json()).toMatchObject({
      received: 0,
      match: { id: match.id, unmatched_at: after.unmatched_at!.toISOString(), unmatched_by: after.unmatched_by, unmatch_reason: 'wrong employer' },
    });
  });
});

describe('deductions statements import', () => {
  it('imports a CSV file, says what matched, and refuses a bad file in one line with its position', async () => {
    const env = cliEnvOf(t.config);
    const good = await runDeductions(['statements', 'import', new URL('./fixtures/statement.csv', import.meta.url).pathname], env);
    expect(good.stderr).toBe('');
    expect(good.stdout).toMatch(/^imported csv statement LLOY-20261127: \d+ credits \(£\d{1,3}(,\d{3})*\.\d{2}\), \d+ new; entries: new \d+, debit \d+\n/);
    expect(good.stdout).toMatch(/wait in the exceptions queue/);
    const again = await runDeductions(['statements', 'import', new URL('./fixtures/statement.csv', import.meta.url).pathname], env);
    expect(again.stdout).toMatch(/was imported on .*: nothing changed/);

    const bad = await runDeductions(['statements', 'import', '-'], env, 'statement_id,sort_code\nS,60-16-13\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/missing columns account_number, .* \(line 1\)/);

    const missing = await runDeductions(['statements', 'import', '/nonexistent/statement.xml'], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr.trim()).toMatch(/^cannot read \/nonexistent\/statement.xml: ENOENT/);
  }, 120_000);
});
