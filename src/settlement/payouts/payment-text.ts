import anyAscii from 'any-ascii';

// Text as UK payment files carry it. A bank refuses a whole file over one character outside its set, so
// names and references are rewritten into the set before they reach a file, by one rule per file, and
// the same rule judges a name when an account is set up (so no stored name can block a file later).
//
// Two character sets:
// - pain.001 (ISO 20022, the "SWIFT Latin" subset UK and EPC banks accept): a-z A-Z 0-9 / - ? : ( ) . , ' + space.
// - Bacs (Standard 18): A-Z 0-9 . & / - space, upper case only; names and references are 18 characters.
//
// What each kind of character becomes (docs/administration.md, "Names and references in payment files", has it as a table):
//
// - A-Z a-z 0-9: kept; Bacs upper case.
// - Latin letters with marks (é ü ñ å ç ő): the letter without its mark (e u n a c o).
// - Other Latin letters (ß æ œ ø ł đ ð þ ı, ligatures, full-width forms): spelt in ASCII (ss ae oe o l d d th i).
// - Cyrillic: romanised (Щукин -> Shchukin; ъ and ь -> ', left out in Bacs).
// - Greek: romanised, ου as ou (Παπαδόπουλος -> Papadopoulos).
// - &: "and" in pain.001 ("AND" in text without lower case); kept in Bacs.
// - apostrophes (' ’ ‘ ‚ ‛ ` ´ ʼ ′): '; left out in Bacs (O'Brien -> OBRIEN).
// - hyphens and dashes (‐ ‑ ‒ – — ― −): -.
// - / . , ( ) ? : + kept; in Bacs / and . kept, the others a space.
// - compatibility forms (１ ² ﬀ): their plain form (NFKD).
// - anything else, other scripts (CJK, Arabic, Hebrew...), emoji, symbols (@ _ " < > # % € £), tabs and
//   line breaks: a space.
// Letters of every kind are upper case in Bacs.
//
// Then runs of spaces become one, the text is trimmed and cut to the field's length (no trailing space).
//
// Why "and" for &: SWIFT Latin has no &, and the "+" banks used to put in its place reads as a
// different name ("Marks + Spencer"); "and" is how a person writes the same name. Bacs has &, so keeps it.
// Why Cyrillic and Greek are romanised and other scripts are not: a UK bank account held by someone
// whose name is written in Cyrillic or Greek is held under its standard romanisation, which these
// follow closely (any-ascii's per-letter tables, the Greek ου written ou as ELOT 743 and ISO 843 do).
// Romanising Chinese or Japanese gives a reading the bank never holds (kanji read as Mandarin), so a
// name in those scripts is refused at setup: the account is set up under the name the bank holds.

/** What UK and EPC banks accept in pain.001 text. */
const OUTSIDE_SWIFT_LATIN = /[^A-Za-z0-9/\-?:().,'+ ]/g;
/** What Bacs carries (after upper-casing). */
const OUTSIDE_BACS = /[^A-Z0-9.&/\- ]/g;

/** Banks' pain.001 guidelines (EPC, UK clearing) cap names at 70 characters though the schema allows 140. */
export const PAIN001_NAME_MAX_LENGTH = 70;
/** Bacs carries 18 characters of a name or a reference. */
export const BACS_FIELD_MAX_LENGTH = 18;
/** A name that, written in a payment file, has fewer letters or digits names no one. */
export const MIN_NAME_LETTERS_OR_DIGITS = 2;
/** The pain.001 name of a stored account whose name has no character a file can carry (never accepted at setup now). */
export const UNREPRESENTABLE_NAME = 'NOTPROVIDED';

/** Words of the scripts romanised: Latin (for its letters outside ASCII), Greek and Cyrillic, with their marks. */
const ROMANISED_WORD = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}][\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}]*/gu;
const APOSTROPHES = /['’‘‚‛`´ʼ′]/g;
const DASHES = /[‐‑‒–—―−]/g;

/** ου is one sound, ou, in ELOT 743 and ISO 843; letter by letter it would be "oy". A diaeresis (οϋ) keeps two. */
function greekDigraphs(word: string): string {
  return word.replace(/([οΟ])([υύΥΎ])/gu, (_pair, omicron: string, upsilon: string) => `${omicron === 'Ο' ? 'O' : 'o'}${/[ΥΎ]/u.test(upsilon) ? 'U' : 'u'}`);
}

/** One word in ASCII: a word written in capitals stays in capitals (ЩУКИН -> SHCHUKIN, not ShchUKIN). */
function romanisedWord(word: string): string {
  const capitals = /\p{Lu}/u.test(word) && !/\p{Ll}/u.test(word.replaceAll('ß', ''));
  const romanised = anyAscii(greekDigraphs(word));
  return capitals ? romanised.toUpperCase() : romanised;
}

/**
 * The text with Latin, Greek and Cyrillic letters in ASCII, compatibility forms plain, marks left
 * on other characters dropped, apostrophes and dashes made ASCII. Other characters are left for the
 * file's rule to replace.
 */
function romanised(text: string): string {
  return text.normalize('NFC').replace(ROMANISED_WORD, romanisedWord).normalize('NFKD').replace(/\p{M}/gu, '').replace(APOSTROPHES, "'").replace(DASHES, '-');
}

function spacedAndCut(text: string, maxLength: number): string {
  return text.replace(/ +/g, ' ').trim().slice(0, maxLength).trimEnd();
}

/**
 * Text as a bank accepts it in a pain.001 file (SWIFT Latin), by the table above, cut to `maxLength`.
 * May return '' when nothing of the text is representable; the caller decides what that means.
 */
export function swiftLatinText(text: string, maxLength: number): string {
  const ascii = romanised(text);
  const and = /[a-z]/.test(ascii) || !/[A-Z]/.test(ascii) ? 'and' : 'AND';
  return spacedAndCut(ascii.replaceAll('&', ` ${and} `).replace(OUTSIDE_SWIFT_LATIN, ' '), maxLength);
}

/** Text as Bacs carries it, by the table above, cut to `maxLength` (a Bacs name or reference: 18). */
export function bacsText(text: string, maxLength: number): string {
  return spacedAndCut(romanised(text).toUpperCase().replace(/'/g, '').replace(OUTSIDE_BACS, ' '), maxLength);
}

function lettersAndDigits(text: string): number {
  return text.replace(/[^A-Za-z0-9]/g, '').length;
}

/** Every letter in ASCII, of whatever script: only for names stored before setup refused them. */
function romanisedEveryScript(text: string): string {
  return text.normalize('NFC').replace(/\p{L}+/gu, (word) => ` ${romanisedWord(word)} `);
}

/**
 * An account holder's name as a pain.001 file writes it (Cdtr/Nm, Dbtr/Nm). Never throws, so one
 * account's name cannot block a file that pays everyone: a name set up before names were checked, with
 * too few letters a bank accepts, is written romanised from whatever script it is in (北京银行 ->
 * BeiJingYinXing), and a name with no letter at all (emoji) as NOTPROVIDED. The sort code and account
 * number are what route the payment; paymentFileNameProblem tells operators which names to correct.
 */
export function pain001Name(name: string): string {
  const written = swiftLatinText(name, PAIN001_NAME_MAX_LENGTH);
  if (lettersAndDigits(written) >= MIN_NAME_LETTERS_OR_DIGITS) return written;
  const everyScript = swiftLatinText(romanisedEveryScript(name), PAIN001_NAME_MAX_LENGTH);
  if (lettersAndDigits(everyScript) >= MIN_NAME_LETTERS_OR_DIGITS) return everyScript;
  return written === '' ? UNREPRESENTABLE_NAME : written;
}

/**
 * Why an account holder's name cannot be set up for payment files, or null: written in the files'
 * character sets it must keep at least two letters or digits (counted as Bacs writes it, so an "&"
 * that pain.001 spells "and" counts for nothing), and fit a pain.001 name uncut.
 */
export function paymentFileNameProblem(name: string): string | null {
  const written = swiftLatinText(name, Number.POSITIVE_INFINITY);
  if (lettersAndDigits(bacsText(name, Number.POSITIVE_INFINITY)) < MIN_NAME_LETTERS_OR_DIGITS) {
    const reads = written === '' ? 'has no character a UK payment file can carry' : `reads "${written}" in a payment file`;
    return `${reads}, and a name needs at least ${MIN_NAME_LETTERS_OR_DIGITS} letters or digits there: give the name the bank holds the account in (Latin, Greek or Cyrillic letters)`;
  }
  if (written.length > PAIN001_NAME_MAX_LENGTH) {
    return (
      `is ${written.length} characters as a payment file writes it, over the ${PAIN001_NAME_MAX_LENGTH} a pain.001 name allows: ` +
      'shorten it as the bank holds it (e.g. Ltd for Limited)'
    );
  }
  return null;
}
