import type { Readable } from 'node:stream';
import { type ParsedStatementFile, StatementRejected } from './bank-statement.ts';
import { parseCamtStatement } from './camt-statement-parser.ts';
import { parseCsvStatement } from './csv-statement-parser.ts';

export interface ParseStatementOptions {
  /** The largest file accepted; counted while streaming, so a larger one is refused before it is all read. */
  maxBytes: number;
  /** Only for messages: where the file came from. */
  fileName?: string;
}

/**
 * Parses a bank statement file, whatever its format: camt.053 or camt.054 XML when its first
 * non-blank character is `<`, otherwise the CSV layout (csv-statement-parser.ts). The content decides,
 * never the file name or a media type, which a bank's upload can get wrong.
 *
 * Text: an XML file is decoded in the encoding its XML declaration names (UTF-8 when it names none;
 * ISO-8859-1, ISO-8859-15, windows-1252 and US-ASCII are read too, see `XML_ENCODINGS`); a CSV file is
 * UTF-8 (a byte-order mark allowed). Bytes that are not valid in the encoding refuse the file: a name
 * or reference read in the wrong encoding would silently not match. A source of strings is text
 * already: it is read as it is, whatever the declaration says.
 */
export async function parseStatement(source: AsyncIterable<Buffer | string> | Readable, options: ParseStatementOptions): Promise<ParsedStatementFile> {
  const bytes = countedBytes(source, options.maxBytes);
  try {
    const { head, strings, rest } = await headUntilFirstCharacter(bytes);
    const xml = head[firstCharacter(head)] === LESS_THAN;
    const encoding = xml && !strings ? declaredEncoding(head) : 'utf-8';
    const chunks = decoded(prepended(head, rest), encoding);
    return xml ? await parseCamtStatement(chunks) : await parseCsvStatement(chunks);
  } catch (error) {
    if (error instanceof StatementRejected && options.fileName !== undefined) {
      throw new StatementRejected(`${options.fileName}: ${error.detail.replace(/ \(line \d+(, column \d+)?\)$/, '')}`, error.position);
    }
    throw error;
  } finally {
    // A refused file is not read to its end: closing the generator closes the source (a request
    // body, a file), which a parser stopping early would otherwise leave open.
    await bytes.return(undefined);
  }
}

const LESS_THAN = 0x3c;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The source as bytes, refusing it once it passes maxBytes; `strings` tells whether it gave text rather than bytes. */
async function* countedBytes(source: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<{ bytes: Buffer; string: boolean }> {
  let total = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    total += bytes.length;
    if (total > maxBytes) throw new StatementRejected(`statement file larger than ${maxBytes} bytes`);
    if (bytes.length > 0) yield { bytes, string: typeof chunk === 'string' };
  }
}

/** Index of the first byte that is not blank (nor part of a leading UTF-8 byte-order mark); -1 when there is none. */
function firstCharacter(head: Buffer): number {
  let index = head.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  while (index < head.length && (head[index] === 0x20 || head[index] === 0x09 || head[index] === 0x0a || head[index] === 0x0d)) index += 1;
  return index < head.length ? index : -1;
}

/**
 * Reads just enough to see the first non-blank character, and for XML the end of its declaration (the
 * first '>', within 1 KiB), and hands back the rest unread.
 */
async function headUntilFirstCharacter(
  bytes: AsyncGenerator<{ bytes: Buffer; string: boolean }>,
): Promise<{ head: Buffer; strings: boolean; rest: AsyncGenerator<{ bytes: Buffer; string: boolean }> }> {
  let head: Buffer = Buffer.alloc(0);
  let strings = false;
  for (;;) {
    const first = firstCharacter(head);
    if (first >= 0 && (head[first] !== LESS_THAN || head.includes(0x3e, first) || head.length >= 1024)) break;
    const next = await bytes.next();
    if (next.done === true) {
      if (first < 0) throw new StatementRejected('statement file is empty');
      break;
    }
    if (head.length === 0) strings = next.value.string;
    head = head.length === 0 ? next.value.bytes : Buffer.concat([head, next.value.bytes]);
  }
  return { head, strings, rest: bytes };
}

async function* prepended(head: Buffer, rest: AsyncIterable<{ bytes: Buffer }>): AsyncGenerator<Buffer> {
  yield head;
  for await (const chunk of rest) yield chunk.bytes;
}

type XmlEncoding = 'utf-8' | 'iso-8859-1' | 'iso-8859-15' | 'windows-1252' | 'us-ascii';

/** The encodings an XML statement may declare, by the names and aliases banks write (case-insensitive). */
const XML_ENCODINGS: ReadonlyMap<string, XmlEncoding> = new Map([
  ...['utf-8', 'utf8'].map((name) => [name, 'utf-8'] as const),
  ...['iso-8859-1', 'iso8859-1', 'iso_8859-1', 'iso_8859-1:1987', 'latin1', 'latin-1', 'l1', 'iso-ir-100', 'cp819', 'ibm819'].map((name) => [name, 'iso-8859-1'] as const),
  ...['iso-8859-15', 'iso8859-15', 'iso_8859-15', 'latin-9', 'latin9', 'l9'].map((name) => [name, 'iso-8859-15'] as const),
  ...['windows-1252', 'cp1252', 'x-cp1252'].map((name) => [name, 'windows-1252'] as const),
  ...['us-ascii', 'ascii', 'iso646-us', 'ansi_x3.4-1968', 'us'].map((name) => [name, 'us-ascii'] as const),
]);

const XML_DECLARATION_ENCODING = /^<\?xml\s[^>]*?\bencoding\s*=\s*(?:"([^"]*)"|'([^']*)')/;

/** The encoding the XML declaration names (only a declaration at the very start counts); UTF-8 when a byte-order mark or nothing says otherwise. */
function declaredEncoding(head: Buffer): XmlEncoding {
  if (head.subarray(0, 3).equals(UTF8_BOM)) return 'utf-8';
  // The declaration itself is ASCII in every encoding read here, so latin1 shows it as written.
  const match = XML_DECLARATION_ENCODING.exec(head.toString('latin1'));
  if (match === null) return 'utf-8';
  const name = match[1] ?? match[2] ?? '';
  const encoding = XML_ENCODINGS.get(name.toLowerCase());
  if (encoding === undefined) {
    throw new StatementRejected(`the XML declaration names encoding "${name}", which is not read here (UTF-8, ISO-8859-1, ISO-8859-15, windows-1252 or US-ASCII are)`);
  }
  return encoding;
}

/** windows-1252's characters at 0x80-0x9F, where ISO-8859-1 has control characters (its 5 unassigned bytes stay those). */
const WINDOWS_1252_HIGH: Readonly<Record<string, string>> = Object.fromEntries(
  [
    [0x80, 0x20ac],
    [0x82, 0x201a],
    [0x83, 0x0192],
    [0x84, 0x201e],
    [0x85, 0x2026],
    [0x86, 0x2020],
    [0x87, 0x2021],
    [0x88, 0x02c6],
    [0x89, 0x2030],
    [0x8a, 0x0160],
    [0x8b, 0x2039],
    [0x8c, 0x0152],
    [0x8e, 0x017d],
    [0x91, 0x2018],
    [0x92, 0x2019],
    [0x93, 0x201c],
    [0x94, 0x201d],
    [0x95, 0x2022],
    [0x96, 0x2013],
    [0x97, 0x2014],
    [0x98, 0x02dc],
    [0x99, 0x2122],
    [0x9a, 0x0161],
    [0x9b, 0x203a],
    [0x9c, 0x0153],
    [0x9e, 0x017e],
    [0x9f, 0x0178],
  ].map(([byte, code]) => [String.fromCharCode(byte!), String.fromCharCode(code!)]),
);

/** ISO-8859-15's eight differences from ISO-8859-1 (the euro sign among them). */
const ISO_8859_15: Readonly<Record<string, string>> = Object.fromEntries(
  [
    [0xa4, 0x20ac],
    [0xa6, 0x0160],
    [0xa8, 0x0161],
    [0xb4, 0x017d],
    [0xb8, 0x017e],
    [0xbc, 0x0152],
    [0xbd, 0x0153],
    [0xbe, 0x0178],
  ].map(([byte, code]) => [String.fromCharCode(byte!), String.fromCharCode(code!)]),
);

/**
 * The bytes as text, chunk by chunk. UTF-8 through a fatal TextDecoder (a character split across two
 * chunks is decoded whole; a leading byte-order mark is dropped); the single-byte encodings byte by
 * byte. (Node's TextDecoder reads 'windows-1252' as ISO-8859-1 on some versions, so neither is left to it.)
 */
async function* decoded(chunks: AsyncIterable<Buffer>, encoding: XmlEncoding): AsyncGenerator<string> {
  if (encoding !== 'utf-8') {
    for await (const chunk of chunks) {
      if (encoding === 'us-ascii') {
        const high = chunk.findIndex((byte) => byte > 0x7f);
        if (high >= 0) throw new StatementRejected(`statement file declares US-ASCII but holds the byte 0x${chunk[high]!.toString(16).toUpperCase()}`);
      }
      const text = chunk.toString('latin1');
      if (encoding === 'windows-1252') yield text.replace(/[\x80-\x9f]/g, (character) => WINDOWS_1252_HIGH[character] ?? character);
      else if (encoding === 'iso-8859-15') yield text.replace(/[\xa4\xa6\xa8\xb4\xb8\xbc\xbd\xbe]/g, (character) => ISO_8859_15[character] ?? character);
      else yield text;
    }
    return;
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of chunks) {
      const text = decoder.decode(chunk, { stream: true });
      if (text !== '') yield text;
    }
    const tail = decoder.decode();
    if (tail !== '') yield tail;
  } catch (error) {
    if (error instanceof TypeError) throw new StatementRejected('statement file is not valid UTF-8 text');
    throw error;
  }
}
