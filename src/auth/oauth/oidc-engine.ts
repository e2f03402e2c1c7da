// The engine of the authorization server (server.ts): oidc-provider, configured (oidc-config.ts) over the
// keys, the store's adapters, DPoP, ID-JAG and, with login.mode upstream, sign-in through identity
// providers (auth/signin/). Guarantees: keys are the store's (created once, server-keys.ts); every adapter
// oidc-provider asks for is the store's, guarded (store-guard.ts: a replay lost to another replica revokes
// the grant) and watched by the verified-token cache (verified-tokens.ts), so a revocation made by any
// replica on a shared store drops this process's cached tokens of that grant and reaches onRevoked()
// listeners; a grant's sign-in record goes when the grant goes; oauth4webapi is loaded only in upstream
// mode; one nonce secret serves oidc-provider's token endpoint and the protected routes' DPoP verifier
// (dpop.ts); with oauth.dpop required every client's tokens are bound and /token wants a proof before
// anything else; the clients an enterprise issuer allows get the jwt-bearer grant (id-jag.ts); an
// authorization request without `scope` asks for the client's allowed scopes (RFC 6749 §3.3); Koa reads
// X-Forwarded-* (routes.ts leaves it only what trusted proxies said); what the engine does is logged and
// reported to the Observer (oidc-events.ts).

import type { IncomingMessage } from 'node:http';
import { hkdfSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';
import type { Logger } from 'pino';
import type { ResolvedOAuth } from '../../core/config.js';
import type { Adapter, OAuthKeys, OAuthProvider } from '../../core/oauth-provider.js';
import { scopeOf } from '../../core/request-scope.js';
import type { Caller } from '../../http/forwarded.js';
import type { Observer } from '../../observe/observer.js';
import { DpopVerifier, type DpopMode } from '../dpop.js';
import type { GrantSide } from '../signin/grants.js';
import type { SignIn } from '../signin/sign-in.js';
import type { Accounts } from './accounts.js';
import { createCimd, type Cimd } from './cimd.js';
import type { Clients } from './clients.js';
import { EngineRequests } from './engine-storage.js';
import { logEvents, observeEvents } from './oidc-events.js';
import { createIdJagVerifier, JWT_BEARER, type IdJagVerifier } from './id-jag.js';
import { registerIdJagGrant } from './id-jag-grant.js';
import { oidcConfiguration } from './oidc-config.js';
import { loadOrCreateKeys } from './server-keys.js';
import { guardAdapter } from './store-guard.js';
import { VerifiedTokens } from './verified-tokens.js';
import { endpointResources, type EndpointResources } from '../resource-metadata.js';

export interface OidcEngineOptions {
  /** The oauth section with the schema's defaults applied. */
  oauth: ResolvedOAuth;
  /** Issuer exactly as published. */
  issuer: string;
  /** The tokens' audience: the public origin. */
  audience: string;
  /** Protected routes: audience + route is also accepted as a resource indicator. */
  protectedRoutes: readonly string[];
  /** The named endpoints: a resource indicator naming one (audience + /mcp/NAME …) gets a token for that endpoint only. */
  endpoints?: EndpointResources;
  scopes: readonly string[];
  /** The store, as the server was given it. */
  provider: OAuthProvider;
  clients: Clients;
  accounts: Accounts;
  manifestDir: string;
  /** Shown on the sign-in pages. */
  name: string;
  caller: (req: IncomingMessage) => Caller;
  log: Logger;
  observer: Observer;
}

export interface OidcEngine {
  provider: Provider;
  keys: OAuthKeys;
  /** The RememberedConsent adapter (interactions.ts reads and writes it). */
  remembered: Adapter;
  cimd: Cimd;
  idJag: IdJagVerifier;
  /** login.mode upstream: the browser flow and the grant side; signInGrants is there before the engine is. */
  signIn?: SignIn;
  signInGrants?: GrantSide;
  verified: VerifiedTokens;
  /** A local account, or the subject of a still-trusted enterprise identity provider (ID-JAG) or sign-in provider. */
  knownSubject(sub: string, gty: string | undefined, extra: Record<string, unknown> | undefined): boolean;
  onRevoked(listener: (grantId: string) => void): void;
  dpopMode: DpopMode;
  /** The DPoP verifier of proofs made for `origin`, none while oauth.dpop is off. */
  dpopFor(origin: string): DpopVerifier | undefined;
  /** oidc-provider's request handler, and the storage it answers in (engine-storage.ts). */
  callback: ReturnType<Provider['callback']>;
  requests: EngineRequests;
}

export async function createOidcEngine(o: OidcEngineOptions): Promise<OidcEngine> {
  const { oauth, issuer, audience, clients, accounts, log, observer } = o;
  const mode = oauth.login.mode;
  const remembered = o.provider.adapter('RememberedConsent');
  const keys = await loadOrCreateKeys(o.provider);
  // Loaded only in upstream mode: oauth4webapi is not needed otherwise.
  const signInParts = mode === 'upstream'
    ? (await import('../signin/sign-in.js')).createSignIn({
      oauth, issuer, scopes: o.scopes, adapter: (m) => o.provider.adapter(m), cookieKeys: keys.cookieKeys,
      manifestDir: o.manifestDir, serverName: o.name, log, observer, clientIp: (req) => o.caller(req).ip,
    })
    : undefined;
  const signInGrants = signInParts?.grants;
  const dpopMode = oauth.dpop ?? 'off';
  const dpopNonces = oauth.dpop_nonce ?? false;
  // One nonce secret for oidc-provider's token endpoint and the protected routes (dpop.ts).
  const nonceSecret = Buffer.from(hkdfSync('sha256', Buffer.from(keys.cookieKeys[0]!, 'base64url'), Buffer.alloc(0), 'fastsvc dpop nonce', 32));
  const dpopFor = (origin: string) => (dpopMode === 'off' ? undefined : new DpopVerifier({ mode: dpopMode, nonces: dpopNonces, origin, secret: nonceSecret }));
  if (dpopMode === 'required') for (const c of clients.metadata) c.dpop_bound_access_tokens = true;
  const resources = o.endpoints ?? endpointResources(audience, o.protectedRoutes, () => undefined);
  const acceptResource = (indicator: string) => resources.resolve(indicator) !== undefined;
  const idJag = createIdJagVerifier({ issuers: oauth.enterprise_issuers ?? [], issuer, acceptResource, scopes: o.scopes, knownClients: clients.staticIds });
  for (const c of clients.metadata) if (idJag.clientIds.has(c.client_id)) c.grant_types = [...c.grant_types!, JWT_BEARER];

  const knownSubject = (sub: string, gty: string | undefined, extra: Record<string, unknown> | undefined) =>
    (gty === JWT_BEARER ? idJag.trusts(extra?.idp) : extra?.upstream !== undefined ? !!signInGrants?.trusts(extra.upstream) : accounts.has(sub));
  const revokedListeners: ((grantId: string) => void)[] = [];
  const verified = new VerifiedTokens((grantId) => revokedListeners.forEach((l) => l(grantId)));
  o.provider.watch?.({ revoked: (grantId) => verified.revoked(grantId), listening: (up) => verified.trust(up) });
  const adapters = new Map<string, Adapter>();
  const adapterOf = (model: string): Adapter => {
    let a = adapters.get(model);
    if (!a) {
      a = verified.wrap(model, guardAdapter(model, o.provider.adapter(model), adapterOf));
      if (model === 'Grant' && signInGrants) a = withSignInRecord(a, signInGrants.destroy);
      adapters.set(model, a);
    }
    return a;
  };
  const store: OAuthProvider = {
    adapter: adapterOf,
    loadKeys: () => o.provider.loadKeys(),
    saveKeys: (k) => o.provider.saveKeys(k),
    close: () => o.provider.close(),
  };
  const cimd = createCimd(oauth.client_id_metadata_documents, o.manifestDir, log);
  const provider = new Provider(issuer, oidcConfiguration({
    oauth, mode, scopes: o.scopes, audience, acceptResource, audienceOf: (indicator) => resources.resolve(indicator)?.audience, keys, provider: store, accounts, clients: clients.metadata, isDynamic: clients.isDynamic, remembered, cimd, signIn: signInGrants,
    dpop: dpopMode === 'off' ? undefined : { required: dpopMode === 'required', nonceSecret: dpopNonces ? nonceSecret : undefined },
  }));
  if (idJag.clientIds.size) registerIdJagGrant(provider, { verifier: idJag, audience, ttl: oauth.access_token_ttl, dpop: dpopFor(new URL(issuer).origin) });
  // Koa reads X-Forwarded-*; mount() leaves it only what trusted proxies said.
  provider.proxy = true;
  const signIn: SignIn | undefined = signInParts && { ...signInParts.grants, ...signInParts.flow(provider) };
  logEvents(provider, log);
  observeEvents(provider, observer, (req) => scopeOf(req, o.caller(req).ip));
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
      if (client) ctx.query = { ...ctx.query, scope: client.scope ?? o.scopes.join(' ') };
    }
    await next();
  });
  const callback = provider.callback();
  const requests = new EngineRequests(); // its AsyncLocalStorage on only while it answers (engine-storage.ts)
  return {
    provider, keys, remembered, cimd, idJag, signIn, signInGrants, verified, knownSubject, dpopMode, dpopFor, callback, requests,
    onRevoked: (listener) => void revokedListeners.push(listener),
  };
}

/** The Grant adapter, also forgetting a grant's sign-in record when the grant is destroyed. */
function withSignInRecord(a: Adapter, forget: (grantId: string) => Promise<void>): Adapter {
  return { ...a, destroy: async (id) => void (await Promise.all([a.destroy(id), forget(id)])) };
}
