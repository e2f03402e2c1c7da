// Every external issuer of a manifest, side by side: which one a token goes to, and the
// tokens already verified. Guarantees: a JWT goes only to the issuer its `iss` names — a JWT
// whose iss is not listed is refused (issuer_not_accepted) and never sent to anyone's
// introspection endpoint; an opaque token is introspected by the issuers with
// `introspection`, in manifest order, until one says it is active (the first active answer
// decides, its checks included); when none does it is refused (introspection_inactive), or
// 503 IDP_UNAVAILABLE when one of them could not be asked. A verified token is remembered
// (at most MAX_CACHED, the oldest dropped first) until its exp — a JWT no longer than the key
// set it was checked against stays fresh (key-set.ts freshUntil: once the set is stale the
// token is checked again, after the set is fetched again), an introspected one no longer than
// introspection.cache_ttl — and an inactive answer for cache_ttl (by the token's digest:
// made-up tokens cannot make that cache hold their text); tokens an issuer's
// replaced or dropped keys verified are forgotten at once, and a verification that overlapped
// such a change is not remembered. isActive() checks a principal's token again once its cached
// verification has ended — a JWT against the issuer's keys, an introspected token at the
// introspection endpoint — so an open /ws socket sees a withdrawn key, or a revocation, within
// the same bounds.
// The section is checked as `svc validate` checks it (issuer-checks.ts) before anything runs.
// Every principal it vouches for has its token recorded beside it (outbound/caller-credentials.ts), the
// subject_token a backend's token exchange (outbound/) needs.

import { decodeJwt, decodeProtectedHeader, type ProtectedHeaderParameters } from 'jose';
import type { Logger } from 'pino';
import type { ResolvedExternalIssuer } from '../../core/config.js';
import type { Principal } from '../../core/types.js';
import { SvcError } from '../../errors.js';
import { externalIssuerProblems } from './issuer-checks.js';
import { Issuer } from './issuer.js';
import { credentialIdOf } from './claims-map.js';
import { rejected, unavailable } from './rejection.js';
import { keepCallerCredential } from '../../outbound/caller-credentials.js';
import type { EndpointResources } from '../resource-metadata.js';

const MAX_CACHED = 10_000;
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface ExternalIssuersOptions {
  issuers: readonly ResolvedExternalIssuer[];
  /** profile.scopes names. */
  profile: readonly string[];
  /** Folder client_secret_file paths resolve against. */
  baseDir: string;
  log: Logger;
  /** The built-in server's issuer, when it runs (an external issuer may not be it). */
  builtinIssuer?: string;
  /** The named endpoints: a token whose audience is one's resource (origin/mcp/NAME) is for that endpoint only. */
  endpoints?: EndpointResources;
}

/** What a token is: a JWT naming an issuer, something JWT-shaped that is not a usable JWT, or opaque. */
type Shape = { kind: 'jwt'; header: ProtectedHeaderParameters; iss: string } | { kind: 'malformed' } | { kind: 'opaque' };

export class ExternalIssuers {
  /** Every issuer, in manifest order. */
  readonly issuers: readonly string[];
  /** The longest token any issuer looks at. */
  readonly maxLength: number;
  readonly #byIss = new Map<string, Issuer>();
  readonly #introspecting: Issuer[];
  readonly #verified = new Map<string, { p: Principal; until: number }>();
  /** A token's digest (credentialIdOf) → until when no issuer knows it as active. */
  readonly #inactive = new Map<string, number>();
  /** Per issuer: how many times its keys were replaced (a verification that overlapped one is not remembered). */
  readonly #keyChanges = new Map<string, number>();
  /** Introspected principals → their token and issuer, to ask again once the answer is old. */
  readonly #asked = new WeakMap<Principal, { token: string; issuer: Issuer }>();
  /** Principals of JWTs checked against an issuer's keys → their token, to check again once the keys are stale. */
  readonly #signed = new WeakMap<Principal, string>();

  constructor(o: ExternalIssuersOptions) {
    const problem = externalIssuerProblems(o.issuers, o.profile, o.builtinIssuer)[0];
    if (problem) throw new SvcError(problem.code, problem.message, { path: `/${problem.path.join('/')}` });
    const log = o.log.child({ module: 'external' });
    for (const cfg of o.issuers) {
      this.#byIss.set(cfg.issuer, new Issuer({ cfg, profile: o.profile, baseDir: o.baseDir, log, endpoints: o.endpoints, onKeysReplaced: () => this.#forgetVerified(cfg.issuer) }));
    }
    this.issuers = o.issuers.map((c) => c.issuer);
    this.maxLength = Math.max(...o.issuers.map((c) => c.max_token_length));
    this.#introspecting = [...this.#byIss.values()].filter((i) => i.introspects);
  }

  /** Fetch every issuer's metadata and keys now (failures are logged and retried when a token needs them). */
  warm(): Promise<void> {
    return Promise.all([...this.#byIss.values()].map((i) => i.warm())).then(() => undefined);
  }

  /** `svc validate --network`: each issuer's problems (reaching it, its metadata and keys), by manifest index. */
  async probe(): Promise<string[][]> {
    return Promise.all([...this.#byIss.values()].map((i) => i.probe()));
  }

  /** A verified token's principal, while it may be reused; else undefined. */
  cached(token: string): Principal | undefined {
    const e = this.#verified.get(token);
    if (!e) return undefined;
    if (e.until > Date.now()) return e.p;
    this.#verified.delete(token);
    return undefined;
  }

  /** Whether only the external issuers may decide this token (a JWT, or too long for anyone else); else it is opaque. */
  owns(token: string): boolean {
    return token.length > this.maxLength || this.#shape(token).kind !== 'opaque';
  }

  /**
   * The principal of a token, or why not: a JWT by its issuer, an opaque token by introspection
   * (null when no issuer introspects: the token is nobody's here).
   */
  async verify(token: string): Promise<Principal | SvcError | null> {
    if (token.length > this.maxLength) return rejected('token_size', `the token is longer than ${this.maxLength} characters`);
    const shape = this.#shape(token);
    if (shape.kind === 'malformed') return rejected('token_malformed', 'the token looks like a JWT but cannot be decoded, or names no issuer');
    if (shape.kind === 'opaque') return this.#introspect(token);
    const issuer = this.#byIss.get(shape.iss);
    if (!issuer) return rejected('issuer_not_accepted', 'the token is from an issuer this server does not accept');
    const max = issuer.cfg.max_token_length;
    if (token.length > max) return rejected('token_size', `the token is longer than ${max} characters`);
    let local: boolean;
    try {
      local = await issuer.verifiesLocally();
    } catch (e) {
      return unavailable('discovery_unavailable', (e as Error).message);
    }
    if (!local) return this.#introspectWith([issuer], token);
    const changes = this.#keyChanges.get(shape.iss);
    const r = await issuer.verifyJwt(token, shape.header);
    if (r instanceof SvcError) return r;
    keepCallerCredential(r, { subjectToken: token });
    this.#signed.set(r, token);
    if (this.#keyChanges.get(shape.iss) === changes) this.#remember(token, r, Math.min((r.expiresAt ?? 0) * 1000, issuer.keysFreshUntil));
    return r;
  }

  /** An opaque token asked of the introspecting issuers in order; null when none introspects. */
  async #introspect(token: string): Promise<Principal | SvcError | null> {
    if (!this.#introspecting.length) return null;
    const known = this.cached(token);
    if (known) return known;
    const digest = credentialIdOf(token);
    const until = this.#inactive.get(digest);
    if (until !== undefined) {
      if (until > Date.now()) return rejected('introspection_inactive', 'no issuer knows the token as active');
      this.#inactive.delete(digest);
    }
    return this.#introspectWith(this.#introspecting, token);
  }

  /**
   * Whether an external principal is still good: its issuer listed, and its token still verified — from the cache,
   * else checked again (a JWT against the issuer's keys as they are now, an introspected token at its endpoint).
   * Throws IDP_UNAVAILABLE when the issuer cannot be asked.
   */
  async isActive(p: Principal): Promise<boolean> {
    if (p.kind !== 'external' || !p.issuer || !this.#byIss.has(p.issuer)) return false;
    const asked = this.#asked.get(p);
    if (!asked) {
      const token = this.#signed.get(p);
      if (token === undefined || this.cached(token)) return true;
      const r = await this.verify(token);
      if (r instanceof SvcError && r.code === 'IDP_UNAVAILABLE') throw r;
      if (r === null || r instanceof SvcError || r.sub !== p.sub) return false;
      return true;
    }
    if (this.cached(asked.token)) return true;
    const r = await asked.issuer.introspect(asked.token);
    if (r instanceof SvcError) {
      if (r.code === 'IDP_UNAVAILABLE') throw r;
      return false;
    }
    if (r === 'inactive' || r.principal.sub !== p.sub) return false;
    keepCallerCredential(r.principal, { subjectToken: asked.token });
    this.#remember(asked.token, r.principal, r.until);
    this.#asked.set(r.principal, asked);
    return true;
  }

  async #introspectWith(issuers: readonly Issuer[], token: string): Promise<Principal | SvcError> {
    let down: SvcError | undefined;
    for (const issuer of issuers) {
      const r = await issuer.introspect(token);
      if (r === 'inactive') continue;
      if (r instanceof SvcError) {
        if (r.code !== 'IDP_UNAVAILABLE') return r;
        down ??= r;
        continue;
      }
      this.#asked.set(r.principal, { token, issuer });
      keepCallerCredential(r.principal, { subjectToken: token });
      this.#remember(token, r.principal, r.until);
      return r.principal;
    }
    if (down) return down;
    const ttl = Math.min(...issuers.map((i) => i.inactiveTtlMs));
    if (ttl > 0) {
      if (this.#inactive.size >= MAX_CACHED) this.#inactive.delete(this.#inactive.keys().next().value!);
      this.#inactive.set(credentialIdOf(token), Date.now() + ttl);
    }
    return rejected('introspection_inactive', 'no issuer knows the token as active');
  }

  #remember(token: string, p: Principal, until: number): void {
    if (until <= Date.now()) return;
    if (this.#verified.size >= MAX_CACHED) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(token, { p, until });
  }

  #forgetVerified(issuer: string): void {
    this.#keyChanges.set(issuer, (this.#keyChanges.get(issuer) ?? 0) + 1);
    for (const [token, e] of this.#verified) if (e.p.issuer === issuer && !this.#asked.has(e.p)) this.#verified.delete(token);
  }

  #shape(token: string): Shape {
    if (!JWS_COMPACT.test(token)) return { kind: 'opaque' };
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return { kind: 'opaque' };
    }
    try {
      const iss = decodeJwt(token).iss;
      return typeof iss === 'string' ? { kind: 'jwt', header, iss } : { kind: 'malformed' };
    } catch {
      return { kind: 'malformed' };
    }
  }
}
