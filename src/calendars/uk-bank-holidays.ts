/**
 * England & Wales bank holidays, as published on gov.uk/bank-holidays. When a fixed-date holiday
 * falls on a weekend the following weekday(s) is the substitute day, which is the date payroll
 * actually observes, so only the substitute is listed.
 * Seeds the bank_holidays table; extend the list before the last year runs out.
 */
export const englandAndWalesBankHolidays: ReadonlyArray<{ date: string; name: string }> = [
  // 2025 (Easter Sunday 20 April)
  { date: '2025-01-01', name: "New Year's Day" },
  { date: '2025-04-18', name: 'Good Friday' },
  { date: '2025-04-21', name: 'Easter Monday' },
  { date: '2025-05-05', name: 'Early May bank holiday' },
  { date: '2025-05-26', name: 'Spring bank holiday' },
  { date: '2025-08-25', name: 'Summer bank holiday' },
  { date: '2025-12-25', name: 'Christmas Day' },
  { date: '2025-12-26', name: 'Boxing Day' },
  // 2026 (Easter Sunday 5 April; Boxing Day is a Saturday)
  { date: '2026-01-01', name: "New Year's Day" },
  { date: '2026-04-03', name: 'Good Friday' },
  { date: '2026-04-06', name: 'Easter Monday' },
  { date: '2026-05-04', name: 'Early May bank holiday' },
  { date: '2026-05-25', name: 'Spring bank holiday' },
  { date: '2026-08-31', name: 'Summer bank holiday' },
  { date: '2026-12-25', name: 'Christmas Day' },
  { date: '2026-12-28', name: 'Boxing Day (substitute day)' },
  // 2027 (Easter Sunday 28 March; Christmas Day a Saturday, Boxing Day a Sunday)
  { date: '2027-01-01', name: "New Year's Day" },
  { date: '2027-03-26', name: 'Good Friday' },
  { date: '2027-03-29', name: 'Easter Monday' },
  { date: '2027-05-03', name: 'Early May bank holiday' },
  { date: '2027-05-31', name: 'Spring bank holiday' },
  { date: '2027-08-30', name: 'Summer bank holiday' },
  { date: '2027-12-27', name: 'Christmas Day (substitute day)' },
  { date: '2027-12-28', name: 'Boxing Day (substitute day)' },
];
