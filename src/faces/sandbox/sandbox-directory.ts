import type { DateTime } from 'luxon';
import type { z } from 'zod';
import { generatePayCalendar, type GeneratedPayDate, type PayFrequency } from '../../directory/calendars/calendar-generation.ts';
import { regionalHolidays } from '../../directory/calendars/bank-holidays.ts';
import type { HolidayCalendar } from '../../directory/calendars/working-days.ts';
import { formatCalendarDate, parseCalendarDate } from '../../directory/calendars/working-days.ts';
import type { contractTypeSchema, employmentStatusSchema, optInStatusSchema } from '../../directory/payroll-providers/reference-schemas.ts';
import { seededRandom, type SeededRandom } from './seeded-random.ts';

export type OptInStatus = z.infer<typeof optInStatusSchema>;
type EmploymentStatus = z.infer<typeof employmentStatusSchema>;
type ContractType = z.infer<typeof contractTypeSchema>;

export interface SandboxEmployer {
  id: string;
  name: string;
  sic_code: string;
  industry_name: string;
  salary_deduction_opt_in_status: OptInStatus;
}

export interface SandboxPayroll {
  id: string;
  employer_id: string;
  name: string;
  payment_run_frequency: PayFrequency;
  currency: string;
  pay_dates: GeneratedPayDate[];
}

/** One job of an employee: on one payroll of one employer. */
export interface SandboxEmployment {
  employer_id: string;
  payroll_id: string;
  /** The works number on that payroll. */
  payroll_reference: string;
  start_date: string;
  /** Set for leavers only. */
  end_date: string | null;
  employment_status: EmploymentStatus;
  contract_type: ContractType;
  /** Integer minor units of `currency`. */
  annualised_salary: number;
  currency: string;
}

/** A person as the provider knows them; a few hold a second job at another employer. */
export interface SandboxEmployee {
  id: string;
  given_name: string;
  family_name: string;
  national_registration_number: string;
  date_of_birth: string;
  email_address: string;
  phone_number: string;
  postal_code: string;
  employments: SandboxEmployment[];
}

export interface SandboxDirectory {
  seed: number | string;
  today: string;
  employers: SandboxEmployer[];
  payrolls: SandboxPayroll[];
  employees: SandboxEmployee[];
}

export interface SandboxDirectoryOptions {
  seed: number | string;
  employers: number;
  payrollsPerEmployer: number;
  /** Employments per payroll; some are second jobs of people employed elsewhere. */
  employeesPerPayroll: number;
  /** 'YYYY-MM-DD'; pay dates start about a week after it, ages and start dates count back from it. */
  today: string;
  /** Default 12. */
  payDatesPerPayroll?: number;
  /** Default: England and Wales bank holidays. */
  holidays?: HolidayCalendar;
}

export const SANDBOX_CURRENCY = 'GBP';
/** Working days between a sandbox payroll's cutoff and its pay date. */
export const SANDBOX_CUTOFF_OFFSET_WORKING_DAYS = 3;
/** The first pay date is at least this far after `today`, so the first lock is not already past. */
const FIRST_PAY_DATE_MIN_DAYS = 7;
const SECOND_JOB_SHARE = 0.06;

const FREQUENCY_ROTATION: readonly PayFrequency[] = ['monthly', 'weekly', 'four_weekly'];
const FREQUENCY_LABELS: Record<PayFrequency, string> = {
  weekly: 'Weekly',
  fortnightly: 'Fortnightly',
  four_weekly: 'Four-weekly',
  monthly: 'Monthly',
};

// UK SIC 2007 codes with their official descriptions, and a word that fits a company name.
const INDUSTRIES: ReadonlyArray<{ sic: string; name: string; noun: string }> = [
  { sic: '47110', name: 'Retail sale in non-specialised stores with food, beverages or tobacco predominating', noun: 'Stores Ltd' },
  { sic: '87100', name: 'Residential nursing care facilities', noun: 'Care Homes Ltd' },
  { sic: '56101', name: 'Licensed restaurants', noun: 'Hospitality Ltd' },
  { sic: '49410', name: 'Freight transport by road', noun: 'Haulage Ltd' },
  { sic: '52103', name: 'Operation of warehousing and storage facilities for land transport activities', noun: 'Distribution Ltd' },
  { sic: '62020', name: 'Information technology consultancy activities', noun: 'Digital Ltd' },
  { sic: '41202', name: 'Construction of domestic buildings', noun: 'Homes Ltd' },
  { sic: '10710', name: 'Manufacture of bread; manufacture of fresh pastry goods and cakes', noun: 'Bakeries Ltd' },
  { sic: '81210', name: 'General cleaning of buildings', noun: 'Facilities Ltd' },
  { sic: '85200', name: 'Primary education', noun: 'Academy Trust' },
  { sic: '25620', name: 'Machining', noun: 'Engineering Ltd' },
  { sic: '55100', name: 'Hotels and similar accommodation', noun: 'Hotels Ltd' },
];

const PLACES = [
  'Harbour Lane',
  'Pennine',
  'Severn Valley',
  'Northgate',
  'Kingsway',
  'Thames Reach',
  'Brackenfield',
  'Cotswold',
  'Medway',
  'Ravensworth',
  'Fenland',
  'Tyneside',
  'Wealden',
  'Mersey',
  'Chiltern',
  'Wolds',
] as const;

const GIVEN_NAMES = [
  'Oliver',
  'Amelia',
  'George',
  'Isla',
  'Harry',
  'Ava',
  'Noah',
  'Mia',
  'Jack',
  'Ivy',
  'Leo',
  'Freya',
  'Arthur',
  'Lily',
  'Muhammad',
  'Florence',
  'Oscar',
  'Grace',
  'Charlie',
  'Sophia',
  'Thomas',
  'Emily',
  'James',
  'Chloe',
  'William',
  'Priya',
  'Daniel',
  'Aisha',
  'Samuel',
  'Zara',
  'Joseph',
  'Hannah',
  'Ryan',
  'Megan',
  'Liam',
  'Niamh',
  'Owen',
  'Rhiannon',
  'Callum',
  'Eilidh',
  'Tomasz',
  'Agnieszka',
  'Kwame',
  'Chiamaka',
  'Arjun',
  'Fatima',
  'David',
  'Susan',
  'Paul',
  'Karen',
] as const;

const FAMILY_NAMES = [
  'Smith',
  'Jones',
  'Williams',
  'Taylor',
  'Brown',
  'Davies',
  'Evans',
  'Wilson',
  'Thomas',
  'Roberts',
  'Johnson',
  'Lewis',
  'Walker',
  'Robinson',
  'Wood',
  'Thompson',
  'White',
  'Watson',
  'Jackson',
  'Wright',
  'Green',
  'Harris',
  'Cooper',
  'King',
  'Lee',
  'Martin',
  'Clarke',
  'James',
  'Morgan',
  'Hughes',
  'Edwards',
  'Hill',
  'Moore',
  'Clark',
  'Harrison',
  'Scott',
  'Young',
  'Morris',
  'Hall',
  'Ward',
  'Turner',
  'Carter',
  'Phillips',
  'Mitchell',
  'Patel',
  'Khan',
  'Begum',
  'Ali',
  'Hussain',
  'Singh',
  "O'Brien",
  'Murphy',
  'Kelly',
  'Campbell',
  'Stewart',
  'MacDonald',
  'Nowak',
  'Kowalski',
  'Okafor',
  'Mensah',
  'Ahmed',
  'Shah',
] as const;

const POSTCODE_OUTWARDS = [
  'SW1A',
  'E14',
  'N7',
  'SE15',
  'W5',
  'M1',
  'M20',
  'B33',
  'B15',
  'LS1',
  'LS6',
  'S10',
  'NE1',
  'NE6',
  'L1',
  'L15',
  'BS1',
  'BS7',
  'CF10',
  'CF24',
  'NG7',
  'LE2',
  'CV1',
  'OX4',
  'CB1',
  'NR2',
  'PL4',
  'EX1',
  'SO14',
  'BN1',
  'YO10',
  'HU5',
  'DE1',
  'ST4',
  'PR1',
  'BD7',
  'SR1',
  'TS1',
  'MK9',
  'RG1',
] as const;
// The letters Royal Mail uses in the inward code (never C, I, K, M, O or V).
const INWARD_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

const EMPLOYMENT_STATUS_WEIGHTS: ReadonlyArray<readonly [EmploymentStatus, number]> = [
  ['active', 86],
  ['leaver', 9],
  ['unknown', 5],
];

const CONTRACT_TYPE_WEIGHTS: ReadonlyArray<readonly [ContractType, number]> = [
  ['full_time', 60],
  ['part_time', 24],
  ['fixed_term', 7],
  ['zero_hours', 6],
  ['unknown', 3],
];

/** Annual pay in whole pounds, by contract. */
const SALARY_RANGES: Record<ContractType, readonly [number, number]> = {
  full_time: [21_000, 78_000],
  part_time: [9_000, 32_000],
  fixed_term: [18_000, 55_000],
  zero_hours: [4_000, 18_000],
  unknown: [12_000, 40_000],
};

function assertCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer of at least ${min}, got ${value}`);
  }
}

/**
 * Where each employer stands on salary deduction: the last employer has opted out and the one
 * before it is still pending (when there are that many), every other one has opted in - so the
 * directory always offers all three situations, and the opted-in employers come first.
 */
export function sandboxOptInStatus(employerIndex: number, employerCount: number): OptInStatus {
  if (employerCount >= 3 && employerIndex === employerCount - 1) return 'opted_out';
  if (employerCount >= 2 && employerIndex === Math.max(employerCount - 2, 1)) return 'pending';
  return 'opted_in';
}

/** The first contractual pay date of a new calendar: soon after `today`, on a usual UK pay day. */
function firstScheduledPayDate(frequency: PayFrequency, today: string, random: SeededRandom): string {
  const earliest = parseCalendarDate(today).plus({ days: FIRST_PAY_DATE_MIN_DAYS });
  if (frequency === 'monthly') {
    // 31 stands for "the last day of the month"; luxon clamps it to shorter months.
    const payDay = random.pick([25, 28, 31]);
    let month: DateTime<true> = earliest.startOf('month');
    for (;;) {
      const candidate = month.set({ day: Math.min(payDay, month.daysInMonth) });
      if (candidate >= earliest) return formatCalendarDate(candidate);
      month = month.plus({ months: 1 });
    }
  }
  const weekday = random.pick([4, 5]); // Thursday or Friday (ISO weekdays)
  return formatCalendarDate(earliest.plus({ days: (weekday - earliest.weekday + 7) % 7 }));
}

function employerName(random: SeededRandom, industry: { noun: string }, taken: Set<string>): string {
  let name = `${random.pick(PLACES)} ${industry.noun}`;
  for (let tries = 0; taken.has(name) && tries < PLACES.length; tries++) name = `${random.pick(PLACES)} ${industry.noun}`;
  const base = name;
  for (let n = 2; taken.has(name); n++) name = `${base} (${n})`;
  taken.add(name);
  return name;
}

/**
 * A deterministic, seeded directory of employers, payrolls (with real calendars) and employees
 * for the sandbox payroll provider. Same options, same directory - on any machine.
 *
 * Guarantees tests and the demo can rely on: employers with each opt-in status (opted-in first,
 * then one pending, then one opted out); the first employment on every payroll is active;
 * leavers and unknown employments exist when there is room for them; national registration
 * numbers use HMRC's never-issued 'QQ' prefix and are unique; (family name, date of birth) is
 * unique, so matching on it is unambiguous.
 */
export function generateSandboxDirectory(options: SandboxDirectoryOptions): SandboxDirectory {
  assertCount('employers', options.employers, 1);
  assertCount('payrollsPerEmployer', options.payrollsPerEmployer, 1);
  assertCount('employeesPerPayroll', options.employeesPerPayroll, 1);
  const payDateCount = options.payDatesPerPayroll ?? 12;
  assertCount('payDatesPerPayroll', payDateCount, 1);
  const today = parseCalendarDate(options.today);
  const holidays = options.holidays ?? regionalHolidays('england-and-wales');
  const random = seededRandom(options.seed);

  const employerNames = new Set<string>();
  const employers: SandboxEmployer[] = Array.from({ length: options.employers }, (_, index) => {
    const industry = random.pick(INDUSTRIES);
    return {
      id: random.uuid(),
      name: employerName(random, industry, employerNames),
      sic_code: industry.sic,
      industry_name: industry.name,
      salary_deduction_opt_in_status: sandboxOptInStatus(index, options.employers),
    };
  });

  const payrolls: SandboxPayroll[] = [];
  for (const employer of employers) {
    const names = new Map<PayFrequency, number>();
    for (let p = 0; p < options.payrollsPerEmployer; p++) {
      const frequency = FREQUENCY_ROTATION[payrolls.length % FREQUENCY_ROTATION.length]!;
      const sameFrequency = (names.get(frequency) ?? 0) + 1;
      names.set(frequency, sameFrequency);
      payrolls.push({
        id: random.uuid(),
        employer_id: employer.id,
        name: `${FREQUENCY_LABELS[frequency]} payroll${sameFrequency > 1 ? ` ${sameFrequency}` : ''}`,
        payment_run_frequency: frequency,
        currency: SANDBOX_CURRENCY,
        pay_dates: generatePayCalendar({
          frequency,
          anchorPayDate: firstScheduledPayDate(frequency, options.today, random),
          count: payDateCount,
          cutoffOffsetWorkingDays: SANDBOX_CUTOFF_OFFSET_WORKING_DAYS,
          holidays,
        }),
      });
    }
  }

  const people = new PeopleFactory(random, today);
  const employees: SandboxEmployee[] = [];
  for (const payroll of payrolls) {
    for (let slot = 0; slot < options.employeesPerPayroll; slot++) {
      const secondJobOf = slot > 0 && random.next() < SECOND_JOB_SHARE ? pickSecondJobHolder(random, employees, payroll) : undefined;
      const employee = secondJobOf ?? people.newEmployee();
      if (!secondJobOf) employees.push(employee);
      const status: EmploymentStatus = slot === 0 ? 'active' : random.weighted(EMPLOYMENT_STATUS_WEIGHTS);
      employee.employments.push(people.employment(employee, payroll, status, payrollReference(slot)));
    }
  }
  ensureStatusPresent(employees, payrolls[0]!, 'leaver', people);
  ensureStatusPresent(employees, payrolls[0]!, 'unknown', people);

  return { seed: options.seed, today: options.today, employers, payrolls, employees };
}

const payrollReference = (slot: number) => String(slot + 1).padStart(6, '0');
const FIRST_REFERENCE = payrollReference(0);

/** Someone with exactly one job, at another employer, who can take a second one on this payroll. */
function pickSecondJobHolder(random: SeededRandom, employees: SandboxEmployee[], payroll: SandboxPayroll): SandboxEmployee | undefined {
  const candidates = employees.filter((employee) => employee.employments.length === 1 && employee.employments[0]!.employer_id !== payroll.employer_id);
  return candidates.length === 0 ? undefined : random.pick(candidates);
}

/**
 * A small directory drawn at random may lack a status; the last active employment of the first
 * payroll (never its first one, which stays active) then takes it, so every kind of employee can
 * be found.
 */
function ensureStatusPresent(employees: SandboxEmployee[], payroll: SandboxPayroll, status: EmploymentStatus, people: PeopleFactory): void {
  const jobs = employees.flatMap((employee) => employee.employments.map((employment) => ({ employee, employment })));
  if (jobs.some(({ employment }) => employment.employment_status === status)) return;
  const job = jobs
    .filter(({ employment }) => employment.payroll_id === payroll.id && employment.payroll_reference !== FIRST_REFERENCE)
    .findLast(({ employment }) => employment.employment_status === 'active');
  if (!job) return;
  Object.assign(job.employment, { employment_status: status, ...people.employmentDates(status, job.employee.date_of_birth) });
}

/** Draws people and their jobs, keeping identifiers unique across the directory. */
class PeopleFactory {
  private readonly nationalNumbers = new Set<string>();
  private readonly nameAndBirth = new Set<string>();
  private readonly emails = new Set<string>();
  private readonly random: SeededRandom;
  private readonly today: DateTime<true>;

  constructor(random: SeededRandom, today: DateTime<true>) {
    this.random = random;
    this.today = today;
  }

  newEmployee(): SandboxEmployee {
    const { random } = this;
    const given = random.pick(GIVEN_NAMES);
    let family: string;
    let birth: string;
    do {
      family = random.pick(FAMILY_NAMES);
      const age = random.int(18, 66);
      birth = formatCalendarDate(this.today.minus({ years: age, days: random.int(0, 364) }));
    } while (this.nameAndBirth.has(`${family.toLowerCase()}|${birth}`));
    this.nameAndBirth.add(`${family.toLowerCase()}|${birth}`);
    return {
      id: random.uuid(),
      given_name: given,
      family_name: family,
      national_registration_number: this.nationalNumber(),
      date_of_birth: birth,
      email_address: this.email(given, family),
      // Ofcom reserves 07700 900000-900999 for fiction: no real phone rings.
      phone_number: `+447700900${String(random.int(0, 999)).padStart(3, '0')}`,
      postal_code: `${random.pick(POSTCODE_OUTWARDS)} ${random.int(1, 9)}${random.pick([...INWARD_LETTERS])}${random.pick([...INWARD_LETTERS])}`,
      employments: [],
    };
  }

  employment(employee: SandboxEmployee, payroll: SandboxPayroll, status: EmploymentStatus, reference: string): SandboxEmployment {
    const contract = this.random.weighted(CONTRACT_TYPE_WEIGHTS);
    const [low, high] = SALARY_RANGES[contract];
    // Whole multiples of GBP 50, in pence: integer arithmetic only.
    const salaryPounds = this.random.int(low / 50, high / 50) * 50;
    return {
      employer_id: payroll.employer_id,
      payroll_id: payroll.id,
      payroll_reference: reference,
      ...this.employmentDates(status, employee.date_of_birth),
      employment_status: status,
      contract_type: contract,
      annualised_salary: salaryPounds * 100,
      currency: payroll.currency,
    };
  }

  /** A start date after the 16th birthday; leavers also get an end date in the recent past. */
  employmentDates(status: EmploymentStatus, dateOfBirth: string): { start_date: string; end_date: string | null } {
    const { random, today } = this;
    const earliestStart = parseCalendarDate(dateOfBirth).plus({ years: 16 });
    const end = status === 'leaver' ? today.minus({ days: random.int(5, 150) }) : undefined;
    const drawn = (end ?? today).minus({ days: random.int(end ? 120 : 30, 15 * 365) });
    const start = drawn < earliestStart ? earliestStart : drawn;
    return { start_date: formatCalendarDate(start), end_date: end ? formatCalendarDate(end) : null };
  }

  private nationalNumber(): string {
    let number: string;
    do {
      number = `QQ${String(this.random.int(0, 999_999)).padStart(6, '0')}${this.random.pick(['A', 'B', 'C', 'D'])}`;
    } while (this.nationalNumbers.has(number));
    this.nationalNumbers.add(number);
    return number;
  }

  private email(given: string, family: string): string {
    const local = `${given}.${family}`.toLowerCase().replace(/[^a-z.]/g, '');
    let address = `${local}@example.com`;
    for (let n = 2; this.emails.has(address); n++) address = `${local}${n}@example.com`;
    this.emails.add(address);
    return address;
  }
}
