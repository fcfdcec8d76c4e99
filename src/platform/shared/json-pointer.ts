/** RFC 6901 JSON pointer for a path into a document, e.g. a zod issue's path. */
export function jsonPointer(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  return prefix + path.map((part) => '/' + String(part).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

/** Where in an imported file an error is: /lines/12/amount_deducted, or /lines/12 for the whole line. */
export function lineErrorAsFieldError(error: { line: number; column: string | null; reason: string }): { pointer: string; detail: string } {
  return { pointer: jsonPointer(error.column === null ? ['lines', error.line] : ['lines', error.line, error.column]), detail: error.reason };
}
