import type { z } from 'zod';
import { InvalidError, type FieldError } from './domain-errors.ts';
import type { ProblemCode } from './problem-codes.ts';

function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Input a use case was given and refuses by its schema (the CLI's options, which no route validated
 * first): each issue is a field error with its JSON pointer, and the detail names every field in
 * one line, which is what the CLI prints.
 */
export function invalidInput(error: z.ZodError, code: ProblemCode = 'validation-failed'): InvalidError {
  const errors: FieldError[] = error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ pointer: pointerOf([...issue.path, key]), detail: 'is not a known field' }))
      : [{ pointer: pointerOf(issue.path), detail: issue.message }],
  );
  const detail = errors.map((e) => `${e.pointer.slice(1).replaceAll('/', '.') || 'input'} ${e.detail}`).join('; ');
  return new InvalidError(code, detail, { errors });
}
