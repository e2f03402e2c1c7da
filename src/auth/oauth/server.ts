// createOAuthServer: the embedded OAuth 2.1 authorization server (oidc-provider) plus
// what a protected resource needs from it (its protected-resource metadata is served by
// auth/resource-metadata.ts, which also lists external issuers). Guarantees: discovery documents come from the
// configured issuer and base URL only; oidc-provider sees only its own paths (it never
// calls next()) and no body parser runs before it; /token, /register and logins are
// rate-limited per client address (server.trust_proxy applied); oidc-provider reads
// X-Forwarded-* only as the trusted proxies set them (stripped otherwise), so its
// absolute URLs and secure cookies follow a TLS-terminating proxy while the issuer stays
// fixed; an access token is accepted only while it, its grant and its subject
// exist, so a revocation or a replay takes effect on the very next request; on a
// shared store (PostgreSQL) a revocation made by any replica drops this process's
// cached tokens of that grant and is told to onRevoked() listeners, a replay lost
// to another replica revokes the grant (store-guard.ts), and an unreachable store
// answers 503. Enterprise identities (ID-JAG, oauth.enterprise_issuers) get tokens
// through the jwt-bearer grant (id-jag.ts); with oauth.dpop, tokens may be (allowed) or
// must be (required) bound to a DPoP key and the protected routes check proofs with the
// `dpop` verifier. With login.mode upstream (auth/signin/), people sign in at identity providers:
// their tokens name the provider, are honoured only while it is configured, and the grant's
// sealed provider tokens go when the grant goes; signInTokens() hands the person's provider
// access token (refreshed when due) to code of this server, never to a client — also to a
// backend called on the person's behalf, through the principal's caller credential
// (outbound/caller-credentials.ts). Token issuance,
// refresh, revocation, registration, refused grants and rate-limit refusals
// are reported to the Observer (audit events and metrics; grant ids only as a hash).

import type { Application, NextFunction, Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Provider, { errors, type ClientMetadata } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Principal } from '../../core/types.js';
import type { Caller } from '../../http/forwarded.js';
import { SvcError } from '../../errors.js';
import { shownValue } from './pages.js';
import { isLoopbackHost } from '../../util/loopback.js';
import type { AuthProfile, OAuthConfig } from '../../core/manifest-types.gen.js';
import type { ResolvedOAuth } from '../../core/config.js';
import { DpopVerifier, DPOP_ALGS } from '../dpop.js';
import { createAccounts } from './accounts.js';
import { createIdJagVerifier, ID_JAG_PROFILE, JWT_BEARER } from './id-jag.js';
import { issuerProblem, NO_SCOPE } from './oauth-checks.js';
import { registerIdJagGrant } from './id-jag-grant.js';
import { createCimd } from './cimd.js';
import { interactionRouter } from './interactions.js';
import { VerifiedTokens } from './verified-tokens.js';
import { EngineRequests } from './engine-storage.js';
import { loadOrCreateKeys } from './server-keys.js';
import { authorizationServerMetadata } from './metadata.js';
import { oidcConfiguration } from './oidc-config.js';
import type { Adapter, OAuthProvider } from '../../core/oauth-provider.js';
import { guardAdapter, storeError } from './store-guard.js';
import { RateLimiter, type BucketLimits } from './rate-limit.js';
import { Observer } from '../../observe/observer.js';
import { hashId } from '../../observe/audit.js';
import { scopeOf, type RequestScope } from '../../core/request-scope.js';
import type { ProviderTokens } from '../signin/provider-client.js';
import type { SignIn } from '../signin/sign-in.js';
import { keepCallerCredential } from '../../outbound/caller-credentials.js';

export interface OAuthRateLimits {
  token: BucketLimits;
  register: BucketLimits;
  loginPerIp: BucketLimits;
  loginPerUser: BucketLimits;
}

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
  const oauth = opts.oauth;
  const mode = oauth.login.mode;
  const badIssuer = issuerProblem(opts.issuer);
  if (badIssuer) throw new SvcError('OAUTH_CONFIG', badIssuer, { path: '/oauth/issuer' });
  const issuerUrl = new URL(opts.issuer);
  const issuer = opts.issuer;
  const audience = parseUrl(opts.baseUrl, 'base_url').origin;
  if (mode === 'auto' && !isLoopbackHost(issuerUrl.hostname)) {
    throw new SvcError('OAUTH_CONFIG', `oauth.login.mode auto approves every request without a page; it is allowed only on a loopback issuer, not ${issuerUrl.host}`, { path: '/oauth/login/mode' });
  }
  if (mode === 'users' && !(oauth.users ?? []).length) {
    throw new SvcError('OAUTH_CONFIG', 'oauth.login.mode users needs at least one entry in oauth.users', { path: '/oauth/users' });
  }
  if (!opts.scopes.length) {
    throw new SvcError('OAUTH_CONFIG', NO_SCOPE, { path: '/profile/scopes' });
  }
  const scopeSet = new Set(opts.scopes);
  const clients = (oauth.clients ?? []).map((c) => staticClient(c, opts.manifestDir, opts.scopes));
  for (const c of clients) {
    const bad = String(c.scope).split(' ').filter((s) => !scopeSet.has(s));
    if (bad.length) throw new SvcError('SCOPE_UNDECLARED', `client ${c.client_id} lists ${bad.join(', ')}, which profile.scopes does not declare`, { path: '/oauth/clients' });
  }
  const staticIds = new Set(clients.map((c) => c.client_id));
  const isDynamic = (clientId: string) => !staticIds.has(clientId);
  const accounts = createAccounts(oauth, opts.scopes);
  const remembered = opts.provider.adapter('RememberedConsent');
  const keys = await loadOrCreateKeys(opts.provider);
  const observer = opts.observer ?? Observer.NONE;
  // Loaded only in upstream mode: oauth4webapi is not needed otherwise.
  const signInParts = mode === 'upstream'
    ? (await import('../signin/sign-in.js')).createSignIn({
      oauth, issuer: opts.issuer, scopes: opts.scopes, adapter: (m) => opts.provider.adapter(m), cookieKeys: keys.cookieKeys,
      manifestDir: opts.manifestDir, serverName: opts.name, log, observer, clientIp: (req) => opts.caller(req).ip,
    })
    : undefined;
  const signInGrants = signInParts?.grants;
  const dpopMode = oauth.dpop ?? 'off';
  const dpopNonces = oauth.dpop_nonce ?? false;
  // One nonce secret for oidc-provider's token endpoint and the protected routes (dpop.ts).
  const nonceSecret = Buffer.from(hkdfSync('sha256', Buffer.from(keys.cookieKeys[0]!, 'base64url'), Buffer.alloc(0), 'fastsvc dpop nonce', 32));
  const dpopFor = (origin: string) => (dpopMode === 'off' ? undefined : new DpopVerifier({ mode: dpopMode, nonces: dpopNonces, origin, secret: nonceSecret }));
  if (dpopMode === 'required') for (const c of clients) c.dpop_bound_access_tokens = true;
  const routes = [...opts.protectedRoutes];
  const acceptResource = (indicator: string) => {
    const u = URL.parse(indicator);
    if (!u || u.origin !== audience || u.search || u.hash || u.username || u.password) return false;
    const path = u.pathname.replace(/\/+$/, '');
    return path === '' || routes.some((r) => path === r || path.startsWith(`${r}/`));
  };
  const idJag = createIdJagVerifier({ issuers: oauth.enterprise_issuers ?? [], issuer, acceptResource, scopes: opts.scopes, knownClients: staticIds });
  for (const c of clients) if (idJag.clientIds.has(c.client_id)) c.grant_types = [...c.grant_types!, JWT_BEARER];

  // A local account, or the subject of a still-trusted enterprise identity provider (ID-JAG) or upstream login.
  const knownSubject = (sub: string, gty: string | undefined, extra: Record<string, unknown> | undefined) =>
    (gty === JWT_BEARER ? idJag.trusts(extra?.idp) : extra?.upstream !== undefined ? !!signInGrants?.trusts(extra.upstream) : accounts.has(sub));
  const revokedListeners: ((grantId: string) => void)[] = [];
  const verified = new VerifiedTokens((grantId) => revokedListeners.forEach((l) => l(grantId)));
  opts.provider.watch?.({ revoked: (grantId) => verified.revoked(grantId), listening: (up) => verified.trust(up) });
  const adapters = new Map<string, Adapter>();
  const adapterOf = (model: string): Adapter => {
    let a = adapters.get(model);
    if (!a) {
      a = verified.wrap(model, guardAdapter(model, opts.provider.adapter(model), adapterOf));
      if (model === 'Grant' && signInGrants) a = withSignInRecord(a, signInGrants.destroy);
      adapters.set(model, a);
    }
    return a;
  };
  const store: OAuthProvider = {
    adapter: adapterOf,
    loadKeys: () => opts.provider.loadKeys(),
    saveKeys: (k) => opts.provider.saveKeys(k),
    close: () => opts.provider.close(),
  };
  const cimd = createCimd(oauth.client_id_metadata_documents, opts.manifestDir, log);
  const provider = new Provider(issuer, oidcConfiguration({
    oauth, mode, scopes: opts.scopes, audience, acceptResource, keys, provider: store, accounts, clients, isDynamic, remembered, cimd, signIn: signInGrants,
    dpop: dpopMode === 'off' ? undefined : { required: dpopMode === 'required', nonceSecret: dpopNonces ? nonceSecret : undefined },
  }));
  if (idJag.clientIds.size) registerIdJagGrant(provider, { verifier: idJag, audience, ttl: oauth.access_token_ttl, dpop: dpopFor(new URL(issuer).origin) });
  // Koa reads X-Forwarded-*; mount() leaves it only what trusted proxies said.
  provider.proxy = true;
  const signIn: SignIn | undefined = signInParts && { ...signInParts.grants, ...signInParts.flow(provider) };
  logEvents(provider, log);
  observeEvents(provider, observer, (req) => scopeOf(req, opts.caller(req).ip));
  // oauth.dpop required: every token is bound, whatever a client's metadata says — a client registered at /register
  // or described by a metadata document may say dpop_bound_access_tokens: false — so /token wants a proof first.
  if (dpopMode === 'required') {
    provider.use(async (ctx, next) => {
      if (ctx.method !== 'POST' || ctx.path !== '/token' || ctx.get('DPoP')) return next();
      const err = new errors.InvalidDpopProof('this server issues only DPoP-bound tokens: send a DPoP proof', 'no DPoP proof at /token while oauth.dpop is required');
      provider.emit('grant.error', ctx, err);
      ctx.status = 400;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: err.error, error_description: err.error_description };
    });
  }
  // RFC 6749 §3.3: a request without `scope` asks for the client's default — its allowed scopes.
  provider.use(async (ctx, next) => {
    if (ctx.path === '/authorize' && ctx.method === 'GET' && !ctx.query.scope && typeof ctx.query.client_id === 'string') {
      const client = await provider.Client.find(ctx.query.client_id).catch(() => undefined);
      if (client) ctx.query = { ...ctx.query, scope: client.scope ?? opts.scopes.join(' ') };
    }
    await next();
  });
  const callback = provider.callback();
  const engine = new EngineRequests(); // its AsyncLocalStorage on only while it answers (engine-storage.ts)

  const limits = { ...rateLimits(oauth.rate_limits), ...opts.limits };
  const tokenLimit = new RateLimiter(limits.token);
  const registerLimit = new RateLimiter(limits.register);
  const registration = oauth.registration.enabled;
  const oidcPaths = new RegExp(`^/(authorize(/[A-Za-z0-9_-]+)?|token|revoke|introspect|jwks${registration ? '|register' : ''})$`);
  const name = opts.name;
  const caller = opts.caller;
  const asBase = authorizationServerMetadata({ issuer, profile: opts.profile, registration, cimd: cimd.enabled, scopes: opts.scopes });
  const asMetadata = {
    ...asBase,
    ...(idJag.clientIds.size && {
      grant_types_supported: [...(asBase.grant_types_supported as string[]), JWT_BEARER],
      authorization_grant_profiles_supported: [ID_JAG_PROFILE],
    }),
    ...(dpopMode !== 'off' && { dpop_signing_alg_values_supported: DPOP_ALGS }),
  };
  const dpop = dpopFor(audience);

  const verify = async (token: string): Promise<Principal | null> => {
    const epoch = verified.begin();
    const at = await provider.AccessToken.find(token);
    if (!at || !at.accountId || !at.grantId) return null;
    if (![at.aud].flat().includes(audience)) return null;
    if (!knownSubject(at.accountId, at.gty, at.extra) || !(await provider.Grant.find(at.grantId))) return null;
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
      const publicJson = (doc: Record<string, unknown>) => (_req: Request, res: Response) => {
        // Public documents: readable from any origin, unless server.cors already answered for this one.
        if (!res.getHeader('Access-Control-Allow-Origin')) res.set('Access-Control-Allow-Origin', '*');
        res.set('Cache-Control', 'public, max-age=300').json(doc);
      };
      app.use((req: Request, _res: Response, next: NextFunction) => {
        trustedForwardedHeaders(req, caller(req));
        next();
      });
      app.get('/.well-known/oauth-authorization-server', publicJson(asMetadata));
      if (signIn) app.use(signIn.router());
      app.use(interactionRouter({
        provider, mode, signIn, autoSubject: oauth.login.subject, accounts, audience, serverName: name, isDynamic, remembered, log, observer,
        scopes: (opts.profile.scopes ?? []).map((s) => (typeof s === 'string' ? { name: s } : s)),
        csrfKey: Buffer.from(keys.cookieKeys[0]!, 'base64url'),
        loginLimits: { ip: new RateLimiter(limits.loginPerIp), user: new RateLimiter(limits.loginPerUser) },
        grantTtl: oauth.refresh_token_ttl,
        clientIp: (req) => caller(req).ip,
      }));
      app.use((req: Request, res: Response, next: NextFunction) => {
        if (!oidcPaths.test(req.path)) return next();
        if (req.method === 'POST') {
          const limiter = req.path === '/token' ? tokenLimit : req.path === '/register' ? registerLimit : undefined;
          const ip = caller(req).ip;
          const wait = limiter?.take(ip) ?? 0;
          if (wait > 0) {
            log.warn({ event: 'oauth.rate_limited', path: req.path, ip }, `${req.path} rate-limited`);
            observer.refused('rate_limited', req.path, ip, 'refuse');
            res.status(429).set({ 'Retry-After': String(wait), 'Cache-Control': 'no-store' })
              .json({ error: 'temporarily_unavailable', error_description: `too many requests; retry after ${wait} s` });
            return;
          }
        }
        void engine.run(() => callback(req, res));
      });
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
      revokedListeners.push(listener);
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

/** The Grant adapter, also forgetting a grant's upstream record when the grant is destroyed. */
function withSignInRecord(a: Adapter, forget: (grantId: string) => Promise<void>): Adapter {
  return { ...a, destroy: async (id) => void (await Promise.all([a.destroy(id), forget(id)])) };
}

function staticClient(c: NonNullable<OAuthConfig['clients']>[number], dir: string, scopes: readonly string[]): ClientMetadata {
  const secret = c.client_secret ?? (c.client_secret_file ? readFileSync(resolve(dir, c.client_secret_file), 'utf8').trim() : undefined);
  const native = c.redirect_uris.every((u) => {
    const p = URL.parse(u);
    return p?.protocol === 'http:' && isLoopbackHost(p.hostname);
  });
  return {
    client_id: c.client_id,
    ...(c.client_name && { client_name: c.client_name }),
    redirect_uris: c.redirect_uris,
    scope: (c.scopes ?? scopes).join(' '),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // Loopback http redirect URIs are a native app's (RFC 8252): any port matches.
    application_type: native ? 'native' : 'web',
    ...(secret ? { client_secret: secret, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
  };
}

function logEvents(provider: Provider, log: Logger): void {
  provider.on('grant.error', (ctx, err) => {
    const e = err as { error?: string; error_detail?: string };
    log.warn({ event: 'oauth.grant_error', error: e.error, detail: e.error_detail, client_id: ctx.oidc?.client?.clientId, grant_type: ctx.oidc?.params?.grant_type },
      `token request refused: ${e.error}${e.error_detail ? ` (${e.error_detail})` : ''}`);
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    log.info({ event: 'oauth.grant_revoked', grant_id: grantId, client_id: ctx.oidc?.client?.clientId, route: ctx.oidc?.route }, 'grant revoked');
  });
  provider.on('server_error', (ctx, err) => {
    log.error({ event: 'oauth.server_error', err, route: ctx.oidc?.route }, 'authorization server error');
  });
  for (const ev of ['authorization.error', 'registration_create.error', 'revocation.error', 'introspection.error', 'jwks.error'] as const) {
    provider.on(ev as 'authorization.error', (ctx, err) => {
      const e = err as { error?: string; error_detail?: string; error_description?: string };
      const redirectUri = e.error === 'invalid_redirect_uri' ? ctx.oidc?.params?.redirect_uri : undefined;
      log.info({
        event: `oauth.${ev}`, error: e.error, detail: e.error_detail ?? e.error_description, client_id: ctx.oidc?.client?.clientId ?? (typeof ctx.oidc?.params?.client_id === 'string' ? shownValue(ctx.oidc.params.client_id) : undefined),
        ...(typeof redirectUri === 'string' && { redirect_uri: shownValue(redirectUri) }),
      }, `${ev}: ${e.error}`);
    });
  }
}

/** Audit events and token counts from oidc-provider's own events; a grant or token id is written only as a hash. */
function observeEvents(provider: Provider, obs: Observer, scopeFor: (req: IncomingMessage) => RequestScope): void {
  const scope = (ctx: { req: IncomingMessage }) => (obs.scoped() ? scopeFor(ctx.req) : undefined);
  const who = (clientId?: string, sub?: string) => (sub || clientId ? { ...(sub && { sub }), ...(clientId && { client_id: clientId }) } : {});
  provider.on('grant.success', (ctx) => {
    const gt = String(ctx.oidc?.params?.grant_type ?? '');
    const at = ctx.oidc?.entities?.AccessToken as { grantId?: string; accountId?: string; scope?: string } | undefined;
    obs.oauth({
      decision: gt === 'refresh_token' ? 'refresh' : 'issue', reason: gt || 'grant', transport: 'oauth', scope: scope(ctx),
      detail: { ...who(ctx.oidc?.client?.clientId, at?.accountId), token_kind: 'oauth', ...(at?.grantId && { token_id: hashId(at.grantId) }), scopes_granted: (at?.scope ?? '').split(' ').filter(Boolean) },
    });
  });
  provider.on('grant.error', (ctx, err) => {
    obs.oauth({ decision: 'deny', reason: String((err as { error?: string }).error ?? 'grant_error'), transport: 'oauth', scope: scope(ctx), detail: who(ctx.oidc?.client?.clientId) });
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    obs.oauth({ decision: 'revoke', reason: `grant_revoked_${ctx.oidc?.route ?? 'server'}`, transport: 'oauth', scope: scope(ctx), detail: { ...who(ctx.oidc?.client?.clientId), token_id: hashId(grantId) } });
  });
  provider.on('registration_create.success', (ctx, client) => {
    obs.oauth({ decision: 'register', reason: 'client_registered', transport: 'oauth', scope: scope(ctx), detail: { client_id: client.clientId } });
  });
  provider.on('registration_create.error', (ctx) => {
    obs.oauth({ decision: 'deny', reason: 'registration_refused', transport: 'oauth', scope: scope(ctx) });
  });
}

/** Rewrite X-Forwarded-For/-Proto/-Host to exactly what the trusted proxies reported (nothing when none is trusted). */
function trustedForwardedHeaders(req: IncomingMessage, c: Caller): void {
  for (const h of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) delete req.headers[h];
  if (!c.viaProxy) return;
  req.headers['x-forwarded-for'] = c.ip;
  if (c.proto) req.headers['x-forwarded-proto'] = c.proto;
  if (c.host) req.headers['x-forwarded-host'] = c.host;
}

function parseUrl(v: string, what: string): URL {
  const u = URL.parse(v);
  if (!u || !/^https?:$/.test(u.protocol)) throw new SvcError('OAUTH_CONFIG', `${what} ${v} is not an http(s) URL`);
  return u;
}

/** oauth.rate_limits (the schema's defaults filled in) as the limiter wants them. */
function rateLimits(r: ResolvedOAuth['rate_limits']): OAuthRateLimits {
  const bucket = (b: { burst: number; per_minute: number }): BucketLimits => ({ burst: b.burst, perMinute: b.per_minute });
  return { token: bucket(r.token), register: bucket(r.register), loginPerIp: bucket(r.login_per_ip), loginPerUser: bucket(r.login_per_user) };
}
