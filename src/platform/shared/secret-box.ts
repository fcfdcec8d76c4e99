import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';

// Envelope encryption for the secrets we must be able to read back (webhook signing secrets, payroll
// providers' client secrets; client secrets and API keys are hashed instead, see src/directory/auth/secrets.ts).
// Each value gets its own random data key; the value is sealed with the data key (AES-256-GCM) and
// the data key is wrapped by the master key from configuration (AES-256-GCM). The stored text names
// the master key by id, so a key rotation only re-wraps data keys, and a database dump alone opens
// nothing. The purpose is authenticated with the value: a sealed webhook secret copied into a
// provider's row does not open there.
//
//   sealed:v1:<master key id>:<base64url iv|wrapped data key|tag>:<base64url iv|ciphertext|tag>

/** What a sealed value is for; part of its authenticated data. */
export type SecretPurpose = 'webhook-endpoint-secret' | 'payroll-provider-client-secret';

const SEALED_PREFIX = 'sealed:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretsKeyError extends Error {
  override readonly name = 'SecretsKeyError';
}

export interface MasterKey {
  /** Derived from the key itself, so configuration only ever holds keys. */
  id: string;
  key: Buffer;
}

export function masterKeyFromBase64(base64: string): MasterKey {
  const key = Buffer.from(base64.trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new SecretsKeyError(`A secrets master key must be ${KEY_BYTES} bytes, base64-encoded`);
  const id = createHash('sha256').update('salary-deductions secrets key id\0').update(key).digest('hex').slice(0, 16);
  return { id, key };
}

function encrypt(key: Buffer, plaintext: Buffer, associatedData: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: Buffer, associatedData: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new SecretsKeyError('A sealed secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SecretsKeyError('A sealed secret does not open: altered, or sealed for another purpose');
  }
}

interface SealedParts {
  keyId: string;
  wrappedKey: Buffer;
  payload: Buffer;
}

function parseSealed(stored: string): SealedParts {
  const [keyId, wrapped, payload, ...rest] = stored.slice(SEALED_PREFIX.length).split(':');
  if (!keyId || !wrapped || !payload || rest.length > 0) throw new SecretsKeyError('A sealed secret is malformed');
  return { keyId, wrappedKey: Buffer.from(wrapped, 'base64url'), payload: Buffer.from(payload, 'base64url') };
}

/** Whether a stored value is sealed; anything else was written before secrets were encrypted. */
export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export class SecretBox {
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(
    private readonly current: MasterKey,
    previous: readonly MasterKey[] = [],
  ) {
    this.keys = new Map([...previous, current].map((master) => [master.id, master.key]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, purpose: SecretPurpose): string {
    const dataKey = randomBytes(KEY_BYTES);
    const wrappedKey = encrypt(this.current.key, dataKey, this.wrappingContext(this.current.id));
    const payload = encrypt(dataKey, Buffer.from(plaintext, 'utf8'), purpose);
    return `${SEALED_PREFIX}${this.current.id}:${wrappedKey.toString('base64url')}:${payload.toString('base64url')}`;
  }

  /**
   * The plain value. A value that is not sealed is returned as it is: it was stored before secrets
   * were encrypted and `deductions migrate` (or `deductions secrets encrypt`) has not sealed it yet.
   */
  open(stored: string, purpose: SecretPurpose): string {
    if (!isSealed(stored)) return stored;
    const parts = parseSealed(stored);
    return decrypt(this.dataKey(parts), parts.payload, purpose).toString('utf8');
  }

  /** Plain text, or sealed under a master key other than the current one. */
  needsResealing(stored: string): boolean {
    return !isSealed(stored) || parseSealed(stored).keyId !== this.current.id;
  }

  /**
   * The value under the current master key: plain text is sealed; a value sealed under an earlier
   * key gets its data key re-wrapped (the ciphertext itself is kept, and checked to open).
   */
  reseal(stored: string, purpose: SecretPurpose): string {
    if (!isSealed(stored)) return this.seal(stored, purpose);
    const parts = parseSealed(stored);
    if (parts.keyId === this.current.id) return stored;
    const dataKey = this.dataKey(parts);
    decrypt(dataKey, parts.payload, purpose);
    const wrappedKey = encrypt(this.current.key, dataKey, this.wrappingContext(this.current.id));
    return `${SEALED_PREFIX}${this.current.id}:${wrappedKey.toString('base64url')}:${parts.payload.toString('base64url')}`;
  }

  private dataKey(parts: SealedParts): Buffer {
    const master = this.keys.get(parts.keyId);
    if (!master) {
      throw new SecretsKeyError(`A stored secret is sealed with master key ${parts.keyId}, which is neither SECRETS_KEY nor in SECRETS_PREVIOUS_KEYS`);
    }
    return decrypt(master, parts.wrappedKey, this.wrappingContext(parts.keyId));
  }

  private wrappingContext(keyId: string): string {
    return `${SEALED_PREFIX}${keyId}`;
  }
}

/**
 * The development and test key: generated on first use, mode 0600, and shared by every process
 * that uses the same file (created by a hard link, so two processes starting at once agree on one).
 */
function keyFromFile(file: string): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    throw new SecretsKeyError(`${file} must be readable by its owner only (chmod 600 ${file})`);
  }
  return readFileSync(file, 'utf8');
}

type SecretsConfig = Pick<Config, 'NODE_ENV' | 'SECRETS_KEY' | 'SECRETS_PREVIOUS_KEYS' | 'SECRETS_KEY_FILE'>;

const boxes = new Map<string, SecretBox>();

/**
 * The process's secret box for this configuration: SECRETS_KEY (required in production, see
 * src/platform/config/config.ts), else the key file. Earlier keys from SECRETS_PREVIOUS_KEYS still open.
 */
export function secretBoxFor(config: SecretsConfig): SecretBox {
  const cacheKey = JSON.stringify([config.SECRETS_KEY ?? null, config.SECRETS_PREVIOUS_KEYS, config.SECRETS_KEY_FILE]);
  let box = boxes.get(cacheKey);
  if (!box) {
    if (config.SECRETS_KEY === undefined && config.NODE_ENV === 'production') {
      throw new SecretsKeyError('SECRETS_KEY is required in production');
    }
    const current = masterKeyFromBase64(config.SECRETS_KEY ?? keyFromFile(config.SECRETS_KEY_FILE));
    box = new SecretBox(current, config.SECRETS_PREVIOUS_KEYS.map(masterKeyFromBase64));
    boxes.set(cacheKey, box);
  }
  return box;
}
