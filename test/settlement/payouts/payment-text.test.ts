import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { isoLatinText, PAIN001_NAME_MAX_LENGTH as PAIN001_FILE_NAME_MAX_LENGTH } from '../../../src/settlement/payouts/pain001-file.ts';
import {
  BACS_FIELD_MAX_LENGTH,
  bacsText,
  PAIN001_NAME_MAX_LENGTH,
  pain001Name,
  paymentFileNameProblem,
  swiftLatinText,
  UNREPRESENTABLE_NAME,
} from '../../../src/settlement/payouts/payment-text.ts';

// The rule that writes names and references into payment files, class of character by class of
// character (the table in src/settlement/payouts/payment-text.ts and docs/administration.md), for pain.001 (SWIFT Latin) and
// Bacs, and what it means for a name at account setup and in a file.

const SWIFT_LATIN = /^[A-Za-z0-9/\-?:().,'+ ]*$/;
const BACS = /^[A-Z0-9.&/\- ]*$/;

const codePoints = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => String.fromCodePoint(from + index));
const letters = (characters: string[]) => characters.filter((character) => /\p{L}/u.test(character));

describe('each class of character, in pain.001 and in Bacs', () => {
  it.each([
    // ASCII letters and digits
    ['Acme Lending Ltd 2', 'Acme Lending Ltd 2', 'ACME LENDING LTD 2'],
    // Latin letters with marks
    ['Crédit Agricole Société', 'Credit Agricole Societe', 'CREDIT AGRICOLE SOCIETE'],
    ['Ångström Çelik Ñuñez Őrs', 'Angstrom Celik Nunez Ors', 'ANGSTROM CELIK NUNEZ ORS'],
    // the same, decomposed (NFD)
    ['Cre\u0301dit', 'Credit', 'CREDIT'],
    // Latin letters spelt out
    ['Straße Øresund Æble Łódź', 'Strasse Oresund Aeble Lodz', 'STRASSE ORESUND AEBLE LODZ'],
    ['Þór Jónsson, Đorđe, Œuvre, ﬁnance', 'Thor Jonsson, Dorde, Oeuvre, finance', 'THOR JONSSON DORDE OEUVRE FINANCE'],
    ['STRAßE ÞÓR', 'STRASSE THOR', 'STRASSE THOR'],
    ['Ｆｕｌｌｗｉｄｔｈ １２３', 'Fullwidth 123', 'FULLWIDTH 123'],
    // Cyrillic
    ['Иванов Сергей', 'Ivanov Sergey', 'IVANOV SERGEY'],
    ['Щукин Юрий', 'Shchukin Yuriy', 'SHCHUKIN YURIY'],
    ['ЩУКИН', 'SHCHUKIN', 'SHCHUKIN'],
    ['Україна Їжак Ґанок', 'Ukraina Izhak Ganok', 'UKRAINA IZHAK GANOK'],
    ['Объект', "Ob'ekt", 'OBEKT'],
    // Greek
    ['Παπαδόπουλος', 'Papadopoulos', 'PAPADOPOULOS'],
    ['ΑΘΗΝΑ ΑΕ', 'ATHINA AE', 'ATHINA AE'],
    ['Ψυχή Ἀθῆναι', 'Psychi Athinai', 'PSYCHI ATHINAI'],
    ['Οϋ', 'Oy', 'OY'],
    // the ampersand
    ['Müller & Söhne GmbH', 'Muller and Sohne GmbH', 'MULLER & SOHNE GMBH'],
    ['M&S LTD', 'M AND S LTD', 'M&S LTD'],
    // apostrophes
    ['O’Brien ‘Q’ D`Arcy ʼA′', "O'Brien 'Q' D'Arcy 'A'", 'OBRIEN Q DARCY A'],
    // hyphens and dashes
    ['Smith–Jones — Partners ‐ ‑ ‒ ― −', 'Smith-Jones - Partners - - - - -', 'SMITH-JONES - PARTNERS - - - - -'],
    // the rest of SWIFT Latin
    ["a/b-c?d:e(f)g.h,i'j+k", "a/b-c?d:e(f)g.h,i'j+k", 'A/B-C D E F G.H IJ K'],
    // everything else
    ['北京银行 Ltd', 'Ltd', 'LTD'],
    ['مصرف بنك Ltd', 'Ltd', 'LTD'],
    ['בנק Ltd', 'Ltd', 'LTD'],
    ['😀 Acme 🏦', 'Acme', 'ACME'],
    ['email@example.com_ok #1 100% €5 £5 "q" <b>', 'email example.com ok 1 100 5 5 q b', 'EMAIL EXAMPLE.COM OK 1 100 5 5 Q B'],
    ['Tab\tand\nnewline\r\u0000', 'Tab and newline', 'TAB AND NEWLINE'],
    ['  spaced   out  ', 'spaced out', 'SPACED OUT'],
    ['北京银行', '', ''],
    ['', '', ''],
  ])('%j: pain.001 %j, Bacs %j', (text, swift, bacs) => {
    expect(swiftLatinText(text, 140)).toBe(swift);
    expect(bacsText(text, 140)).toBe(bacs);
  });

  it('is what pain001-file.ts still exports as isoLatinText, with the same name length', () => {
    expect(isoLatinText('Müller & Söhne', 140)).toBe(swiftLatinText('Müller & Söhne', 140));
    expect(PAIN001_FILE_NAME_MAX_LENGTH).toBe(PAIN001_NAME_MAX_LENGTH);
  });

  it('writes every single character (U+0000 to U+2FFFF) within both sets', () => {
    const outside: string[] = [];
    for (const character of codePoints(0, 0x2ffff)) {
      const code = character.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const swift = swiftLatinText(character, 140);
      const bacs = bacsText(character, 140);
      if (!SWIFT_LATIN.test(swift) || !BACS.test(bacs)) outside.push(`U+${code.toString(16)} -> ${JSON.stringify([swift, bacs])}`);
    }
    expect(outside).toEqual([]);
  });

  it('writes every letter of the Latin alphabets (Latin-1, Extended-A and B) as at least one ASCII letter or digit', () => {
    const lost = letters(codePoints(0xc0, 0x24f)).filter((letter) => !/[A-Za-z0-9]/.test(swiftLatinText(letter, 140)) || !/[A-Z0-9]/.test(bacsText(letter, 140)));
    // Only the letters for glottal stops and the like, which are apostrophes in a romanisation (tone letters are digits: ƨ 2).
    expect(lost).toEqual(['Ƹ', 'ƹ', 'Ɂ', 'ɂ']);
  });

  it('writes every Cyrillic and Greek letter as at least one ASCII letter, but the hard and soft signs', () => {
    const alphabets = letters([...codePoints(0x400, 0x52f), ...codePoints(0x370, 0x3ff), ...codePoints(0x1f00, 0x1fff)]).filter((letter) =>
      /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(letter),
    );
    expect(alphabets.length).toBeGreaterThan(400);
    const lost = alphabets.filter((letter) => !/[A-Za-z]/.test(swiftLatinText(letter, 140)));
    expect(lost).toEqual(['Ъ', 'Ь', 'ъ', 'ь', 'Ҍ', 'ҍ', 'Ԧ', 'ԧ']);
    // The signs are an apostrophe in pain.001 (Ob'ekt), nothing in Bacs.
    expect(lost.map((letter) => [swiftLatinText(letter, 140), bacsText(letter, 140)])).toEqual(lost.map(() => ["'", '']));
  });

  it('writes CJK ideographs, Arabic, Hebrew, Hangul and emoji as nothing (a space between words)', () => {
    const other = [...codePoints(0x4e00, 0x9fff), ...codePoints(0x600, 0x6ff), ...codePoints(0x5d0, 0x5ea), ...codePoints(0xac00, 0xd7a3), ...codePoints(0x1f300, 0x1faff)];
    expect(other.filter((character) => swiftLatinText(character, 140) !== '' || bacsText(character, 140) !== '')).toEqual([]);
    expect(swiftLatinText('Acme北京Lending', 140)).toBe('Acme Lending');
  });

  it('gives text within the set and the length, trimmed, without double spaces, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 1, max: 140 }), (text, max) => {
        for (const [written, set] of [
          [swiftLatinText(text, max), SWIFT_LATIN],
          [bacsText(text, max), BACS],
        ] as const) {
          expect(written).toMatch(set);
          expect(written.length).toBeLessThanOrEqual(max);
          expect(written).toBe(written.trim());
          expect(written).not.toContain('  ');
        }
      }),
    );
  });

  it('leaves what it wrote as it was when written again', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (text) => {
        const swift = swiftLatinText(text, 140);
        const bacs = bacsText(text, BACS_FIELD_MAX_LENGTH);
        expect(swiftLatinText(swift, 140)).toBe(swift);
        expect(bacsText(bacs, BACS_FIELD_MAX_LENGTH)).toBe(bacs);
      }),
    );
  });

  it('leaves text already in SWIFT Latin as it was (but for spacing)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9/\-?:().,'+]([A-Za-z0-9/\-?:().,'+ ]{0,60}[A-Za-z0-9/\-?:().,'+])?$/), (text) => {
        fc.pre(!text.includes('  '));
        expect(swiftLatinText(text, 140)).toBe(text);
      }),
    );
  });

  it('cuts to the field without leaving a trailing space: 70 for a pain.001 name, 18 in Bacs', () => {
    expect(swiftLatinText(`${'A'.repeat(69)} Ltd`, PAIN001_NAME_MAX_LENGTH)).toBe('A'.repeat(69));
    expect(swiftLatinText('B'.repeat(100), PAIN001_NAME_MAX_LENGTH)).toBe('B'.repeat(70));
    expect(bacsText('Crédit Agricole Société', BACS_FIELD_MAX_LENGTH)).toBe('CREDIT AGRICOLE SO');
    expect(bacsText('Salary Deductions Collections Ltd', BACS_FIELD_MAX_LENGTH)).toBe('SALARY DEDUCTIONS');
  });
});

describe('paymentFileNameProblem: a name at account setup', () => {
  it.each([['Acme Lending Ltd'], ['Иванов Сергей'], ['Παπαδόπουλος'], ['Müller & Söhne'], ['AB'], ['北京银行 (UK) Ltd'], ['A'.repeat(70)], [`${'A'.repeat(69)}é`]])(
    'accepts %j',
    (name) => {
      expect(paymentFileNameProblem(name)).toBeNull();
    },
  );

  it.each([
    ['北京银行', /^has no character a UK payment file can carry, and a name needs at least 2 letters or digits/],
    ['😀😀', /^has no character a UK payment file can carry/],
    ['A 北京银行', /^reads "A" in a payment file, and a name needs at least 2 letters or digits there/],
    ['& &', /^reads "and and" in a payment file/],
    ['-- ++ //', /^reads "-- \+\+ \/\/" in a payment file/],
    ['A'.repeat(71), /^is 71 characters as a payment file writes it, over the 70 a pain\.001 name allows/],
    // & is spelt "and" in pain.001, so 67 characters grow to 71.
    [`${'A'.repeat(32)}&${'B'.repeat(34)}`, /^is 71 characters/],
    ['Щ'.repeat(20), /^is 80 characters/],
  ])('refuses %j', (name, problem) => {
    expect(paymentFileNameProblem(name)).toMatch(problem);
  });
});

describe('pain001Name: a stored name in a file', () => {
  it('is the name in SWIFT Latin, cut to 70', () => {
    expect(pain001Name('Müller & Söhne GmbH')).toBe('Muller and Sohne GmbH');
    expect(pain001Name('Иванов')).toBe('Ivanov');
    expect(pain001Name(`${'A'.repeat(69)} Ltd`)).toBe('A'.repeat(69));
  });

  it('romanises a name stored before setup refused it from whatever script it is in, rather than block the file', () => {
    expect(pain001Name('北京银行')).toBe('BeiJingYinXing');
    expect(pain001Name('東京 ABC')).toBe('ABC');
    expect(pain001Name('A 北京')).toBe('A BeiJing');
  });

  it('writes NOTPROVIDED for a name with no letter of any script, and never an empty name', () => {
    expect(pain001Name('😀')).toBe(UNREPRESENTABLE_NAME);
    expect(pain001Name('')).toBe(UNREPRESENTABLE_NAME);
    expect(pain001Name('😀 A')).toBe('A');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (name) => {
        const written = pain001Name(name);
        expect(written).toMatch(SWIFT_LATIN);
        expect(written).not.toBe('');
        expect(written.length).toBeLessThanOrEqual(PAIN001_NAME_MAX_LENGTH);
      }),
    );
  });

  it('writes every name setup accepts exactly as setup showed it: its SWIFT Latin uncut', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 140 }), (name) => {
        if (paymentFileNameProblem(name) === null) expect(pain001Name(name)).toBe(swiftLatinText(name, Number.POSITIVE_INFINITY));
      }),
    );
  });
});
