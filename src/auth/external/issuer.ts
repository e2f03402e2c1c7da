// One external issuer at run time: its metadata, its keys, and the checks of its tokens (its
// JWTs: jwt-access-token.ts; its opaque tokens: introspection.ts). Guarantees: the metadata
// (discovery.ts) is fetched once and kept, a failed discovery retried at most once per
// jwks_refetch_interval (single-flight meanwhile) and reported as discovery_unavailable; a JWT
// is checked with the issuer's keys when it publishes some (jwks_uri, or its metadata's),
// else introspected when it introspects; warm() and probe() never throw; nothing here logs a
// token.

import type { ProtectedHeaderParameters } from 'jose';
import type { Logger } from 'pino';
import type { ResolvedExternalIssuer } from '../../core/config.js';
import type { Principal } from '../../core/types.js';
import type { SvcError } from '../../errors.js';
import { discover, type IssuerMetadata } from './discovery.js';
import { KeySet } from './key-set.js';
import { verifyAccessJwt, type JwtContext } from './jwt-access-token.js';
import { Introspector, type Introspected } from './introspection.js';
import { IssuerFailure, unavailable } from './rejection.js';
import type { EndpointResources } from '../resource-metadata.js';

export interface IssuerOptions {
  cfg: ResolvedExternalIssuer;
  /** profile.scopes names. */
  profile: readonly string[];
  /** Folder client_secret_file resolves against. */
  baseDir: string;
  log: Logger;
  /** The issuer's keys were replaced or dropped: cached tokens it verified must be checked again. */
  onKeysReplaced(): void;
  /** The named endpoints (a token for one is accepted there only). */
  endpoints?: EndpointResources;
}

export class Issuer {
  readonly cfg: ResolvedExternalIssuer;
  readonly #log: Logger;
  readonly #keys: KeySet;
  readonly #jwt: JwtContext;
  readonly #introspector: Introspector | undefined;
  #meta: IssuerMetadata | undefined;
  #metaFlight: Promise<IssuerMetadata> | undefined;
  #metaAttempt = -Infinity;
  #metaFailure: IssuerFailure | undefined;

  constructor(o: IssuerOptions) {
    const cfg = o.cfg;
    this.cfg = cfg;
    this.#log = o.log;
    const audiences = [cfg.audience].flat();
    this.#keys = new KeySet({
      issuer: cfg.issuer,
      uri: async () => cfg.jwks_uri ?? (await this.metadata()).jwks_uri ?? Promise.reject(new IssuerFailure('jwks_unavailable', `${cfg.issuer} publishes no jwks_uri`)),
      maxAge: cfg.jwks_max_age,
      refetchInterval: cfg.jwks_refetch_interval,
      log: o.log,
      onReplaced: o.onKeysReplaced,
    });
    this.#jwt = { cfg, audiences, profile: o.profile, keys: this.#keys, endpoints: o.endpoints };
    this.#introspector = cfg.introspection && new Introspector({
      cfg, audiences, endpoints: o.endpoints, profile: o.profile, baseDir: o.baseDir, log: o.log,
      endpoint: async () => {
        if (cfg.introspection!.endpoint) return cfg.introspection!.endpoint;
        let meta: IssuerMetadata;
        try {
          meta = await this.metadata();
        } catch (e) {
          return unavailable('discovery_unavailable', (e as Error).message);
        }
        return meta.introspection_endpoint ?? unavailable('discovery_unavailable', `${cfg.issuer} publishes no introspection_endpoint`);
      },
    });
  }

  get introspects(): boolean {
    return this.#introspector !== undefined;
  }

  /** Until when (epoch ms) a JWT checked now against its keys may be trusted without checking it again: while the keys are fresh. */
  get keysFreshUntil(): number {
    return this.#keys.freshUntil;
  }

  /** How long an inactive introspection answer may be reused. */
  get inactiveTtlMs(): number {
    return this.#introspector?.inactiveTtlMs ?? 0;
  }

  /** Start-up: fetch what the issuer's tokens will need (failures are logged and retried on demand). */
  async warm(): Promise<void> {
    if (await this.verifiesLocally().catch(() => false)) await this.#keys.refresh();
  }

  /** The discovery document's endpoints (fetched once; a failure is retried at most once per jwks_refetch_interval). */
  metadata(): Promise<IssuerMetadata> {
    if (this.#meta) return Promise.resolve(this.#meta);
    if (this.#metaFlight) return this.#metaFlight;
    const now = Date.now();
    if (this.#metaFailure && now - this.#metaAttempt < this.cfg.jwks_refetch_interval * 1000) return Promise.reject(this.#metaFailure);
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

  /** Whether its JWTs are checked with its keys (else, since it introspects, introspected). */
  async verifiesLocally(): Promise<boolean> {
    if (this.cfg.jwks_uri || !this.introspects) return true;
    return !!(await this.metadata()).jwks_uri;
  }

  /** The principal of a JWT access token whose unverified `iss` names this issuer, or why not. */
  verifyJwt(token: string, header: ProtectedHeaderParameters): Promise<Principal | SvcError> {
    return verifyAccessJwt(token, header, this.#jwt);
  }

  /** Ask the introspection endpoint about a token (only for an issuer that introspects). */
  introspect(token: string): Promise<Introspected> {
    return this.#introspector!.introspect(token);
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
    const algorithms: readonly string[] = this.cfg.algorithms;
    const declared = this.#keys.algs;
    if (!declared.length) return [`${this.cfg.issuer} publishes no signing key`];
    if (declared.every((a) => a !== undefined && !algorithms.includes(a))) {
      return [`the keys of ${this.cfg.issuer} are for ${[...new Set(declared)].join(', ')}, none of which is in algorithms (${algorithms.join(', ')})`];
    }
    return [];
  }
}
