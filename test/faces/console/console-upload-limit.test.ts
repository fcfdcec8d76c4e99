import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenIn, signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The console's statement upload and STATEMENT_LIMIT_BYTES: a file over the limit is refused as too
// large (413), as the API's import is, not as a statement the parser could not read (422).

const LIMIT = 2_048;
const CSV_HEADER = 'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { STATEMENT_LIMIT_BYTES: String(LIMIT) } });
});
afterAll(async () => t?.close());

function multipartUpload(token: string, file: string) {
  const boundary = '----console-upload-limit-boundary';
  const payload =
    `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${token}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="statement"; filename="statement.csv"\r\nContent-Type: text/csv\r\n\r\n${file}\r\n` +
    `--${boundary}--\r\n`;
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const errorOf = (body: string) => body.match(/<p class="error"[^>]*>(.*?)<\/p>/s)?.[1];

// A statement that reads well as far as it goes: only its size is wrong.
const ROW = 'STMT-1,12-34-56,12345678,GBP,REF-1,2026-11-27,2026-11-27,credit,10.00,EMP-0042,Northwind Payroll,87654321\n';
const CAMT_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>';
const files = {
  csv: (size: number) => `${CSV_HEADER}\n${ROW.repeat(Math.ceil(size / ROW.length))}`.slice(0, size),
  // Cut at the limit, an XML document is unfinished: the parser would call it malformed (the 422 of issue 31).
  camt: (size: number) => `${CAMT_HEAD}${'<!-- padding -->'.repeat(Math.ceil(size / 16))}`.slice(0, size),
};

async function uploadOf(size: number, kind: keyof typeof files = 'csv') {
  const { browser } = await signedInAs(t.app, t.db, 'finance');
  await browser.get('/console/cash/statements');
  return t.app.inject({ method: 'POST', url: '/console/cash/statements', cookies: browser.cookies, ...multipartUpload(csrfTokenIn(browser.lastPage), files[kind](size)) });
}

describe('console statement upload over STATEMENT_LIMIT_BYTES', () => {
  it.each([
    ['a CSV one byte over', LIMIT + 1, 'csv'],
    ['a CSV many times over', LIMIT * 20, 'csv'],
    ['a camt.053 one byte over', LIMIT + 1, 'camt'],
    ['a camt.053 many times over', LIMIT * 20, 'camt'],
  ] as const)('answers 413 with the limit named: %s', async (_label, size, kind) => {
    const response = await uploadOf(size, kind);
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(errorOf(response.body)).toBe(`A bank statement may be at most ${LIMIT} bytes; this file is larger`);
    expect(response.body).toContain('<title>Too large');
    expect(await t.db.selectFrom('bank_statements').select('id').execute()).toEqual([]);
  });

  it('reads a file of exactly the limit (whatever it then finds in it, it is not too large)', async () => {
    const response = await uploadOf(LIMIT);
    expect(response.statusCode).not.toBe(413);
  });
});
