import type { Readable } from 'node:stream';
import { type ParsedStatement, StatementRejected } from './bank-statement.ts';
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
 */
export async function parseStatement(source: AsyncIterable<Buffer | string> | Readable, options: ParseStatementOptions): Promise<ParsedStatement> {
  const text = decodedText(source, options.maxBytes);
  try {
    const { head, rest } = await headUntilFirstCharacter(text);
    const chunks = prepended(head, rest);
    return head.trimStart().startsWith('<') ? await parseCamtStatement(chunks) : await parseCsvStatement(chunks);
  } catch (error) {
    if (error instanceof StatementRejected && options.fileName !== undefined) {
      throw new StatementRejected(`${options.fileName}: ${error.detail.replace(/ \(line \d+(, column \d+)?\)$/, '')}`, error.position);
    }
    throw error;
  } finally {
    // A refused file is not read to its end: closing the generator closes the source (a request
    // body, a file), which a parser stopping early would otherwise leave open.
    await text.return(undefined);
  }
}

/**
 * The file as UTF-8 text, chunk by chunk, refusing it once it passes maxBytes and refusing bytes that
 * are not UTF-8 (camt files are UTF-8 by the standard; a CSV in another encoding would silently garble
 * names and references). A character split across two chunks is decoded whole.
 */
async function* decodedText(source: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  let first = true;
  try {
    for await (const chunk of source) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      bytes += buffer.length;
      if (bytes > maxBytes) throw new StatementRejected(`statement file larger than ${maxBytes} bytes`);
      let text = decoder.decode(buffer, { stream: true });
      // TextDecoder drops a leading byte-order mark from bytes; a string chunk may still carry one.
      if (first && text.length > 0) {
        text = text.replace(/^\uFEFF/, '');
        first = false;
      }
      if (text !== '') yield text;
    }
    const tail = decoder.decode();
    if (tail !== '') yield tail;
  } catch (error) {
    if (error instanceof TypeError) throw new StatementRejected('statement file is not valid UTF-8 text');
    throw error;
  }
}

/** Reads just enough of the text to see its first non-blank character, and hands back the rest unread. */
async function headUntilFirstCharacter(text: AsyncGenerator<string>): Promise<{ head: string; rest: AsyncGenerator<string> }> {
  let head = '';
  while (head.trim() === '') {
    const next = await text.next();
    if (next.done === true) throw new StatementRejected('statement file is empty');
    head += next.value;
  }
  return { head, rest: text };
}

async function* prepended(head: string, rest: AsyncIterable<string>): AsyncGenerator<string> {
  yield head;
  yield* rest;
}
