import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import { DomainError } from '../../../src/platform/shared/domain-errors.ts';
import { decodeCursor, encodeCursor, useCursorKeys } from '../../../src/platform/shared/paging.ts';

const row = { created_at: new Date('2026-03-04T05:06:07.089Z'), id: '0190f5a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b' };

function refusal(cursor: string, parameter: 'after' | 'before' = 'after') {
  try {
    decodeCursor(cursor, parameter);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const problem = knownProblem(error)!.toBody('/payments');
    expect(problem).toMatchObject({ status: 400, errors: [{ pointer: `/query/${parameter}`, detail: expect.any(String) }] });
    return problem;
  }
  throw new Error(`cursor ${cursor} was accepted`);
}

const unsigned = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

afterEach(() => useCursorKeys([randomBytes(32)]));

describe('signed paging cursors', () => {
  it('decode what they encoded', () => {
    expect(decodeCursor(encodeCursor(row), 'after')).toEqual({ createdAt: '2026-03-04T05:06:07.089Z', id: row.id });
  });

  it('refuse an unsigned cursor, whatever it holds, with 400 naming the parameter', () => {
    refusal(unsigned(['2026-03-04T05:06:07.089Z', row.id]));
    refusal(unsigned(['2026-03-04T05:06:07.089Z', 'not-a-uuid']), 'before');
    refusal('bm9wZQ');
    refusal('');
  });

  it('refuse a cursor whose content or signature was changed', () => {
    const [payload, tag] = encodeCursor(row).split('.') as [string, string];
    const otherPayload = unsigned(['2026-03-04T05:06:07.089Z', '0190f5a4-1c2d-7e3f-8a9b-ffffffffffff']);
    refusal(`${otherPayload}.${tag}`);
    refusal(`${payload}.${tag.slice(0, -2)}${tag.endsWith('AA') ? 'BB' : 'AA'}`);
    refusal(`${payload}.${tag}.extra`);
    refusal(`${payload}.`);
  });

  it('refuse a cursor signed by a key this service does not hold', () => {
    useCursorKeys([randomBytes(32)]);
    const foreign = encodeCursor(row);
    useCursorKeys([randomBytes(32)]);
    refusal(foreign);
  });

  it('refuse a well-signed cursor whose id is not a UUID (it would reach SQL as one)', () => {
    const key = randomBytes(32);
    useCursorKeys([key]);
    const signed = encodeCursor({ created_at: row.created_at, id: 'not-a-uuid' });
    refusal(signed);
  });

  it('keep verifying cursors of the previous key after a rotation; new ones are signed with the current key', () => {
    const previous = randomBytes(32);
    const current = randomBytes(32);
    useCursorKeys([previous]);
    const before = encodeCursor(row);
    useCursorKeys([current, previous]);
    expect(decodeCursor(before, 'after').id).toBe(row.id);
    const after = encodeCursor(row);
    useCursorKeys([current]);
    expect(decodeCursor(after, 'after').id).toBe(row.id);
    refusal(before);
  });
});
