/**
 * RFC 9530 `Content-Digest`: the sha-256 member of the header as hex, `undefined` when the header is
 * absent, `null` when it is present but names no well-formed sha-256 digest. A streamed body cannot
 * be hashed before it is processed, so a caller that wants an Idempotency-Key on one states the
 * body's digest up front: the key's fingerprint takes the digest, and the body is checked against it.
 */
export function contentDigestSha256(header: string | string[] | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  for (const member of value.split(',')) {
    const match = /^\s*sha-256\s*=\s*:([A-Za-z0-9+/]+={0,2}):\s*$/i.exec(member);
    if (!match) continue;
    const bytes = Buffer.from(match[1]!, 'base64');
    // Buffer.from ignores what is not base64; only an exact round trip is a digest.
    if (bytes.length !== 32 || bytes.toString('base64') !== match[1]) return null;
    return bytes.toString('hex');
  }
  return null;
}
