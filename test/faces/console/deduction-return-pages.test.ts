import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deductionReturnFileOf } from '../../../src/cycle/deduction-returns/return-service.ts';
import { payDatePath } from '../../../src/faces/console/pages/runs-pages.ts';
import { csrfTokenIn, refusalIn, signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { filledIn, lockedReturnWorld, PAY_DATE, type ReturnWorld } from '../../cycle/deduction-returns/return-world.ts';

// The console's deduction return file: downloaded pre-filled beside the instruction file on the pay
// date page, and uploaded back (a multipart form, its CSRF token first) as the pay date's confirmation.

let t: TestApp;
let queue: Queue;
beforeAll(async () => {
  t = await startTestApp();
  queue = new Queue('pay-dates', { connection: { url: t.config.REDIS_URL }, prefix: t.config.QUEUE_PREFIX });
});
afterAll(async () => {
  await queue?.close();
  await t?.close();
});

const decoded = (text: string) => text.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');

function multipart(parts: Array<{ name: string; value: string | Buffer; fileName?: string }>) {
  const boundary = '----deduction-return-test-boundary';
  const chunks = parts.map((part) =>
    Buffer.concat([
      Buffer.from(
        part.fileName
          ? `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.fileName}"\r\nContent-Type: text/csv\r\n\r\n`
          : `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`,
      ),
      Buffer.from(part.value),
      Buffer.from('\r\n'),
    ]),
  );
  return { payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Uploads as the pay date page's form does: the token and check boxes first, then the file. */
async function upload(browser: ConsoleBrowser, world: ReturnWorld, file: Buffer, options: { dryRun?: boolean; partial?: boolean } = {}) {
  const path = payDatePath(world.payrollId, PAY_DATE);
  await browser.get(path);
  const { payload, headers } = multipart([
    { name: '_csrf', value: csrfTokenIn(browser.lastPage) },
    ...(options.dryRun ? [{ name: 'dry_run', value: '1' }] : []),
    ...(options.partial ? [{ name: 'partial', value: '1' }] : []),
    { name: 'return_file', value: file, fileName: 'return.csv' },
  ]);
  const response = await t.app.inject({ method: 'POST', url: `${path}/return-file`, cookies: browser.cookies, headers, payload });
  for (const cookie of response.cookies) browser.cookies[cookie.name] = cookie.value;
  return response;
}

const confirmationsOf = (world: ReturnWorld) => t.db.selectFrom('confirmations').selectAll().where('payroll_id', '=', world.payrollId).execute();

describe('the pay date page’s deduction return file', () => {
  it('offers the pre-filled file beside the instruction file, and the upload to operators only', async () => {
    const world = await lockedReturnWorld(t.db, [12_550]);
    const path = payDatePath(world.payrollId, PAY_DATE);
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const page = (await browser.get(path)).body;
    expect(page).toContain(`<a href="${path}/return-files/1" download>its return file</a>`);
    expect(page).toContain('<h2 id="deduction-return">Deduction return file</h2>');
    expect(page).toContain(`action="${path}/return-file" enctype="multipart/form-data"`);

    const download = await browser.get(`${path}/return-files/1`);
    const expected = await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE, 1);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(expected.content)).toBe(true);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${expected.file_name}"`);
    expect((await browser.get(`${path}/return-files/2`)).statusCode).toBe(404);
    expect((await browser.get(`${path}/return-files/x`)).statusCode).toBe(404);

    const { browser: viewer } = await signedInAs(t.app, t.db, 'viewer');
    const seen = (await viewer.get(path)).body;
    expect(seen).toContain(`${path}/return-files/1`);
    expect(seen).not.toContain('enctype="multipart/form-data"');
    const refused = await upload(viewer, world, expected.content);
    expect(refused.statusCode).toBe(403);
    expect(await confirmationsOf(world)).toEqual([]);
  });

  it('checks a dry run, lists a bad file’s errors with line and column (422), confirms a good one and says so, then changes nothing the second time', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const { browser, user } = await signedInAs(t.app, t.db, 'operator');
    const prefilled = (await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE)).content;
    const [first, second] = world.people as [ReturnWorld['people'][number], ReturnWorld['people'][number]];
    const good = filledIn(prefilled, { [second.payrollReference]: { deducted: '0', leaver: 'Yes' } });

    const dry = await upload(browser, world, good, { dryRun: true });
    expect(dry.statusCode).toBe(200);
    expect(decoded(dry.body)).toContain(
      `<p class="notice" role="status">Dry run, nothing written: would confirm pay date ${PAY_DATE} (instruction file version 1): 2 employees (1 in full, 0 partly, 1 not deducted, 1 leaver): £125.50 deducted of £155.51 asked.</p>`,
    );
    expect(await confirmationsOf(world)).toEqual([]);

    const bad = filledIn(prefilled, { [first.payrollReference]: { deducted: '125,50' } }, { keepTrailer: true });
    const refused = await upload(browser, world, bad);
    expect(refused.statusCode).toBe(422);
    const body = decoded(refused.body);
    expect(body).toContain('<p class="error" role="alert">Refused, nothing confirmed: 1 error in 2 items (1 bad).</p>');
    expect(body).not.toContain('Something went wrong');
    expect(body).toContain(
      'Correct the lines listed in the file (or tick “Confirm the good items even when some are bad” to confirm the rest now), then choose the file again',
    );
    expect(body).toContain(
      '<tr><td>3</td><td>amount_deducted</td><td>has a comma that does not separate thousands (125,50): write the decimal point as a point, 25.50</td></tr>',
    );
    expect(await confirmationsOf(world)).toEqual([]);

    await queue.obliterate({ force: true });
    const imported = await upload(browser, world, good);
    expect(imported.statusCode, imported.body).toBe(303);
    expect(imported.headers.location).toBe(payDatePath(world.payrollId, PAY_DATE));
    const page = decoded((await browser.get(String(imported.headers.location))).body);
    expect(page).toContain(
      `<p class="notice" role="status">Confirmed pay date ${PAY_DATE} (instruction file version 1): 2 employees (1 in full, 0 partly, 1 not deducted, 1 leaver): £125.50 deducted of £155.51 asked.</p>`,
    );
    expect(page).toContain(`<td>${user.email} (console), return file</td><td>2</td><td>£125.50</td>`);
    const [confirmation] = await confirmationsOf(world);
    expect(confirmation).toMatchObject({ submitted_by: `${user.email} (console)`, submitted_by_client_id: null, total_amount: 12_550 });
    expect(page).toContain(`<td>${user.email} (console)</td><td>2</td><td>2</td><td>0</td><td>no</td>`);
    const jobs = (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((job) => job.name === 'reconcile-pay-date');
    expect(jobs.map((job) => job.data)).toEqual([{ payrollId: world.payrollId, payDate: PAY_DATE }]);

    const again = await upload(browser, world, good);
    expect(again.statusCode).toBe(200);
    expect(decoded(again.body)).toContain(
      `Already imported, nothing changed: the current records of pay date ${PAY_DATE} (instruction file version 1) already say what this file says.`,
    );
    expect(decoded(again.body)).toContain(`<dt>Imported before</dt>`);
    expect(await confirmationsOf(world)).toHaveLength(1);
  });

  it('confirms the good items of a partly bad file when asked, and refuses an upload without a file', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const prefilled = (await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE)).content;
    const partlyBad = filledIn(prefilled, { [world.people[1]!.payrollReference]: { leaver: 'perhaps' } }, { keepTrailer: true });
    const partial = await upload(browser, world, partlyBad, { partial: true });
    expect(partial.statusCode).toBe(303);
    expect((await confirmationsOf(world)).map((row) => row.employee_count)).toEqual([1]);

    const path = payDatePath(world.payrollId, PAY_DATE);
    await browser.get(path);
    const { payload, headers } = multipart([
      { name: '_csrf', value: csrfTokenIn(browser.lastPage) },
      { name: 'partial', value: '1' },
    ]);
    const empty = await t.app.inject({ method: 'POST', url: `${path}/return-file`, cookies: browser.cookies, headers, payload });
    expect(empty.statusCode).toBe(400);
    // Titled for what it is, saying what to do, with the form again as it was sent (the box ticked).
    expect(empty.body).not.toContain('Something went wrong');
    expect(refusalIn(empty.body)).toEqual({
      heading: 'The deduction return file was not imported',
      reasons: [{ text: 'Choose a deduction return file to upload', field: 'return-file' }],
    });
    expect(empty.body).toContain('The file is not kept');
    expect(empty.body).toContain('<input type="checkbox" name="partial" value="1" checked>');
    expect(empty.body).toContain('<input type="checkbox" name="dry_run" value="1">');
  });
});
