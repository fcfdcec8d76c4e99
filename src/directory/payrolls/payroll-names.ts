/**
 * A payroll as people read it: its employer's name and its own, "Acme Manufacturing Ltd: Monthly staff"
 * (the console's charts name payrolls the same way). Pages, run summaries and the CLI use it where they
 * once printed the payroll's id; the id stays where support looks it up (run details, links, JSON).
 */
export function payrollName(names: { employer_name: string; payroll_name: string }): string {
  return `${names.employer_name}: ${names.payroll_name}`;
}
