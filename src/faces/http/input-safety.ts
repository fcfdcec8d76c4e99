import type { FieldError } from '../../platform/shared/domain-errors.ts';
import { jsonPointer } from '../../platform/shared/json-pointer.ts';

/** Deeper than any resource of this API; metadata is free-form JSON, but not a tower of arrays. */
export const MAX_INPUT_DEPTH = 32;
/** A client with one broken field usually has it everywhere; the first few say enough. */
const MAX_REPORTED = 20;

/**
 * What no schema of this API can accept because PostgreSQL cannot store it, whatever the field:
 * - U+0000 (NUL): text columns refuse it (22021) and so does jsonb (22P05);
 * - unpaired UTF-16 surrogates ("\ud800"): jsonb refuses their escapes (22P02), and text would
 *   silently store U+FFFD instead of what was sent;
 * - nesting deeper than MAX_INPUT_DEPTH: recursive validators overflow the stack long before
 *   PostgreSQL's jsonb parser gives up (54001).
 * Object keys count as text too (metadata keys end up in jsonb). Checked before the schemas run,
 * iteratively, so the check itself cannot overflow.
 */
export function unstorableInputErrors(value: unknown, pointerPrefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const { value: node, path } = stack.pop()!;
    if (typeof node === 'string') {
      const problem = textProblem(node);
      if (problem) errors.push({ pointer: jsonPointer(path, pointerPrefix), detail: `must not contain ${problem}` });
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (path.length >= MAX_INPUT_DEPTH) {
      errors.push({ pointer: jsonPointer(path, pointerPrefix), detail: `is nested deeper than ${MAX_INPUT_DEPTH} levels` });
      continue;
    }
    const entries = Array.isArray(node) ? node.map((item, index) => [index, item] as const) : Object.entries(node);
    // Reversed onto the stack, so errors come out in document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childPath = [...path, key];
      const keyProblem = typeof key === 'string' ? textProblem(key) : undefined;
      if (keyProblem) errors.push({ pointer: jsonPointer(childPath, pointerPrefix), detail: `has a name containing ${keyProblem}` });
      else stack.push({ value: child, path: childPath });
    }
  }
  return errors;
}

/** With the u flag a surrogate pair is one code point, so only an unpaired half is in category Cs. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'the NUL character (U+0000)';
  if (UNPAIRED_SURROGATE.test(text)) return 'an unpaired UTF-16 surrogate (not well-formed Unicode)';
  return undefined;
}
