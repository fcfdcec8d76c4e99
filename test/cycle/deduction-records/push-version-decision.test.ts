import { describe, expect, it } from 'vitest';
import { pushVersionDecision } from '../../../src/cycle/deduction-records/push-version-decision.ts';

describe('pushVersionDecision', () => {
  const current = { version: 3, contentHash: 'aaa' };

  it.each([
    ['no record yet', null, { version: 0, contentHash: 'x' }, { kind: 'insert' }],
    ['a higher version', current, { version: 4, contentHash: 'bbb' }, { kind: 'insert' }],
    ['a much higher version with the same content', current, { version: 99, contentHash: 'aaa' }, { kind: 'insert' }],
    ['the same version and content', current, { version: 3, contentHash: 'aaa' }, { kind: 'unchanged' }],
    ['the same version with other content', current, { version: 3, contentHash: 'bbb' }, { kind: 'conflict', reason: 'same-version-other-content', currentVersion: 3 }],
    ['a lower version', current, { version: 2, contentHash: 'bbb' }, { kind: 'conflict', reason: 'lower-version', currentVersion: 3 }],
    ['a lower version with the current content', current, { version: 1, contentHash: 'aaa' }, { kind: 'conflict', reason: 'lower-version', currentVersion: 3 }],
  ] as const)('%s', (_name, currentRecord, incoming, expected) => {
    expect(pushVersionDecision(currentRecord, incoming)).toEqual(expected);
  });
});
