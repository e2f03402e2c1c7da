// An external issuer's opaque access tokens, introspected (RFC 7662). Guarantees: the token
// is posted to the endpoint with this server's client credentials (client_secret_basic, the
// id and secret form-encoded first as RFC 6749 §2.3.1 says: outbound/client-auth.ts, or
// client_secret_post), bounded
// like every outbound call; an answer is the principal only when it is active, names this
// issuer when it names one (introspection_iss), is an access token by what it says of the
// token — token_type absent or Bearer, DPoP, access_token (or RFC 8693's access_token URI), any
// case; token_use (Ory Hydra) absent or access_token; typ (Keycloak) absent, Bearer or DPoP —
// else token_typ (a refresh token, N_A…; the request's token_type_hint=access_token is only a
// hint, RFC 7662 §2.1), carries an aud containing an `audience` (token_aud) and holds exp/nbf within
// clock_skew; the principal may be reused until min(now + cache_ttl, exp) — the revocation
// lag; a failing endpoint is not asked again for INTROSPECTION_BACKOFF_MS, every token
// meanwhile getting IDP_UNAVAILABLE at once. Neither the token nor the secret is logged.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ResolvedExternalIssuer } from '../../core/config.js';
import type { Principal } from '../../core/types.js';
import { SvcError } from '../../errors.js';
import { fetchJson } from './fetch-json.js';
import { credentialIdOf, principalOf } from './claims-map.js';
import { rejected, unavailable } from './rejection.js';
import { basicAuthorization } from '../../outbound/client-auth.js';
import { audienceReach, restricted } from './token-audience.js';
import type { EndpointResources } from '../resource-metadata.js';

const MAX_ANSWER = 64 * 1024;
/** How long a failed introspection endpoint is not asked again. */
export const INTROSPECTION_BACKOFF_MS = 1000;

/** An introspection's outcome: the principal and until when the answer may be reused, the token unknown there, or a refusal. */
export type Introspected = { principal: Principal; until: number } | 'inactive' | SvcError;

export interface IntrospectorOptions {
  cfg: ResolvedExternalIssuer;
  audiences: readonly string[];
  /** The named endpoints: an aud naming one's resource makes the token that endpoint's only. */
  endpoints?: EndpointResources;
  /** profile.scopes names. */
  profile: readonly string[];
  /** Folder client_secret_file resolves against. */
  baseDir: string;
  /** introspection.endpoint, else the discovery document's (a SvcError when it cannot be had). */
  endpoint(): Promise<string | SvcError>;
  log: Logger;
}

export class Introspector {
  readonly #o: IntrospectorOptions;
  readonly #secret: string;
  #downUntil = 0;

  constructor(o: IntrospectorOptions) {
    this.#o = o;
    const intro = o.cfg.introspection!;
    this.#secret = intro.client_secret ?? (intro.client_secret_file ? readSecret(resolve(o.baseDir, intro.client_secret_file)) : '');
  }

  /** How long an inactive answer may be reused. */
  get inactiveTtlMs(): number {
    return this.#o.cfg.introspection!.cache_ttl * 1000;
  }

  async introspect(token: string): Promise<Introspected> {
    const { cfg } = this.#o;
    const intro = cfg.introspection!;
    if (Date.now() < this.#downUntil) return unavailable('introspection_unavailable', `the introspection endpoint of ${cfg.issuer} failed moments ago`);
    const endpoint = await this.#o.endpoint();
    if (endpoint instanceof SvcError) return endpoint;
    const basic = intro.auth_method === 'client_secret_basic';
    const form: Record<string, string> = { token, token_type_hint: 'access_token', ...(!basic && { client_id: intro.client_id, client_secret: this.#secret }) };
    const headers = basic ? { authorization: basicAuthorization(intro.client_id, this.#secret) } : undefined;
    let answer: Record<string, unknown>;
    try {
      answer = (await fetchJson(endpoint, { method: 'POST', form, headers, maxBytes: MAX_ANSWER })).json;
    } catch (e) {
      this.#downUntil = Date.now() + INTROSPECTION_BACKOFF_MS;
      const message = `the introspection endpoint of ${cfg.issuer} failed: ${(e as Error).message}`;
      this.#o.log.warn({ event: 'external.introspection_failed', issuer: cfg.issuer, err: (e as Error).message }, message);
      return unavailable('introspection_unavailable', message);
    }
    if (answer.active !== true) return 'inactive';
    const refused = this.#problem(answer);
    if (refused) return refused;
    const found = principalOf(cfg, answer, this.#o.profile, credentialIdOf(token));
    if (!found) return rejected('token_sub', `the introspection answer has no subject (${cfg.subject_claim})`);
    const p = restricted(found, audienceReach(answer.aud, this.#o.audiences, this.#o.endpoints) ?? undefined);
    const until = Math.min(Date.now() + intro.cache_ttl * 1000, typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity);
    return { principal: p, until };
  }

  #problem(a: Record<string, unknown>): SvcError | undefined {
    const { cfg } = this.#o;
    if (a.iss !== undefined && a.iss !== cfg.issuer) return rejected('introspection_iss', `the introspection answer names issuer ${String(a.iss)}, not ${cfg.issuer}`);
    const kind = notAccessToken(a);
    if (kind) return rejected('token_typ', `the introspected token is ${kind}, not an access token`);
    if (audienceReach(a.aud, this.#o.audiences, this.#o.endpoints) === null) return rejected('token_aud', 'the introspected token is not for this server (aud)');
    const now = Date.now() / 1000;
    const skew = cfg.clock_skew;
    if (typeof a.exp === 'number' && a.exp <= now - skew) return rejected('token_exp', 'the introspected token has expired');
    if (typeof a.nbf === 'number' && a.nbf > now + skew) return rejected('token_nbf', 'the introspected token is not valid yet');
    return undefined;
  }
}

/** token_type values of an access token this server takes: RFC 6749 §5.1's Bearer and DPoP, the hint's word, RFC 8693's URI (any case). */
const ACCESS_TOKEN_TYPES = /^(bearer|dpop|access_token|urn:ietf:params:oauth:token-type:access_token)$/i;

/**
 * What an active answer says the token is when it is not an access token, else undefined: its token_type (RFC 7662:
 * the OAuth token type — a refresh_token, RFC 8693's N_A or any other is not one), token_use (Ory Hydra: access_token
 * or refresh_token) or typ (Keycloak: Bearer for an access token; Refresh, Offline, ID…). token_type_hint=access_token in the request is only a
 * hint (RFC 7662 §2.1): a provider may answer about a refresh token all the same.
 */
function notAccessToken(a: Record<string, unknown>): string | undefined {
  const said = (field: string, ok: RegExp) => {
    const v = a[field];
    return v === undefined || (typeof v === 'string' && ok.test(v)) ? undefined : `a ${String(v).slice(0, 64)} (${field})`;
  };
  return said('token_type', ACCESS_TOKEN_TYPES) ?? said('token_use', /^access_token$/i) ?? said('typ', /^(bearer|dpop)$/i);
}

function readSecret(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read secret file ${path}: ${(e as NodeJS.ErrnoException).code}`);
  }
}
