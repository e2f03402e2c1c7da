// createOAuthServer: the embedded OAuth 2.1 authorization server (oidc-provider) plus
// what a protected resource needs from it (its protected-resource metadata is served by
// auth/resource-metadata.ts, which also lists external issuers), assembled from its clients
// (clients.ts), its engine (oidc-engine.ts: oidc-provider over keys, the store's adapters, DPoP,
// ID-JAG and sign-in) and its routes (routes.ts). Guarantees: start-up refuses an issuer that
// is not scheme://host[:port], a base URL that is not http(s), login.mode auto on an issuer
// off loopback, login.mode users without users and a profile without scopes (OAUTH_CONFIG);
// discovery documents come from the configured issuer and base URL only (routes.ts for the
// rest of what the routes guarantee); an access token is accepted only while it, its grant
// and its subject exist, so a revocation or a replay takes effect on the very next request;
// on a shared store (PostgreSQL) a revocation made by any replica drops this process's
// cached tokens of that grant and is told to onRevoked() listeners, a replay lost to another
// replica revokes the grant (store-guard.ts), and an unreachable store answers 503.
// Enterprise identities (ID-JAG, oauth.enterprise_issuers) get tokens through the
// jwt-bearer grant (id-jag.ts); with oauth.dpop, tokens may be (allowed) or must be
// (required) bound to a DPoP key and the protected routes check proofs with the `dpop`
// verifier. With login.mode upstream (auth/signin/), people sign in at identity providers:
// their tokens name the provider, are honoured only while it is configured, and the grant's
// sealed provider tokens go when the grant goes; signInTokens() hands the person's provider
// access token (refreshed when due) to code of this server, never to a client — also to a
// backend called on the person's behalf, through the principal's caller credential
// (outbound/caller-credentials.ts). Token issuance, refresh, revocation, registration,
// refused grants and rate-limit refusals are reported to the Observer (audit events and
// metrics; grant ids only as a hash).

import type { Application } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Principal } from '../../core/types.js';
import type { Caller } from '../../http/forwarded.js';
import { SvcError } from '../../errors.js';
import { isLoopbackHost } from '../../util/loopback.js';
import type { AuthProfile } from '../../core/manifest-types.gen.js';
import type { ResolvedOAuth } from '../../core/config.js';
import type { DpopVerifier } from '../dpop.js';
import { createAccounts } from './accounts.js';
import { createClients } from './clients.js';
import { createOidcEngine } from './oidc-engine.js';
import { JWT_BEARER } from './id-jag.js';
import { issuerProblem, NO_SCOPE } from './oauth-checks.js';
import type { OAuthProvider } from '../../core/oauth-provider.js';
import { storeError } from './store-guard.js';
import { createRoutes, type OAuthRateLimits } from './routes.js';
import { Observer } from '../../observe/observer.js';
import type { ProviderTokens } from '../signin/provider-client.js';
import { keepCallerCredential } from '../../outbound/caller-credentials.js';
import type { EndpointResources } from '../resource-metadata.js';

export type { OAuthRateLimits } from './routes.js';

export interface OAuthServerOptions {
  /** The oauth section with the schema's defaults applied (resolveConfig). */
  oauth: ResolvedOAuth;
  profile: AuthProfile;
  /** Issuer exactly as published: scheme://host[:port], no path. */
  issuer: string;
  /** This server's public origin; the canonical resource and the tokens' audience. */
  baseUrl: string;
  /** Protected routes ('/mcp', '/svc', '/ws'): baseUrl + route is also accepted as a resource indicator. */
  protectedRoutes: readonly string[];
  /** The named endpoints (live): a token for one of them (audience baseUrl/mcp/NAME) is accepted there only. */
  endpoints?: EndpointResources;
  /** profile.scopes names. */
  scopes: readonly string[];
  /** Owned from here on: close() closes it. */
  provider: OAuthProvider;
  logger: Logger;
  /** Folder that client_secret_file paths resolve against. */
  manifestDir: string;
  /** Shown on login/consent pages and as resource_name. */
  name: string;
  /** Overrides of oauth.rate_limits, for tests that need limits a manifest cannot give. */
  limits?: Partial<OAuthRateLimits>;
  /** Who is calling (server.trust_proxy applied). */
  caller: (req: IncomingMessage) => Caller;
  /** Audit log and metrics; default: none. */
  observer?: Observer;
}

export interface OAuthServer {
  /** Add discovery, OAuth endpoints and interaction pages. Call before any body parser and before the 404 handler. */
  mount(app: Application): void;
  /** The principal of a valid access token for this resource, else null. Never throws for bad input. */
  verifyAccessToken(token: string): Promise<Principal | null>;
  /** verifyAccessToken's answer at once when the token is in the verified-token cache (verified-tokens.ts), else undefined. */
  cachedAccessToken(token: string): Principal | undefined;
  /** Whether an OAuth principal's grant and subject still exist and it has not expired. */
  isActive(p: Principal): Promise<boolean>;
  /** The issuer, exactly as published (protected-resource metadata lists it in authorization_servers). */
  readonly issuer: string;
  /** profile.scopes as started: what both metadata documents advertise as scopes_supported, and all this server grants. */
  readonly scopesSupported: readonly string[];
  /** Called with the grant id of every revocation (by this process, or by any replica on a shared store). */
  onRevoked(listener: (grantId: string) => void): void;
  /** False while a shared store is unreachable. */
  reachable(): boolean;
  /** The store the server keeps its state in (createApp puts tasks beside it on PostgreSQL). */
  readonly provider: OAuthProvider;
  /** The protected routes' DPoP proof verifier (oauth.dpop allowed or required). */
  dpop?: DpopVerifier;
  /**
   * login.mode upstream: the access token the person of this grant (a principal's credentialId)
   * holds at the identity provider they signed in at, refreshed first when it is about to
   * expire — for a backend called on their behalf. Rejects UPSTREAM_TOKEN_UNAVAILABLE.
   */
  signInTokens?(grantId: string): Promise<ProviderTokens>;
  close(): Promise<void>;
}

export async function createOAuthServer(opts: OAuthServerOptions): Promise<OAuthServer> {
  const log = opts.logger.child({ module: 'oauth' });
  const { issuer, audience } = checkedSettings(opts);
  const clients = createClients(opts.oauth, opts.manifestDir, opts.scopes);
  const accounts = createAccounts(opts.oauth, opts.scopes);
  const observer = opts.observer ?? Observer.NONE;
  const engine = await createOidcEngine({
    oauth: opts.oauth, issuer, audience, protectedRoutes: opts.protectedRoutes, endpoints: opts.endpoints, scopes: opts.scopes, provider: opts.provider, clients, accounts,
    manifestDir: opts.manifestDir, name: opts.name, caller: opts.caller, log, observer,
  });
  const { provider, verified, idJag, signIn, signInGrants } = engine;
  const routes = createRoutes({
    oauth: opts.oauth, profile: opts.profile, issuer, audience, scopes: opts.scopes, name: opts.name, limits: opts.limits, caller: opts.caller,
    engine, clients, accounts, log, observer,
  });
  const dpop = engine.dpopFor(audience);

  const verify = async (token: string): Promise<Principal | null> => {
    const epoch = verified.begin();
    const at = await provider.AccessToken.find(token);
    if (!at || !at.accountId || !at.grantId) return null;
    // The origin: every endpoint; a named endpoint's resource (origin/mcp/NAME): that endpoint only.
    const auds = [at.aud].flat();
    const endpoints = auds.includes(audience) ? undefined : auds.flatMap((a) => (typeof a === 'string' && a.startsWith(`${audience}/mcp/`) ? [a.slice(audience.length + 5)] : []));
    if (endpoints && !endpoints.length) return null;
    if (!engine.knownSubject(at.accountId, at.gty, at.extra) || !(await provider.Grant.find(at.grantId))) return null;
    const claims = (at.extra?.claims as Record<string, unknown> | undefined) ?? accounts.claims(at.accountId);
    const idp = at.gty === JWT_BEARER ? String(at.extra?.idp) : undefined;
    const via = typeof at.extra?.upstream === 'string' ? at.extra.upstream : undefined;
    const principal: Principal = Object.freeze({
      sub: at.accountId,
      scopes: new Set((at.scope ?? '').split(' ').filter(Boolean)),
      kind: 'oauth' as const,
      clientId: at.clientId,
      expiresAt: at.exp,
      credentialId: at.grantId,
      ...(at.jkt && { jkt: at.jkt }),
      ...(endpoints && { endpoints }),
      ...(claims && { claims }),
      ...(idp && { idp }),
      ...(via && { signedInAt: via }),
    });
    const grantId = at.grantId;
    if (via && signIn) keepCallerCredential(principal, { signIn: { name: via, accessToken: async () => (await signIn.tokens(grantId)).access_token } });
    verified.set(token, principal, epoch);
    return principal;
  };
  const active = async (p: Principal): Promise<boolean> => {
    if (p.kind !== 'oauth' || !p.credentialId) return false;
    if (p.expiresAt !== undefined && p.expiresAt * 1000 <= Date.now()) return false;
    if (verified.knowsGrant(p.credentialId)) return true;
    const grant = await provider.Grant.find(p.credentialId);
    return !!grant && (accounts.has(p.sub) || idJag.trusts(p.idp) || (p.signedInAt !== undefined && !!signInGrants?.trusts(p.signedInAt)));
  };

  return {
    mount(app) {
      routes.mount(app);
    },

    verifyAccessToken(token) {
      if (token.length > 512) return Promise.resolve(null);
      const cached = verified.get(token);
      if (cached) return Promise.resolve(cached);
      return verify(token).catch((e) => {
        throw storeError(e);
      });
    },

    cachedAccessToken(token) {
      return token.length > 512 ? undefined : verified.get(token);
    },

    async isActive(p) {
      return active(p).catch((e) => {
        throw storeError(e);
      });
    },

    onRevoked(listener) {
      engine.onRevoked(listener);
    },

    reachable() {
      return opts.provider.reachable?.() ?? true;
    },

    provider: opts.provider,

    scopesSupported: opts.scopes,

    dpop,

    ...(signIn && { signInTokens: (grantId: string) => signIn.tokens(grantId) }),
    issuer,

    async close() {
      await opts.provider.close();
    },
  };
}

/** The issuer and the tokens' audience, once the settings start-up refuses are ruled out (in this order). */
function checkedSettings(opts: OAuthServerOptions): { issuer: string; audience: string } {
  const mode = opts.oauth.login.mode;
  const badIssuer = issuerProblem(opts.issuer);
  if (badIssuer) throw new SvcError('OAUTH_CONFIG', badIssuer, { path: '/oauth/issuer' });
  const issuerUrl = new URL(opts.issuer);
  const audience = parseUrl(opts.baseUrl, 'base_url').origin;
  if (mode === 'auto' && !isLoopbackHost(issuerUrl.hostname)) {
    throw new SvcError('OAUTH_CONFIG', `oauth.login.mode auto approves every request without a page; it is allowed only on a loopback issuer, not ${issuerUrl.host}`, { path: '/oauth/login/mode' });
  }
  if (mode === 'users' && !(opts.oauth.users ?? []).length) {
    throw new SvcError('OAUTH_CONFIG', 'oauth.login.mode users needs at least one entry in oauth.users', { path: '/oauth/users' });
  }
  if (!opts.scopes.length) {
    throw new SvcError('OAUTH_CONFIG', NO_SCOPE, { path: '/profile/scopes' });
  }
  return { issuer: opts.issuer, audience };
}

function parseUrl(v: string, what: string): URL {
  const u = URL.parse(v);
  if (!u || !/^https?:$/.test(u.protocol)) throw new SvcError('OAUTH_CONFIG', `${what} ${v} is not an http(s) URL`);
  return u;
}
