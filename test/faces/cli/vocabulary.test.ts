import { describe, expect, it } from 'vitest';
import { bankHolidayRegions } from '../../../src/directory/calendars/bank-holidays.ts';
import { SET_ASIDE_CATEGORIES } from '../../../src/settlement/cash/credit-decision-service.ts';
import { remittanceStatusSchema } from '../../../src/settlement/cash/remittance-service.ts';
import * as vocabulary from '../../../src/faces/cli/vocabulary.ts';
import { PAYMENT_FILE_FORMATS } from '../../../src/settlement/payouts/payout-file.ts';
import { runKindSchema } from '../../../src/cycle/runs/run-history-service.ts';
import { SANDBOX_LIMITS } from '../../../src/faces/sandbox/sandbox-setup-service.ts';

// Command definitions take these lists from src/faces/cli/vocabulary.ts so that help loads no service;
// each copy must say what its original says, in the same order (help and errors print them).

describe('the command line vocabulary', () => {
  it('is what the services define', () => {
    expect(vocabulary.BANK_HOLIDAY_REGIONS).toEqual(bankHolidayRegions);
    expect(vocabulary.PAYMENT_FILE_FORMATS).toEqual(PAYMENT_FILE_FORMATS);
    expect(vocabulary.REMITTANCE_STATUSES).toEqual(remittanceStatusSchema.options);
    expect(vocabulary.RUN_KINDS).toEqual(runKindSchema.options);
    expect(vocabulary.SANDBOX_LIMITS).toEqual(SANDBOX_LIMITS);
    expect(vocabulary.SET_ASIDE_CATEGORIES).toEqual(SET_ASIDE_CATEGORIES);
  });
});
