import { parse } from 'csv-parse/sync';

export type InstructionFileRecord = Record<string, string>;

/**
 * An instruction file read the way docs/integrators.md (Instruction files) tells a program to: one CSV table with column names,
 * split by record_type, with the trailer's count checked against the items.
 */
export function readInstructionFile(content: Buffer | string): { header: InstructionFileRecord; items: InstructionFileRecord[]; trailer: InstructionFileRecord } {
  const records = parse(content, { columns: true }) as InstructionFileRecord[];
  const header = records[0];
  const trailer = records.at(-1);
  if (header?.record_type !== 'header' || trailer?.record_type !== 'trailer' || records.length < 2) {
    throw new Error('an instruction file starts with a header record and ends with a trailer record');
  }
  const items = records.slice(1, -1);
  if (items.some((record) => record.record_type !== 'item')) throw new Error('only item records sit between the header and the trailer');
  if (Number(trailer.line_count) !== items.length) throw new Error(`the trailer counts ${trailer.line_count} items, the file has ${items.length}`);
  return { header, items, trailer };
}
