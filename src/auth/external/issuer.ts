// One external issuer at run time: its metadata, its keys, and the checks of its tokens.
// Guarantees, for a JWT access token (RFC 9068): its header alg is in `algorithms` (never none
// nor an HMAC; jku, x5u, jwk and x5c headers are never read), its typ is at+jwt (or, unless
// strict_typ, JWT or absent); it is signed by one of the issuer's keys — a key id the held
// set lacks refetches the set once (key-set.ts) and a still unknown one is token_kid, or
// IDP_UNAVAILABLE when the issuer could not be asked; its iss is the issuer, its aud contains
// an `audience`, it carries exp and exp/nbf/iat hold within clock_skew; its subject claim is
// a non-empty string. For an opaque token (RFC 7662): the introspection answer is asked with
// this server's client credentials, is active, names this issuer when it names one, is not a
// refresh token, carries an aud containing an `audience`, and holds exp/nbf within
// clock_skew. Each refusal names its check (rejection.ts); a failing introspection endpoint
// is not asked again for INTROSPECTION_BACKOFF_MS (every token meanwhile gets
// IDP_UNAVAILABLE at once). Metadata (discovery.ts) is fetched once and kept; a failed
// discovery is retried at most once per jwks_refetch_interval. Tokens are never logged.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type ProtectedHeaderParameters } from 'jose';
import type { Logger } from 'pino';
import type { ExternalIssuer } from '../../core/manifest-types.gen.js';
import type { Principal } from '../../core/types.js';
import { SvcError } from '../../errors.js';
import { discover, type IssuerMetadata } from './discovery.js';
import { fetchJson } from './fetch-json.js';
import { KeySet } from './key-set.js';
import { principalOf } from './claims-map.js';
import { IssuerFailure, rejected, unavailable, type TokenCheck } from './rejection.js';

const MAX_INTROSPECTION = 64 * 1024;
/** How long a failed introspection endpoint is not asked again. */
export const INTROSPECTION_BACKOFF_MS = 1000;

/** An introspection's outcome: the principal and how long the answer may be reused, the token unknown there, or a refusal. */
export type Introspected = { principal: Principal; until: number } | 'inactive' | SvcError;

export interface IssuerOptions {
  cfg: ExternalIssuer;
  /** profile.scopes names. */
  profile: readonly string[];
  /** Folder client_secret_file resolves against. */
  baseDir: string;
  log: Logger;
  /** The issuer's keys were replaced or dropped: cached tokens it verified must be checked again. */
  onKeysReplaced(): void;
}

export class Issuer {
  readonly cfg: ExternalIssuer;
  readonly #profile: readonly string[];
  readonly #audiences: string[];
  readonly #log: Logger;
  readonly #keys: KeySet;
  readonly #secret: string | undefined;
  #meta: IssuerMetadata | undefined;
  #metaFlight: Promise<IssuerMetadata> | undefined;
  #metaAttempt = -Infinity;
  #metaFailure: IssuerFailure | undefined;
  #introspectionDownUntil = 0;

  constructor(o: IssuerOptions) {
    this.cfg = o.cfg;
    this.#profile = o.profile;
    this.#audiences = [o.cfg.audience].flat();
    this.#log = o.log;
    const intro = o.cfg.introspection;
    this.#secret = intro?.client_secret ?? (intro?.client_secret_file ? readSecret(resolve(o.baseDir, intro.client_secret_file)) : undefined);
    this.#keys = new KeySet({
      issuer: o.cfg.issuer,
      uri: async () => o.cfg.jwks_uri ?? (await this.metadata()).jwks_uri ?? Promise.reject(new IssuerFailure('jwks_unavailable', `${o.cfg.issuer} publishes no jwks_uri`)),
      maxAge: o.cfg.jwks_max_age ?? 600,
      refetchInterval: o.cfg.jwks_refetch_interval ?? 10,
      log: o.log,
      onReplaced: o.onKeysReplaced,
    });
  }

  get introspects(): boolean {
    return this.cfg.introspection !== undefined;
  }

  /** Start-up: fetch what the issuer's tokens will need (never throws; failures are logged and retried on demand). */
  async warm(): Promise<void> {
    if (this.cfg.jwks_uri || !this.introspects) {
      await this.#keys.refresh();
      return;
    }
    const meta = await this.metadata().catch(() => undefined);
    if (meta?.jwks_uri) await this.#keys.refresh();
  }

  /** The discovery document's endpoints (fetched once; a failure is retried at most once per jwks_refetch_interval). */
  metadata(): Promise<IssuerMetadata> {
    if (this.#meta) return Promise.resolve(this.#meta);
    if (this.#metaFlight) return this.#metaFlight;
    const now = Date.now();
    if (this.#metaFailure && now - this.#metaAttempt < (this.cfg.jwks_refetch_interval ?? 10) * 1000) return Promise.reject(this.#metaFailure);
    this.#metaAttempt = now;
    this.#metaFlight = discover(this.cfg.issuer).then((m) => {
      this.#meta = m;
      this.#metaFailure = undefined;
      return m;
    }, (e: unknown) => {
      this.#metaFailure = new IssuerFailure('discovery_unavailable', (e as Error).message);
      this.#log.warn({ event: 'external.discovery_failed', issuer: this.cfg.issuer, err: this.#metaFailure.message }, `cannot read the metadata of ${this.cfg.issuer}: ${this.#metaFailure.message}`);
      throw this.#metaFailure;
    }).finally(() => {
      this.#metaFlight = undefined;
    });
    return this.#metaFlight;
  }

  /**
   * `svc validate --network`: what would keep its tokens from being checked — its metadata, its
   * keys (reachable, a JWK set, no private key, some key usable with `algorithms`), its
   * introspection endpoint known. Nothing is sent to the introspection endpoint.
   */
  async probe(): Promise<string[]> {
    let local: boolean;
    try {
      local = await this.verifiesLocally();
      if (this.introspects && !this.cfg.introspection!.endpoint && !(await this.metadata()).introspection_endpoint) {
        return [`${this.cfg.issuer} publishes no introspection_endpoint: set introspection.endpoint`];
      }
    } catch (e) {
      return [(e as Error).message];
    }
    if (!local) return [];
    if ((await this.#keys.refresh()) === 'failed') return [this.#keys.failure!.message];
    const algorithms: readonly string[] = this.cfg.algorithms ?? ['RS256', 'ES256'];
    const declared = this.#keys.algs;
    if (!declared.length) return [`${this.cfg.issuer} publishes no signing key`];
    if (declared.every((a) => a !== undefined && !algorithms.includes(a))) {
      return [`the keys of ${this.cfg.issuer} are for ${[...new Set(declared)].join(', ')}, none of which is in algorithms (${algorithms.join(', ')})`];
    }
    return [];
  }

  /** Whether its JWTs are checked with its keys (else, when it introspects, introspected). */
  async verifiesLocally(): Promise<boolean> {
    if (this.cfg.jwks_uri || !this.introspects) return true;
    return !!(await this.metadata()).jwks_uri;
  }

  /** The principal of a JWT access token whose unverified `iss` names this issuer, or why not. */
  async verifyJwt(token: string, header: ProtectedHeaderParameters): Promise<Principal | SvcError> {
    const cfg = this.cfg;
    const algorithms = cfg.algorithms ?? ['RS256', 'ES256'];
    if (typeof header.alg !== 'string' || !(algorithms as string[]).includes(header.alg)) {
      return rejected('token_alg', `the token's algorithm ${String(header.alg)} is not one ${cfg.issuer} is trusted with`);
    }
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
    if (cfg.strict_typ ? typ !== 'at+jwt' : typ !== undefined && typ !== 'at+jwt' && typ !== 'jwt') {
      return rejected('token_typ', `the token's typ ${String(header.typ)} is not an access token's (at+jwt)`);
    }
    let keys = this.#keys.held();
    if (!keys) {
      await this.#keys.refresh();
      keys = this.#keys.held();
      if (!keys) return this.#noKeys();
    }
    let payload: JWTPayload;
    try {
      payload = await this.#verify(token, keys);
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSNoMatchingKey)) return joseRejection(e);
      // A key id the held set lacks: the issuer may have rotated its keys. Fetch the set once.
      const outcome = await this.#keys.refresh();
      const fresh = this.#keys.held();
      if (fresh && fresh !== keys) {
        try {
          payload = await this.#verify(token, fresh);
        } catch (e2) {
          return joseRejection(e2);
        }
      } else if (outcome === 'failed' || (outcome === 'skipped' && this.#keys.failure)) {
        return this.#noKeys();
      } else {
        return rejected('token_kid', `no signing key of ${cfg.issuer} matches the token's key id, also after fetching its keys again`);
      }
    }
    const skew = cfg.clock_skew ?? 30;
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + skew) return rejected('token_iat', 'the token is issued in the future');
    const p = principalOf(cfg, payload, this.#profile, credentialIdOf(token));
    return p ?? rejected('token_sub', `the token has no subject (${cfg.subject_claim ?? 'sub'})`);
  }

  /** Ask the introspection endpoint about an opaque token. */
  async introspect(token: string): Promise<Introspected> {
    const cfg = this.cfg;
    const intro = cfg.introspection!;
    if (Date.now() < this.#introspectionDownUntil) return unavailable('introspection_unavailable', `the introspection endpoint of ${cfg.issuer} failed moments ago`);
    let endpoint = intro.endpoint;
    if (!endpoint) {
      try {
        endpoint = (await this.metadata()).introspection_endpoint;
      } catch (e) {
        return unavailable('discovery_unavailable', (e as Error).message);
      }
      if (!endpoint) return unavailable('discovery_unavailable', `${cfg.issuer} publishes no introspection_endpoint`);
    }
    const basic = (intro.auth_method ?? 'client_secret_basic') === 'client_secret_basic';
    const form: Record<string, string> = { token, token_type_hint: 'access_token', ...(!basic && { client_id: intro.client_id, client_secret: this.#secret ?? '' }) };
    // RFC 6749 §2.3.1: the id and secret are form-encoded before Basic encodes them.
    const headers = basic ? { authorization: `Basic ${Buffer.from(`${formEncode(intro.client_id)}:${formEncode(this.#secret ?? '')}`).toString('base64')}` } : undefined;
    let answer: Record<string, unknown>;
    try {
      answer = (await fetchJson(endpoint, { method: 'POST', form, headers, maxBytes: MAX_INTROSPECTION })).json;
    } catch (e) {
      this.#introspectionDownUntil = Date.now() + INTROSPECTION_BACKOFF_MS;
      const message = `the introspection endpoint of ${cfg.issuer} failed: ${(e as Error).message}`;
      this.#log.warn({ event: 'external.introspection_failed', issuer: cfg.issuer, err: (e as Error).message }, message);
      return unavailable('introspection_unavailable', message);
    }
    if (answer.active !== true) return 'inactive';
    const refused = this.#answerProblem(answer);
    if (refused) return refused;
    const p = principalOf(cfg, answer, this.#profile, credentialIdOf(token));
    if (!p) return rejected('token_sub', `the introspection answer has no subject (${cfg.subject_claim ?? 'sub'})`);
    const ttl = (intro.cache_ttl ?? 60) * 1000;
    const until = Math.min(Date.now() + ttl, typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity);
    return { principal: p, until };
  }

  /** How long an inactive answer may be reused. */
  get inactiveTtlMs(): number {
    return (this.cfg.introspection?.cache_ttl ?? 60) * 1000;
  }

  #answerProblem(a: Record<string, unknown>): SvcError | undefined {
    const cfg = this.cfg;
    if (a.iss !== undefined && a.iss !== cfg.issuer) return rejected('introspection_iss', `the introspection answer names issuer ${String(a.iss)}, not ${cfg.issuer}`);
    if (a.token_type !== undefined && !(typeof a.token_type === 'string' && /^(bearer|dpop)$/i.test(a.token_type))) {
      return rejected('token_typ', `the introspected token is a ${String(a.token_type)}, not an access token`);
    }
    const aud = [a.aud].flat().filter((x): x is string => typeof x === 'string');
    if (!aud.some((x) => this.#audiences.includes(x))) return rejected('token_aud', 'the introspected token is not for this server (aud)');
    const now = Date.now() / 1000;
    const skew = cfg.clock_skew ?? 30;
    if (typeof a.exp === 'number' && a.exp <= now - skew) return rejected('token_exp', 'the introspected token has expired');
    if (typeof a.nbf === 'number' && a.nbf > now + skew) return rejected('token_nbf', 'the introspected token is not valid yet');
    return undefined;
  }

  #noKeys(): SvcError {
    const f = this.#keys.failure;
    return unavailable(f?.reason ?? 'jwks_unavailable', `no signing key of ${this.cfg.issuer} is at hand to check the token${f ? `: ${f.message}` : ''}`);
  }

  /** jwtVerify with every claim check; a token without kid that several keys could have signed is tried with each. */
  async #verify(token: string, keys: JWTVerifyGetKey): Promise<JWTPayload> {
    const cfg = this.cfg;
    const options = { issuer: cfg.issuer, audience: this.#audiences, algorithms: cfg.algorithms ?? ['RS256', 'ES256'], clockTolerance: cfg.clock_skew ?? 30, requiredClaims: ['exp'] };
    try {
      return (await jwtVerify(token, keys, options)).payload;
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSMultipleMatchingKeys)) throw e;
      let last: unknown = e;
      for await (const key of e as unknown as AsyncIterable<CryptoKey>) {
        try {
          return (await jwtVerify(token, key, options)).payload;
        } catch (err) {
          last = err;
        }
      }
      throw last instanceof joseErrors.JWKSMultipleMatchingKeys ? new joseErrors.JWSSignatureVerificationFailed() : last;
    }
  }
}

/** The check a jose error stands for. */
function joseRejection(e: unknown): SvcError {
  const check = ((): TokenCheck => {
    if (e instanceof joseErrors.JWTExpired) return e.claim === 'iat' ? 'token_iat' : 'token_exp';
    if (e instanceof joseErrors.JWTClaimValidationFailed) {
      const byClaim: Record<string, TokenCheck> = { iss: 'token_iss', aud: 'token_aud', nbf: 'token_nbf', iat: 'token_iat', exp: 'token_exp', typ: 'token_typ' };
      return byClaim[e.claim] ?? 'token_claims';
    }
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'token_signature';
    if (e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) return 'token_alg';
    if (e instanceof joseErrors.JWKSNoMatchingKey) return 'token_kid';
    return 'token_malformed';
  })();
  const what: Record<string, string> = {
    token_exp: 'the token has expired (or carries no exp)', token_nbf: 'the token is not valid yet', token_iat: 'the token is issued in the future',
    token_iss: 'the token is from another issuer', token_aud: 'the token is not for this server (aud)', token_typ: 'the token is not an access token (typ)',
    token_signature: 'the token\'s signature does not verify', token_alg: 'the token\'s algorithm is not accepted', token_kid: 'no signing key matches the token',
  };
  return rejected(check, what[check] ?? 'the token is malformed or its claims are unusable');
}

/** The credential's id in logs and the audit log (hashed again there): a digest of the token, never the token. */
export function credentialIdOf(token: string): string {
  return `ext:${createHash('sha256').update(token).digest('base64url').slice(0, 32)}`;
}

function readSecret(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read secret file ${path}: ${(e as NodeJS.ErrnoException).code}`);
  }
}

function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}
