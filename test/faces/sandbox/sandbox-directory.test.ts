import { describe, expect, it } from 'vitest';
import { publicBankHolidaysBetween } from '../../../src/directory/calendars/bank-holidays.ts';
import { subtractWorkingDays } from '../../../src/directory/calendars/working-days.ts';
import { generateSandboxDirectory, type SandboxDirectoryOptions } from '../../../src/faces/sandbox/sandbox-directory.ts';
import { uuidSchema } from '../../../src/platform/shared/schemas.ts';

const HOLIDAYS = new Set(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date));
const OPTIONS: SandboxDirectoryOptions = { seed: 'directory-tests', employers: 4, payrollsPerEmployer: 3, employeesPerPayroll: 10, today: '2026-11-22' };
const PAY_PERIOD = /^[0-9]+-[0-9]+$/;

const employmentsOf = (directory: ReturnType<typeof generateSandboxDirectory>) => directory.employees.flatMap((e) => e.employments);

describe('generateSandboxDirectory', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const first = generateSandboxDirectory(OPTIONS);
    expect(generateSandboxDirectory(OPTIONS)).toEqual(first);
    const other = generateSandboxDirectory({ ...OPTIONS, seed: 'another seed' });
    expect(other.employees.map((e) => e.id)).not.toEqual(first.employees.map((e) => e.id));
    expect(other.payrolls.map((p) => p.id)).not.toEqual(first.payrolls.map((p) => p.id));
  });

  it('builds the requested numbers of employers, payrolls and employments', () => {
    const directory = generateSandboxDirectory(OPTIONS);
    expect(directory.employers).toHaveLength(4);
    expect(directory.payrolls).toHaveLength(12);
    for (const payroll of directory.payrolls) {
      const onPayroll = employmentsOf(directory).filter((e) => e.payroll_id === payroll.id);
      expect(onPayroll).toHaveLength(10);
      expect(new Set(onPayroll.map((e) => e.payroll_reference)).size).toBe(10);
      expect(onPayroll.every((e) => e.employer_id === payroll.employer_id)).toBe(true);
    }
    expect(() => generateSandboxDirectory({ ...OPTIONS, employers: 0 })).toThrow(RangeError);
    expect(() => generateSandboxDirectory({ ...OPTIONS, employeesPerPayroll: 1.5 })).toThrow(RangeError);
  });

  it('gives every payroll a valid calendar starting soon after today', () => {
    const directory = generateSandboxDirectory(OPTIONS);
    expect(new Set(directory.payrolls.map((p) => p.payment_run_frequency))).toEqual(new Set(['weekly', 'monthly', 'four_weekly']));
    for (const payroll of directory.payrolls) {
      const payDates = payroll.pay_dates;
      expect(payDates).toHaveLength(12);
      expect(payDates[0]!.pay_date > '2026-11-22').toBe(true);
      expect(payDates[0]!.pay_date <= '2026-12-31').toBe(true);
      expect(new Set(payDates.map((d) => d.pay_period)).size).toBe(12);
      payDates.forEach((payDate, i) => {
        expect(payDate.pay_period).toMatch(PAY_PERIOD);
        expect(payDate.payroll_cutoff_date < payDate.pay_date).toBe(true);
        expect(payDate.payroll_cutoff_date).toBe(subtractWorkingDays(payDate.pay_date, 3, HOLIDAYS));
        expect(HOLIDAYS.has(payDate.pay_date)).toBe(false);
        if (i > 0) expect(payDate.pay_date > payDates[i - 1]!.pay_date).toBe(true);
      });
    }
    const christmas = directory.payrolls.flatMap((p) => p.pay_dates).map((d) => d.pay_date);
    expect(christmas).not.toContain('2026-12-25');
  });

  it('places one pending and one opted-out employer after the opted-in ones', () => {
    const statuses = (employers: number) => generateSandboxDirectory({ ...OPTIONS, employers }).employers.map((e) => e.salary_deduction_opt_in_status);
    expect(statuses(4)).toEqual(['opted_in', 'opted_in', 'pending', 'opted_out']);
    expect(statuses(3)).toEqual(['opted_in', 'pending', 'opted_out']);
    expect(statuses(2)).toEqual(['opted_in', 'pending']);
    expect(statuses(1)).toEqual(['opted_in']);
  });

  it('mixes employment statuses, mostly active, for any seed', () => {
    const directory = generateSandboxDirectory(OPTIONS);
    const employments = employmentsOf(directory);
    const active = employments.filter((e) => e.employment_status === 'active').length;
    expect(active / employments.length).toBeGreaterThan(0.7);
    for (let seed = 1; seed <= 25; seed++) {
      const small = generateSandboxDirectory({ ...OPTIONS, seed, employers: 3, payrollsPerEmployer: 1, employeesPerPayroll: 4 });
      const statuses = new Set(employmentsOf(small).map((e) => e.employment_status));
      expect(statuses, `seed ${seed}`).toEqual(new Set(['active', 'leaver', 'unknown']));
      for (const payroll of small.payrolls) {
        const first = employmentsOf(small).find((e) => e.payroll_id === payroll.id && e.payroll_reference === '000001');
        expect(first?.employment_status).toBe('active');
      }
    }
    const contracts = new Set(employments.map((e) => e.contract_type));
    expect(contracts.has('full_time') && contracts.has('part_time')).toBe(true);
  });

  it('gives employees unique, realistic, clearly fictional identities', () => {
    const directory = generateSandboxDirectory(OPTIONS);
    const people = directory.employees;
    expect(new Set(people.map((p) => p.national_registration_number)).size).toBe(people.length);
    expect(new Set(people.map((p) => `${p.family_name.toLowerCase()}|${p.date_of_birth}`)).size).toBe(people.length);
    expect(new Set(people.map((p) => p.id)).size).toBe(people.length);
    for (const person of people) {
      expect(uuidSchema.safeParse(person.id).success).toBe(true);
      expect(person.national_registration_number).toMatch(/^QQ[0-9]{6}[A-D]$/);
      expect(person.postal_code).toMatch(/^[A-Z]{1,2}[0-9][0-9A-Z]? [0-9][ABD-HJLNP-UW-Z]{2}$/);
      expect(person.phone_number).toMatch(/^\+447700900[0-9]{3}$/);
      expect(person.email_address).toMatch(/^[a-z.]+[0-9]*@example\.com$/);
      expect(person.date_of_birth <= '2008-11-22' && person.date_of_birth >= '1959-11-22').toBe(true);
      for (const job of person.employments) {
        expect(Number.isSafeInteger(job.annualised_salary) && job.annualised_salary % 5000 === 0).toBe(true);
        expect(job.annualised_salary).toBeGreaterThan(0);
        expect(job.start_date <= '2026-11-22').toBe(true);
        expect(job.start_date > person.date_of_birth).toBe(true);
        if (job.employment_status === 'leaver') {
          expect(job.end_date).not.toBeNull();
          expect(job.start_date < job.end_date! && job.end_date! < '2026-11-22').toBe(true);
        } else {
          expect(job.end_date).toBeNull();
        }
      }
    }
  });

  it('gives a few people a second job at another employer', () => {
    const directory = generateSandboxDirectory({ ...OPTIONS, employeesPerPayroll: 25 });
    const twoJobs = directory.employees.filter((p) => p.employments.length > 1);
    expect(twoJobs.length).toBeGreaterThan(0);
    expect(twoJobs.length).toBeLessThan(directory.employees.length / 5);
    for (const person of twoJobs) {
      expect(new Set(person.employments.map((e) => e.employer_id)).size).toBe(person.employments.length);
    }
  });
});
