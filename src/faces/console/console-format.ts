// Amounts are written by formatMoney (src/platform/money/money-text.ts), the one formatter of every face.

/** An instant in UTC to the second, as every page shows it (the service's times are UTC). */
export function formatInstant(instant: Date | string | null | undefined): string {
  if (instant === null || instant === undefined) return '—';
  const date = typeof instant === 'string' ? new Date(instant) : instant;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Milliseconds under a second, tenths of a second under ten, then whole seconds, then minutes and seconds. */
export function formatDuration(milliseconds: number | null | undefined): string {
  if (milliseconds === null || milliseconds === undefined) return '—';
  if (milliseconds < 1_000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 10_000) return `${(milliseconds / 1_000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * An employee as pages name them: the name (as the payroll spells it) and the works number, "Alex Taylor
 * (WN1042)"; either alone when the other is unknown, the id as the last resort, a dash without any.
 */
export function formatEmployee(employee: { name: string | null; worksNumber: string | null; id?: string | null }): string {
  const { name, worksNumber, id } = employee;
  if (name !== null && worksNumber !== null) return `${name} (${worksNumber})`;
  return name ?? worksNumber ?? id ?? '—';
}
