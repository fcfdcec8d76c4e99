import { readFile } from 'node:fs/promises';
import { validateXML } from 'xmllint-wasm';

// Validates XML against the official ISO 20022 schemas vendored in test/fixtures/iso20022/ (see its
// PROVENANCE.md), with libxml2's own validator (xmllint compiled to WebAssembly).

export type Iso20022Message = 'pain.001.001.09' | 'camt.053.001.02' | 'camt.053.001.04' | 'camt.053.001.08' | 'camt.054.001.02' | 'camt.054.001.04' | 'camt.054.001.08';

const schemas = new Map<Iso20022Message, Promise<string>>();

function schemaOf(message: Iso20022Message): Promise<string> {
  let schema = schemas.get(message);
  if (!schema) {
    schema = readFile(new URL(`../fixtures/iso20022/${message}.xsd`, import.meta.url), 'utf8');
    schemas.set(message, schema);
  }
  return schema;
}

/** The schema's error messages for the document (none when it is valid). */
export async function xsdErrors(xml: string, message: Iso20022Message): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'document.xml', contents: xml }],
    schema: [{ fileName: `${message}.xsd`, contents: await schemaOf(message) }],
    initialMemoryPages: 256,
    maxMemoryPages: 16 * 1024,
  });
  return result.errors.map((error) => error.rawMessage);
}

/** The message an ISO 20022 document declares in its root namespace (camt.053.001.08, pain.001.001.09...). */
export function declaredMessage(xml: string): Iso20022Message {
  const match = /xmlns(?::\w+)?="urn:iso:std:iso:20022:tech:xsd:((?:pain|camt)\.\d{3}\.\d{3}\.\d{2})"/.exec(xml);
  if (!match) throw new Error('no ISO 20022 namespace in the document');
  return match[1] as Iso20022Message;
}
