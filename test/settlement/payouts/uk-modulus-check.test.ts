import { describe, expect, it } from 'vitest';
import { vocalinkModulusCheck } from '../../../src/settlement/payouts/uk-modulus-check.ts';
import { SCSUBTAB_TEXT, VALACDOS_TEXT } from '../../../src/settlement/payouts/vocalink-modulus-tables.ts';

// VocaLink's modulus check over the vendored valacdos.txt 8.50. The specification's own worked
// examples ("Validating account numbers: UK modulus checking", chapter of test cases, numbered as
// there) must all hold; the cases after them pin down the parts of the algorithm those examples do not
// reach, where the npm packages went wrong (see src/settlement/payouts/uk-modulus-check.ts).

const workedExamples: Array<[number, string, string, string, boolean]> = [
  [1, 'Pass modulus 10 check', '089999', '66374958', true],
  [2, 'Pass modulus 11 check', '107999', '88837491', true],
  [3, 'Pass modulus 11 and double alternate checks', '202959', '63748472', true],
  [4, 'Exception 10 & 11 where first check passes and second check fails', '871427', '46238510', true],
  [5, 'Exception 10 & 11 where first check fails and second check passes', '872427', '46238510', true],
  [6, 'Exception 10 where ab = 09 and g = 9: first check passes, second fails', '871427', '09123496', true],
  [7, 'Exception 10 where ab = 99 and g = 9: first check passes, second fails', '871427', '99123496', true],
  [8, 'Exception 3, sort code at the start of a range: c = 6, second check ignored', '820000', '73688637', true],
  [9, 'Exception 3, sort code at the end of a range: c = 9, second check ignored', '827999', '73988638', true],
  [10, 'Exception 3: c is not 6 or 9, both checks pass', '827101', '28748352', true],
  [11, 'Exception 4 where the remainder equals the check digit', '134020', '63849203', true],
  [12, 'Exception 1 where it passes the double alternate check', '118765', '64371389', true],
  [13, 'Exception 6: fails the standard check but is a foreign currency account', '200915', '41011166', true],
  [14, 'Exception 5 where the check passes', '938611', '07806039', true],
  [15, 'Exception 5 where the check passes with substitution', '938600', '42368003', true],
  [16, 'Exception 5 where both checks produce a remainder of 0 and pass', '938063', '55065200', true],
  [17, 'Exception 7 where it passes but would fail the standard check', '772798', '99345694', true],
  [18, 'Exception 8 where the check passes', '086090', '06774744', true],
  [19, 'Exception 2 & 9 where the first check passes', '309070', '02355688', true],
  [20, 'Exception 2 & 9 where the first check fails and the second passes with substitution', '309070', '12345668', true],
  [21, 'Exception 2 & 9 where a ≠ 0 and g ≠ 9 and passes', '309070', '12345677', true],
  [22, 'Exception 2 & 9 where a ≠ 0 and g = 9 and passes', '309070', '99345694', true],
  [23, 'Exception 5 where the first check digit is correct and the second incorrect', '938063', '15764273', false],
  [24, 'Exception 5 where the first check digit is incorrect and the second correct', '938063', '15764264', false],
  [25, 'Exception 5 where the first check digit is incorrect with a remainder of 1', '938063', '15763217', false],
  [26, 'Exception 1 where it fails the double alternate check', '118765', '64371388', false],
  [27, 'Pass modulus 11 check and fail double alternate check', '203099', '66831036', false],
  [28, 'Fail modulus 11 check and pass double alternate check', '203099', '58716970', false],
  [29, 'Fail modulus 10 check', '089999', '66374959', false],
  [30, 'Fail modulus 11 check', '107999', '88837493', false],
  [31, 'Exception 12/13 where it passes the modulus 11 check (modulus 10 fails, not needed)', '074456', '12345112', true],
  [32, 'Exception 12/13 where it passes the modulus 11 check (modulus 10 passes too)', '070116', '34012583', true],
  [33, 'Exception 12/13 where it fails the modulus 11 check but passes the modulus 10 check', '074456', '11104102', true],
  [34, 'Exception 14 where the first check fails and the second passes', '180002', '00000190', true],
];

describe("the specification's worked examples", () => {
  it.each(workedExamples)('%i. %s: %s %s', (_number, _name, sortCode, accountNumber, valid) => {
    expect(vocalinkModulusCheck(sortCode, accountNumber)).toBe(valid ? 'pass' : 'fail');
  });
});

describe('beyond the worked examples', () => {
  it('zeroises u to b for exception 10 only when g = 9 (ab = 09 with another g is checked with every weight)', () => {
    // 871427 has exception 10 then 11; with g = 9 these pass only because u..b weigh nothing.
    expect(vocalinkModulusCheck('871427', '09123496')).toBe('pass');
    // The same first digits with g ≠ 9: computed with every weight, neither check passes.
    expect(vocalinkModulusCheck('875286', '99595103')).toBe('fail');
  });

  it('needs both checks to pass where neither row carries an exception that relaxes that', () => {
    // 203099: modulus 11 then double alternate, no exception (worked examples 27 and 28 fail one each).
    expect(vocalinkModulusCheck('239126', '09683478')).toBe('fail');
    expect(vocalinkModulusCheck('203099', '66831036')).toBe('fail');
  });

  it('skips the exception 3 second check on c = 6 or 9 only', () => {
    // c = 5: the double alternate check runs, and fails.
    expect(vocalinkModulusCheck('826729', '17957246')).toBe('fail');
  });

  it('reads exception 14 as: an account ending 0, 1 or 9 is checked again with that digit dropped and a 0 in front', () => {
    expect(vocalinkModulusCheck('180002', '00000190')).toBe('pass');
    expect(vocalinkModulusCheck('180002', '09747109')).toBe('pass');
    // Ends 8: no second chance.
    expect(vocalinkModulusCheck('180002', '12345678')).toBe('fail');
    expect(vocalinkModulusCheck('180002', '99669395')).toBe('fail');
  });

  it('passes a foreign currency account of an exception 6 range (a is 4 to 8, g = h) without checking it', () => {
    expect(vocalinkModulusCheck('200000', '41011166')).toBe('pass');
    expect(vocalinkModulusCheck('200000', '31011166')).toBe('fail');
  });

  it('catches every single mistyped digit of the modulus 10 and modulus 11 examples (weights prime to the modulus)', () => {
    for (const [sortCode, accountNumber] of [
      ['089999', '66374958'],
      ['107999', '88837491'],
    ] as const) {
      for (let position = 0; position < 8; position += 1) {
        for (let digit = 0; digit <= 9; digit += 1) {
          if (String(digit) === accountNumber[position]) continue;
          const mistyped = `${accountNumber.slice(0, position)}${digit}${accountNumber.slice(position + 1)}`;
          expect(vocalinkModulusCheck(sortCode, mistyped), `${sortCode} ${mistyped}`).toBe('fail');
        }
      }
    }
  });

  it('gives no verdict for a sort code valacdos.txt has no range for, which VocaLink says to presume valid', () => {
    expect(vocalinkModulusCheck('000000', '00000000')).toBe('not-covered');
    expect(vocalinkModulusCheck('102030', '12345678')).toBe('not-covered');
  });

  it('takes only a 6-digit sort code without hyphens and an 8-digit account number', () => {
    expect(() => vocalinkModulusCheck('20-00-00', '55779911')).toThrow(RangeError);
    expect(() => vocalinkModulusCheck('200000', '5577991')).toThrow(RangeError);
  });
});

describe('the vendored tables', () => {
  const rows = VALACDOS_TEXT.trim().split('\n');

  it('are valacdos.txt 8.50 and its scsubtab.txt, whole', () => {
    expect(rows).toHaveLength(1151);
    expect(rows[0]).toBe('010004 016715 MOD11    0    0    0    0    0    0    8    7    6    5    4    3    2    1');
    expect(rows.at(-1)).toBe('987004 989999 DBLAL    2    1    2    1    2    1    2    1    2    1    2    1    2    1');
    expect(SCSUBTAB_TEXT.trim().split('\n')).toHaveLength(21);
  });

  it('give every sort code at most two rows, the ranges in order', () => {
    const ranges = rows.map((row) => row.split(/\s+/).slice(0, 2).map(Number) as [number, number]);
    for (const [start, end] of ranges) expect(start).toBeLessThanOrEqual(end);
    for (let index = 2; index < ranges.length; index += 1) {
      // A third row over the same sort code would be a table the algorithm does not read.
      const [start] = ranges[index]!;
      const overlapping = ranges.slice(0, index).filter(([from, to]) => from <= start && start <= to);
      expect(overlapping.length, rows[index]).toBeLessThanOrEqual(1);
    }
  });
});
