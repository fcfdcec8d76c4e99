/**
 * Where sign-in sends a person: back to the console page they asked for, and never anywhere else
 * (no `//host`, no scheme, no backslash that a browser would read as a slash, no other path).
 */
export function safeNextPath(next: string | undefined): string {
  if (!next || !/^\/console(?:[/?#]|$)/.test(next) || /[\\\s]|\/\//.test(next)) return '/console';
  return next;
}
