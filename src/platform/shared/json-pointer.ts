/** RFC 6901 JSON pointer for a path into a document, e.g. a zod issue's path. */
export function jsonPointer(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  return prefix + path.map((part) => '/' + String(part).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}
