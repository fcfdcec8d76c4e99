import { describe, expect, it } from 'vitest';
import {
  availabilityAtProvider,
  availabilityOfPerson,
  type AvailabilityAtProvider,
  type DirectoryAvailabilityRecord,
  type ProviderAvailabilityAnswer,
} from '../../../src/collections/availability/availability-at-provider.ts';

// The rule's whole table, written out by hand: every provider answer against every directory record.
// Columns: the directory's record of the person at that provider. Rows: what the provider said.
// Each cell: status / who answered / whether nobody could (a provider failure to report).

const providerAnswers: Record<string, ProviderAvailabilityAnswer> = {
  'says confirmed': { kind: 'answered', status: 'confirmed' },
  'says pending': { kind: 'answered', status: 'pending_employer_opt_in' },
  'says not_eligible': { kind: 'answered', status: 'not_eligible' },
  'says not_found': { kind: 'answered', status: 'not_found' },
  failed: { kind: 'failed' },
  'not asked (no API)': { kind: 'not_asked' },
};

const directoryRecords: Record<string, DirectoryAvailabilityRecord> = {
  unknown: { kind: 'unknown' },
  'other person': { kind: 'other_person' },
  'known confirmed': { kind: 'known', status: 'confirmed' },
  'known pending': { kind: 'known', status: 'pending_employer_opt_in' },
  'known not_eligible': { kind: 'known', status: 'not_eligible' },
  // availabilityStatus never gives a known employee not_found; the rule passes it on all the same.
  'known not_found': { kind: 'known', status: 'not_found' },
};

const cell = (status: AvailabilityAtProvider['status'], answeredBy: AvailabilityAtProvider['answeredBy'], unanswered = false): AvailabilityAtProvider => ({
  status,
  answeredBy,
  unanswered,
});

// C confirmed, P pending_employer_opt_in, E not_eligible, N not_found; /p the provider answered,
// /d our directory, /- nobody; ! nobody could answer (the provider failed).
const table = `
                       unknown  other person  known confirmed  known pending  known not_eligible  known not_found
  says confirmed       C/p      N/-           C/p              C/p            C/p                 C/p
  says pending         P/p      N/-           P/p              P/p            P/p                 P/p
  says not_eligible    E/p      N/-           E/p              E/p            E/p                 E/p
  says not_found       N/p      N/-           N/p              N/p            N/p                 N/p
  failed               N/-!     N/-!          C/d              P/d            E/d                 N/d
  not asked (no API)   N/-      N/-           C/d              P/d            E/d                 N/d
`;
const C = 'confirmed';
const P = 'pending_employer_opt_in';
const E = 'not_eligible';
const N = 'not_found';
const statusOf = { C, P, E, N } as const;
const sourceOf = { p: 'provider', d: 'directory', '-': 'nobody' } as const;

/** The table's rows by provider answer, each a cell per directory record in the order of directoryRecords. */
const expected: Record<string, AvailabilityAtProvider[]> = Object.fromEntries(
  table
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      // Columns are two or more spaces apart; the first is the provider's answer.
      const [answerName, ...cells] = line.trim().split(/\s{2,}/);
      return [
        answerName!,
        cells.map((text) => {
          const [, status, source, bang] = /^([CPEN])\/([pd-])(!?)$/.exec(text)!;
          return cell(statusOf[status as keyof typeof statusOf], sourceOf[source as keyof typeof sourceOf], bang === '!');
        }),
      ];
    }),
);

describe('availabilityAtProvider: one answer per person, for the light and the full check', () => {
  const columns = Object.entries(directoryRecords);
  const cases = Object.entries(providerAnswers).flatMap(([answerName, answer]) =>
    columns.map(([recordName, record], column) => ({ name: `provider ${answerName}, directory ${recordName}`, answer, record, want: expected[answerName]![column]! })),
  );

  it('covers every combination of provider answer and directory record', () => {
    expect(cases).toHaveLength(Object.keys(providerAnswers).length * columns.length);
    expect(Object.keys(expected).sort()).toEqual(Object.keys(providerAnswers).sort());
    for (const row of Object.values(expected)) expect(row).toHaveLength(columns.length);
  });

  it.each(cases)('$name', ({ answer, record, want }) => {
    expect(availabilityAtProvider(answer, record)).toEqual(want);
  });

  it('lets a provider that answered not_found win over a confirmed employment in our directory', () => {
    expect(availabilityAtProvider({ kind: 'answered', status: 'not_found' }, { kind: 'known', status: 'confirmed' })).toEqual(cell(N, 'provider'));
  });

  it('never lets a provider widen our matching rule, and never confirms without a source', () => {
    for (const { answer, record } of cases) {
      const at = availabilityAtProvider(answer, record);
      if (record.kind === 'other_person') expect(at.status).toBe('not_found');
      if (at.status !== 'not_found') expect(at.answeredBy).not.toBe('nobody');
      if (at.unanswered) expect([at.status, answer.kind]).toEqual(['not_found', 'failed']);
    }
  });
});

describe('availabilityOfPerson: the person over every provider', () => {
  it('is not_found, answered, when no provider knows the person', () => {
    expect(availabilityOfPerson([])).toEqual({ status: 'not_found', unanswered: false });
    expect(availabilityOfPerson([cell(N, 'provider'), cell(N, 'nobody')])).toEqual({ status: 'not_found', unanswered: false });
  });

  it('takes the most useful answer of any provider', () => {
    expect(availabilityOfPerson([cell(E, 'provider'), cell(C, 'directory'), cell(P, 'provider')])).toEqual({ status: 'confirmed', unanswered: false });
    expect(availabilityOfPerson([cell(E, 'directory'), cell(P, 'provider')])).toEqual({ status: 'pending_employer_opt_in', unanswered: false });
    expect(availabilityOfPerson([cell(N, 'provider'), cell(E, 'directory')])).toEqual({ status: 'not_eligible', unanswered: false });
  });

  it('is unanswered when nothing was found and a provider could not be asked, and answered when another provider knows the person', () => {
    expect(availabilityOfPerson([cell(N, 'nobody', true), cell(N, 'provider')])).toEqual({ status: 'not_found', unanswered: true });
    expect(availabilityOfPerson([cell(N, 'nobody', true), cell(E, 'directory')])).toEqual({ status: 'not_eligible', unanswered: false });
  });
});
