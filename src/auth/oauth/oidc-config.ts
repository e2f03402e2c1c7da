// The oidc-provider configuration fastsvc runs. Guarantees: authorization code + PKCE
// S256 only; refresh tokens for every client allowed the grant, rotated on every use,
// living at most refresh_token_ttl from the code exchange; opaque access tokens whose
// audience is the server's origin for every accepted resource indicator, but a named endpoint's
// (origin/mcp/NAME, …), whose token is for that endpoint only (others get invalid_target); any revocation revokes the whole grant; a dynamically registered
// client's `scope` is not a restriction; DPoP only when oauth.dpop asks for it (bound
// tokens for every client when required, nonces from the shared secret when on); no
// OIDC extras (userinfo, logout, PAR, dev interactions) are on. With upstream login every
// authorization signs in at the provider again and shows the consent page (no login or
// consent is reused), a code exchange or refresh needs the upstream grant side to still
// admit the person, and access tokens record the provider and the rule's claims.

import { errors, interactionPolicy, type Configuration, type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';
import type { ResolvedOAuth } from '../../core/config.js';
import type { Accounts } from './accounts.js';
import type { Cimd } from './cimd.js';
import type { GrantSide } from '../signin/grants.js';
import { rememberKey } from './interactions.js';
import { AUTH_METHODS } from './metadata.js';
import { authorizationErrorMessage, errorPage, PAGE_HEADERS } from './pages.js';
import type { Adapter, OAuthKeys, OAuthProvider } from '../../core/oauth-provider.js';

export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  registration: '/register',
  revocation: '/revoke',
  introspection: '/introspect',
  jwks: '/jwks',
} as const;

export interface OidcConfigDeps {
  oauth: ResolvedOAuth;
  mode: 'auto' | 'users' | 'upstream';
  scopes: readonly string[];
  audience: string;
  acceptResource(indicator: string): boolean;
  /** The audience of a token for an accepted resource indicator: the origin, or a named endpoint's origin/mcp/NAME. */
  audienceOf(indicator: string): string | undefined;
  keys: OAuthKeys;
  provider: OAuthProvider;
  accounts: Accounts;
  clients: ClientMetadata[];
  isDynamic(clientId: string): boolean;
  remembered: Adapter;
  /** oauth.dpop allowed/required; nonceSecret when oauth.dpop_nonce. */
  dpop?: { required: boolean; nonceSecret?: Buffer };
  cimd: Cimd;
  /** login.mode upstream: who the grants of upstream logins belong to. */
  signIn?: Pick<GrantSide, 'hasAccount' | 'tokenExtra'>;
}

const SESSION_TTL = 24 * 3600;
const INTERACTION_TTL = 600;

export function oidcConfiguration(d: OidcConfigDeps): Configuration {
  const { oauth } = d;
  const policy = interactionPolicy.base();
  if (d.mode === 'users') {
    policy.get('consent')!.checks.add(new interactionPolicy.Check('dynamic_client', 'dynamically registered clients always ask for consent',
      (ctx) => d.isDynamic(ctx.oidc.client!.clientId) && !ctx.oidc.result?.consent));
  }
  const signIn = d.mode === 'upstream' ? d.signIn : undefined;
  if (signIn) {
    policy.get('login')!.checks.add(new interactionPolicy.Check('upstream_login', 'every authorization signs in at the identity provider',
      (ctx) => !ctx.oidc.result?.login));
    policy.get('consent')!.checks.add(new interactionPolicy.Check('upstream_consent', 'every authorization through an identity provider asks for consent',
      (ctx) => !ctx.oidc.result?.consent));
  }
  return {
    adapter: (name: string) => d.provider.adapter(name),
    clients: d.clients,
    jwks: d.keys.jwks as Configuration['jwks'],
    cookies: { keys: d.keys.cookieKeys },
    routes: ROUTES,
    scopes: [...d.scopes],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: [...AUTH_METHODS],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
      ...(d.dpop?.required && { dpop_bound_access_tokens: true }),
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // A registering MCP client names the scope of its first request; it later steps up
    // (403 insufficient_scope → new authorization with more scopes). So a dynamically
    // registered client's `scope` is not kept as a restriction: profile.scopes, the user
    // and the consent page bound what it gets. Pre-provisioned clients keep theirs.
    extraClientMetadata: {
      properties: ['scope'],
      validator: (ctx, key, _value, metadata) => {
        if (key === 'scope' && ctx?.oidc?.route === 'registration') delete metadata.scope;
      },
    },
    fetch: d.cimd.fetch,
    features: {
      clientIdMetadataDocument: { enabled: d.cimd.enabled, ack: 'draft-02', allowFetch: async (_ctx, clientId) => d.cimd.allowFetch(clientId) },
      devInteractions: { enabled: false },
      dPoP: d.dpop
        ? { enabled: true, ...(d.dpop.nonceSecret && { nonceSecret: d.dpop.nonceSecret }), requireNonce: () => !!d.dpop?.nonceSecret }
        : { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: false },
      registration: { enabled: oauth.registration.enabled, initialAccessToken: false, issueRegistrationAccessToken: false },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => client.clientAuthMethod !== 'none' || token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? d.audience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          const audience = d.audienceOf(indicator);
          if (audience === undefined) throw new errors.InvalidTarget(`${indicator} is not a resource of this server`);
          return { scope: d.scopes.join(' '), audience, accessTokenTTL: oauth.access_token_ttl, accessTokenFormat: 'opaque' };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}`, policy },
    // Upstream: during an authorization the session's subject signed in just now (upstream_login);
    // a code exchange or refresh (token) asks the grant side whether the person is still admitted.
    findAccount: async (_ctx, sub, token) => {
      const known = signIn ? !token || await signIn.hasAccount(sub, token.grantId) : d.accounts.has(sub);
      return known ? { accountId: sub, claims: async () => ({ sub }) } : undefined;
    },
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { oidc } = ctx;
      const accountId = oidc.session?.accountId;
      const clientId = oidc.client!.clientId;
      if (!accountId) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? (signIn ? undefined : oidc.session!.grantIdFor(clientId)
        ?? (await d.remembered.find(rememberKey(accountId, clientId)))?.grantId);
      const grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
      return grant && grant.accountId === accountId && grant.clientId === clientId ? grant : undefined;
    },
    // Keep what the grant put on the token (the jwt-bearer grant records the identity provider and
    // claims); an upstream login's grant gives its provider and claims.
    extraTokenClaims: async (_ctx, token) => (token as { extra?: Record<string, unknown> }).extra ?? signIn?.tokenExtra((token as { grantId?: string }).grantId),
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    expiresWithSession: async () => false,
    revokeGrantPolicy: () => true,
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? oauth.access_token_ttl,
      AuthorizationCode: oauth.code_ttl,
      RefreshToken: (ctx) => ctx?.oidc?.entities.RotatedRefreshToken?.remainingTTL ?? oauth.refresh_token_ttl,
      Grant: oauth.refresh_token_ttl,
      Session: SESSION_TTL,
      Interaction: INTERACTION_TTL,
      IdToken: oauth.access_token_ttl,
    },
    clientBasedCORS: (ctx, origin, client) =>
      origin !== 'null' && client.clientAuthMethod === 'none' && client.redirectUris!.some((u) => URL.parse(u)?.origin === origin),
    renderError: async (ctx, out) => {
      ctx.set({ ...PAGE_HEADERS });
      ctx.body = errorPage('Authorization failed', authorizationErrorMessage(out, ctx.oidc?.params));
    },
  };
}
