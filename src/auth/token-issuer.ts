import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  type JWTVerifyGetKey,
} from 'jose';

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

/** Signs our access tokens and verifies presented ones (ours, or an external issuer's). */
export class TokenIssuer {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly jwks: JSONWebKeySet,
    private readonly kid: string,
    private readonly options: TokenIssuerOptions,
    private readonly verificationKeys: JWTVerifyGetKey,
  ) {}

  static async fromPrivateKey(privateKey: CryptoKey, options: TokenIssuerOptions): Promise<TokenIssuer> {
    const publicJwk = await exportJWK(privateKey);
    delete publicJwk.d;
    const kid = await calculateJwkThumbprint(publicJwk);
    const jwks: JSONWebKeySet = { keys: [{ ...publicJwk, kid, alg: ALGORITHM, use: 'sig' }] };
    const verificationKeys = options.externalJwksUrl
      ? createRemoteJWKSet(new URL(options.externalJwksUrl))
      : createLocalJWKSet(jwks);
    return new TokenIssuer(privateKey, jwks, kid, options, verificationKeys);
  }

  static async generate(options: TokenIssuerOptions): Promise<TokenIssuer> {
    const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    return TokenIssuer.fromPrivateKey(privateKey, options);
  }

  /** Loads the signing key from a PEM file, creating one (mode 0600) on first start. */
  static async fromKeyFile(file: string, options: TokenIssuerOptions): Promise<TokenIssuer> {
    if (!existsSync(file)) {
      const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, await exportPKCS8(privateKey), { mode: 0o600, flag: 'wx' });
    }
    const privateKey = await importPKCS8(readFileSync(file, 'utf8'), ALGORITHM, { extractable: true });
    return TokenIssuer.fromPrivateKey(privateKey, options);
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
      .setProtectedHeader({ alg: ALGORITHM, kid: this.kid, typ: 'at+jwt' })
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .setSubject(claims.clientId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.options.ttlSeconds)
      .setJti(crypto.randomUUID())
      .sign(this.privateKey);
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
