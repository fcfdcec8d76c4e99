/** Any origin: the path is resolved against it only to apply a browser's rules, and the origin is never sent. */
const RESOLVING_BASE = 'http://console.invalid';

/**
 * Where sign-in sends a person: back to the console page they asked for, and never anywhere else
 * (no `//host`, no scheme, no backslash that a browser would read as a slash, no other path). The
 * path is resolved as a browser resolves it, dot segments (`../..`, `%2e%2e`) included, and what stays
 * within /console is what is sent: `/console/../../evil` is `/evil` to a browser, so it is refused.
 */
export function safeNextPath(next: string | undefined): string {
  if (!next || !/^\/console(?:[/?#]|$)/.test(next) || /[\\\s]|\/\//.test(next)) return '/console';
  let resolved: URL;
  try {
    resolved = new URL(next, RESOLVING_BASE);
  } catch {
    return '/console';
  }
  if (resolved.origin !== RESOLVING_BASE || !/^\/console(?:\/|$)/.test(resolved.pathname)) return '/console';
  return `${resolved.pathname}${resolved.search}${resolved.hash}`;
}
