import { hkdfSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  SignJWT,
  createLocalJWKSet,
  createRemoteJWKSet,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  jwtVerify,
  calculateJwkThumbprint,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { ConfigError, type Config } from '../../platform/config/config.ts';

const ALGORITHM = 'ES256';

export interface AccessTokenClaims {
  clientId: string;
  scopes: string[];
  /** The client's secret version at issue (claim `sv`): rotating the secret ends older tokens. */
  secretVersion?: number | undefined;
}

export interface VerifiedClaims extends AccessTokenClaims {
  /** The token's `exp` in epoch seconds (tokens of an external issuer may have none). */
  expiresAt: number | undefined;
}

export interface TokenIssuerOptions {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  /** Verify against an external OAuth server's keys instead of our own. */
  externalJwksUrl?: string | undefined;
}

/** One signing key pair as the JWKS and the derived secrets see it. */
interface SigningKey {
  privateKey: CryptoKey;
  kid: string;
  publicJwk: JWK;
  /** PKCS#8 PEM: the input for secrets derived from this key (see derivedSecrets). */
  pkcs8: string;
}

async function signingKey(privateKey: CryptoKey): Promise<SigningKey> {
  const publicJwk = await exportJWK(privateKey);
  delete publicJwk.d;
  const kid = await calculateJwkThumbprint(publicJwk);
  return { privateKey, kid, publicJwk: { ...publicJwk, kid, alg: ALGORITHM, use: 'sig' }, pkcs8: await exportPKCS8(privateKey) };
}

/**
 * A private key file anyone but its owner can read is a leaked key, and one they can write is a
 * key they can replace: refuse to start rather than sign with it. (Windows has no such modes.)
 */
export function assertKeyFileIsPrivate(file: string, variable: string): void {
  if (process.platform === 'win32') return;
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(`${variable} ${file} is open to group or others (mode ${mode.toString(8).padStart(4, '0')}); restrict it with: chmod 600 ${file}`);
  }
}

function readKeyFile(file: string, variable: string): Promise<CryptoKey> {
  if (!existsSync(file)) throw new ConfigError(`${variable} ${file} does not exist`);
  assertKeyFileIsPrivate(file, variable);
  return importPKCS8(readFileSync(file, 'utf8'), ALGORITHM, { extractable: true });
}

/**
 * Signs our access tokens and verifies presented ones (ours, or an external issuer's). During a
 * key rotation it holds the previous key too: tokens that key signed keep verifying until they
 * expire, and the JWKS lists both keys, each under its own `kid`; new tokens are signed with the
 * current key only.
 */
export class TokenIssuer {
  private constructor(
    private readonly current: SigningKey,
    private readonly previous: SigningKey | undefined,
    readonly jwks: JSONWebKeySet,
    private readonly options: TokenIssuerOptions,
    private readonly verificationKeys: JWTVerifyGetKey,
  ) {}

  static async fromPrivateKey(privateKey: CryptoKey, options: TokenIssuerOptions, previousKey?: CryptoKey): Promise<TokenIssuer> {
    const current = await signingKey(privateKey);
    const previous = previousKey ? await signingKey(previousKey) : undefined;
    if (previous?.kid === current.kid) {
      throw new ConfigError('AUTH_PREVIOUS_SIGNING_KEY_FILE holds the same key as AUTH_SIGNING_KEY_FILE; put the new key in AUTH_SIGNING_KEY_FILE');
    }
    const jwks: JSONWebKeySet = { keys: [current.publicJwk, ...(previous ? [previous.publicJwk] : [])] };
    const verificationKeys = options.externalJwksUrl ? createRemoteJWKSet(new URL(options.externalJwksUrl)) : createLocalJWKSet(jwks);
    return new TokenIssuer(current, previous, jwks, options, verificationKeys);
  }

  static async generate(options: TokenIssuerOptions): Promise<TokenIssuer> {
    const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    return TokenIssuer.fromPrivateKey(privateKey, options);
  }

  /**
   * Loads the signing key from a PEM file, creating one (mode 0600) on first start, and the
   * previous key when a rotation is under way. Either file open to group or others is refused.
   */
  static async fromKeyFile(file: string, options: TokenIssuerOptions, previousFile?: string): Promise<TokenIssuer> {
    if (!existsSync(file)) {
      const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, await exportPKCS8(privateKey), { mode: 0o600, flag: 'wx' });
    }
    const privateKey = await readKeyFile(file, 'AUTH_SIGNING_KEY_FILE');
    const previousKey = previousFile ? await readKeyFile(previousFile, 'AUTH_PREVIOUS_SIGNING_KEY_FILE') : undefined;
    return TokenIssuer.fromPrivateKey(privateKey, options, previousKey);
  }

  /** The `kid` new tokens are signed under. */
  get kid(): string {
    return this.current.kid;
  }

  /**
   * 32-byte secrets for `purpose` derived (HKDF-SHA256) from the signing keys, current first: every
   * API process that shares the key file shares them, with nothing more to configure, and a
   * rotation rotates them too while the previous key's secret still verifies.
   */
  derivedSecrets(purpose: string): Buffer[] {
    return [this.current, ...(this.previous ? [this.previous] : [])].map((key) => Buffer.from(hkdfSync('sha256', key.pkcs8, 'salary-deductions', purpose, 32)));
  }

  get ttlSeconds(): number {
    return this.options.ttlSeconds;
  }

  async issue(claims: AccessTokenClaims, now = new Date()): Promise<string> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    return new SignJWT({
      scope: claims.scopes.join(' '),
      client_id: claims.clientId,
      ...(claims.secretVersion === undefined ? {} : { sv: claims.secretVersion }),
    })
      .setProtectedHeader({ alg: ALGORITHM, kid: this.current.kid, typ: 'at+jwt' })
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .setSubject(claims.clientId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.options.ttlSeconds)
      .setJti(crypto.randomUUID())
      .sign(this.current.privateKey);
  }

  /** Throws (any jose error) when the token is not ours, expired, or for another audience. */
  async verify(token: string): Promise<VerifiedClaims> {
    const { payload } = await jwtVerify(token, this.verificationKeys, {
      issuer: this.options.issuer,
      audience: this.options.audience,
      algorithms: this.options.externalJwksUrl ? undefined : [ALGORITHM],
    });
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : payload.sub;
    if (!clientId) throw new Error('token has no subject');
    const scope = typeof payload.scope === 'string' ? payload.scope : '';
    const secretVersion = Number.isSafeInteger(payload.sv) ? (payload.sv as number) : undefined;
    return { clientId, scopes: scope.split(' ').filter(Boolean), expiresAt: payload.exp, secretVersion };
  }
}

/** The issuer the configuration describes: its signing key file (and the previous one, while keys rotate). */
export function loadTokenIssuer(config: Config): Promise<TokenIssuer> {
  return TokenIssuer.fromKeyFile(
    config.AUTH_SIGNING_KEY_FILE,
    {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
      externalJwksUrl: config.AUTH_JWKS_URL,
    },
    config.AUTH_PREVIOUS_SIGNING_KEY_FILE,
  );
}
