import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { RemittanceStatus } from '../../platform/db/tables.ts';
import { NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { toBankCreditResource, toBankStatementResource, toRemittanceMatchResource, toStatementEntryResource } from './cash-resource.ts';
import { findCredit, listMatchesOfCredit, listUnmatchedCredits } from './matching-repository.ts';
import type { MatchingPolicy } from './matching-service.ts';
import { findRemittance, listMatchesOfRemittance, listRemittances } from './remittance-repository.ts';
import { remittancePolicyOf, toRemittanceResource } from './remittance-service.ts';
import { findStatement, listStatementEntries, listStatements, listUnresolvedReversals } from './statement-repository.ts';

/**
 * The cash rules as configured, for today: remittances are late REMITTANCE_LATE_WORKING_DAYS bank
 * clearing days (England and Wales) after the pay date; amounts within REMITTANCE_TOLERANCE_MINOR match, flagged.
 */
export async function matchingPolicyOf(
  db: Executor,
  config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS' | 'REMITTANCE_TOLERANCE_MINOR'>,
  today = serviceToday(new Date(), config.SERVICE_TIME_ZONE),
): Promise<MatchingPolicy> {
  return { ...(await remittancePolicyOf(db, config, today)), toleranceMinor: config.REMITTANCE_TOLERANCE_MINOR };
}

export async function listBankStatements(db: Executor, limit: number) {
  return (await listStatements(db, limit)).map(toBankStatementResource);
}

export async function showBankStatement(db: Executor, id: string) {
  const statement = isUuid(id) ? await findStatement(db, id) : undefined;
  if (!statement) throw new NotFoundError(`Bank statement ${id}`);
  return toBankStatementResource(statement);
}

/** The exceptions queue: credits with money no rule could match (open, or held for a person), oldest first. */
export async function listCreditsToMatch(db: Executor, limit: number) {
  return (await listUnmatchedCredits(db, { limit })).map(toBankCreditResource);
}

/** What the import made of each entry of a statement. */
export async function listBankStatementEntries(db: Executor, statementId: string) {
  const statement = isUuid(statementId) ? await findStatement(db, statementId) : undefined;
  if (!statement) throw new NotFoundError(`Bank statement ${statementId}`);
  return (await listStatementEntries(db, statementId)).map(toStatementEntryResource);
}

/** Reversals no rule could place: each waits for a person to name the credit the bank took back. */
export async function listReversalsToPlace(db: Executor, limit: number) {
  return (await listUnresolvedReversals(db, limit)).map(toStatementEntryResource);
}

export async function showBankCredit(db: Executor, id: string) {
  const credit = isUuid(id) ? await findCredit(db, id) : undefined;
  if (!credit) throw new NotFoundError(`Bank credit ${id}`);
  return { credit: toBankCreditResource(credit), matches: (await listMatchesOfCredit(db, id)).map(toRemittanceMatchResource) };
}

export async function listRemittanceResources(db: Executor, filter: { payDate?: string; status?: RemittanceStatus; payrollId?: string; limit: number }) {
  return (await listRemittances(db, filter)).map((row) => ({ ...toRemittanceResource(row), employer_name: row.employer_name, payroll_name: row.payroll_name }));
}

export async function showRemittance(db: Executor, payrollId: string, payDate: string) {
  const remittance = isUuid(payrollId) ? await findRemittance(db, payrollId, payDate) : undefined;
  if (!remittance) throw new NotFoundError(`Remittance of payroll ${payrollId} pay date ${payDate}`);
  const matches = await listMatchesOfRemittance(db, payrollId, payDate);
  return { remittance: toRemittanceResource(remittance), matches: matches.map(toRemittanceMatchResource) };
}
