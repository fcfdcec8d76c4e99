import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import * as paymentFilesMigration from '../../../migrations/20261202010000_payment_files.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { createClient } from '../../../src/directory/auth/clients-service.ts';
import { listPaymentFilePayouts, listPaymentFilesOfDate } from '../../../src/settlement/payouts/payment-file-repository.ts';
import { createPaymentFiles, paymentFileDownload } from '../../../src/settlement/payouts/payment-file-service.ts';
import { ConflictError } from '../../../src/platform/shared/domain-errors.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createBiller, createCollectionAccount, createPayoutRow } from '../../support/factories.ts';

// Upgrading an installation: its payouts were downloadable in bank files, and may have been sent, before
// payment files were stored. The migration puts each date's live payouts in a legacy file of that date, so
// none of them is instructed a second time by the first file written after the upgrade.

let test: TestDatabase;
const actor = cliActor('finance-test');
const DAY = '2026-11-03';
const OTHER_DAY = '2026-11-04';

beforeAll(async () => {
  test = await createTestDatabase();
  // Back to the schema before the migration, with payouts made then.
  await paymentFilesMigration.down(test.db as unknown as Kysely<any>);
});
afterAll(async () => test?.drop());

describe('the payment files migration', () => {
  let before: Record<'pending' | 'paid' | 'failed' | 'other' | 'sandbox', { id: string }>;

  it('puts every live payout made before it in a legacy file of its date, and no sandbox payout', async () => {
    const db = test.db;
    const sandbox = await createClient(db, { name: 'Sandbox twin', role: 'biller', sandbox: true });
    before = {
      pending: await createPayoutRow(db, { billerClientId: (await createBiller(db)).clientId, payoutDate: DAY }),
      paid: await createPayoutRow(db, { billerClientId: (await createBiller(db)).clientId, payoutDate: DAY, status: 'paid' }),
      failed: await createPayoutRow(db, { billerClientId: (await createBiller(db)).clientId, payoutDate: DAY, status: 'failed' }),
      other: await createPayoutRow(db, { billerClientId: (await createBiller(db)).clientId, payoutDate: OTHER_DAY }),
      sandbox: await createPayoutRow(db, { billerClientId: sandbox.clientId, payoutDate: DAY }),
    };
    await paymentFilesMigration.up(db as unknown as Kysely<any>);

    const [legacy, ...more] = await listPaymentFilesOfDate(db, DAY);
    expect(more).toEqual([]);
    expect(legacy).toMatchObject({ sequence: 0, legacy: true, message_id: null, requested_execution_date: null, pain001_sha256: null, csv_sha256: null });
    expect(legacy!.created_by).toBe('migration 20261202010000_payment_files');
    expect((await listPaymentFilePayouts(db, legacy!.id)).map((payout) => payout.id).sort()).toEqual([before.pending.id, before.paid.id, before.failed.id].sort());
    const [otherLegacy] = await listPaymentFilesOfDate(db, OTHER_DAY);
    expect((await listPaymentFilePayouts(db, otherLegacy!.id)).map((payout) => payout.id)).toEqual([before.other.id]);
  });

  it('so the first file written after it holds only payouts made after it', async () => {
    const db = test.db;
    await createCollectionAccount(db);
    expect(await createPaymentFiles(db, DAY, { actor })).toEqual([]);
    const after = await createPayoutRow(db, { billerClientId: (await createBiller(db)).clientId, payoutDate: DAY });
    const [file] = await createPaymentFiles(db, DAY, { actor });
    expect(file).toMatchObject({ sequence: 1, legacy: false });
    expect((await listPaymentFilePayouts(db, file!.id)).map((payout) => payout.id)).toEqual([after.id]);
  });

  it('keeps no bytes for the legacy file: it cannot be downloaded, and says why', async () => {
    const [legacy] = await listPaymentFilesOfDate(test.db, DAY);
    await expect(paymentFileDownload(test.db, legacy!.id, 'pain.001')).rejects.toThrow(ConflictError);
    await expect(paymentFileDownload(test.db, legacy!.id, 'csv')).rejects.toThrow(/before payment files were stored: its bytes were not kept/);
  });

  it('refuses a legacy file with bytes, or a file of number 0 that is not legacy', async () => {
    await expect(
      test.db.insertInto('payment_files').values({ id: crypto.randomUUID(), payout_date: '2026-11-05', sequence: 0, legacy: false, created_by: 'x' }).execute(),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      test.db
        .insertInto('payment_files')
        .values({ id: crypto.randomUUID(), payout_date: '2026-11-05', sequence: 0, legacy: true, created_by: 'x', message_id: 'SDPO' })
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
    // A file asking the bank to pay before its payout date is refused too.
    await expect(
      test.db
        .insertInto('payment_files')
        .values({
          id: crypto.randomUUID(),
          payout_date: '2026-11-05',
          sequence: 1,
          created_by: 'x',
          message_id: 'SDPO261105-01-00000000',
          requested_execution_date: '2026-11-04',
          pain001: Buffer.from('x'),
          pain001_sha256: '0'.repeat(64),
          csv: Buffer.from('x'),
          csv_sha256: '0'.repeat(64),
        })
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
  });
});
