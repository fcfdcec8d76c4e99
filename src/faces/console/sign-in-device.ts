import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// A device token, after OWASP's "Slow down online guessing attacks with device cookies": a browser
// an account signed in on receives a token naming that account, and with it is not held back by the
// failures others make against the account from elsewhere. Only someone who knew the password could
// have one, so guessing from everywhere else cannot keep the owner out.

const ID_BYTES = 16;
const TAG_BYTES = 32;

function tagOf(key: Buffer, email: string, id: string): Buffer {
  return createHmac('sha256', key).update(`console device\0${email}\0${id}`, 'utf8').digest();
}

/** `<id>.<tag>`: a random id, and an HMAC binding it to the email under the newest key. */
export function deviceTokenFor(keys: readonly Buffer[], email: string, id = randomBytes(ID_BYTES).toString('base64url')): string {
  return `${id}.${tagOf(keys[0]!, email, id).toString('base64url')}`;
}

/**
 * The id of the device a token names, when it was issued for this very email under one of the keys
 * (the newest, or one before a rotation); null for anything else, a token of another account included.
 */
export function trustedDeviceOf(keys: readonly Buffer[], token: string | undefined, email: string): string | null {
  const match = token === undefined ? null : /^([\w-]{22})\.([\w-]{43})$/.exec(token);
  if (!match) return null;
  const [, id, tag] = match as unknown as [string, string, string];
  const given = Buffer.from(tag, 'base64url');
  // Only the canonical spelling: the last character's spare bits would let another string decode to the same tag.
  if (given.length !== TAG_BYTES || given.toString('base64url') !== tag) return null;
  return keys.some((key) => timingSafeEqual(tagOf(key, email, id), given)) ? id : null;
}
