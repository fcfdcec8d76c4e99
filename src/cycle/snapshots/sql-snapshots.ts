import { placeholder, type SqlSnapshot } from '../../platform/db/sql-snapshot.ts';
import type { LockInput } from './pay-date-lock-statement-repository.ts';
import { lockDeductionDataStatement } from './pay-date-lock-statement-repository.ts';
import { cancelReleasedPaymentsStatement, findLockContextStatement } from './pay-date-lock-repository.ts';
import { rowLockPayDatesToLockStatement } from './snapshot-repository.ts';

// The big statements of the pay-date lock, checked in as src/cycle/snapshots/sql/<name>.sql: the npm script
// named sql rewrites them (src/platform/db/sql-snapshot.ts).

const lockInput: LockInput = {
  snapshotId: placeholder('snapshotId'),
  payrollId: placeholder('payrollId'),
  payDate: placeholder('payDate'),
  payPeriod: placeholder('payPeriod'),
  currency: placeholder('currency'),
  collectionAccount: {
    account_number: placeholder('collectionAccount.account_number'),
    sort_code: placeholder('collectionAccount.sort_code'),
    account_holder_name: placeholder('collectionAccount.account_holder_name'),
  },
  supersededSnapshotId: placeholder('supersededSnapshotId'),
  maxPaymentAmount: placeholder<number>('maxPaymentAmount'),
  maxMandateAmountPerPayDate: placeholder<number>('maxMandateAmountPerPayDate'),
  maxSnapshotTotal: placeholder<number>('maxSnapshotTotal'),
  refusalReason: placeholder('refusalReason'),
};

export const SQL_SNAPSHOTS: readonly SqlSnapshot[] = [
  {
    name: 'lock_deduction_data',
    source: 'lockDeductionData (src/cycle/snapshots/pay-date-lock-repository.ts), steps in src/cycle/snapshots/pay-date-lock-statement-repository.ts',
    statement: () => lockDeductionDataStatement(lockInput),
  },
  {
    name: 'find_lock_context',
    source: 'findLockContext (src/cycle/snapshots/pay-date-lock-repository.ts)',
    statement: () => findLockContextStatement(placeholder('payrollId'), placeholder('payDate'), placeholder('currency')),
  },
  {
    name: 'row_lock_pay_dates_to_lock',
    source: 'rowLockPayDatesToLock (src/cycle/snapshots/snapshot-repository.ts)',
    statement: () => rowLockPayDatesToLockStatement(placeholder('payrollId'), placeholder('payDate')),
  },
  {
    name: 'cancel_released_payments',
    source: 'cancelReleasedPayments (src/cycle/snapshots/pay-date-lock-repository.ts)',
    statement: () => cancelReleasedPaymentsStatement([placeholder('paymentIds')]),
  },
];
