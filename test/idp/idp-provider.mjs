// The corporate IdP's oidc-provider configuration. Guarantees:
// - OIDC discovery at {issuer}/.well-known/openid-configuration (and the RFC 8414 document),
//   endpoints under /oauth2/ (not fastsvc's paths: a client must read discovery);
// - ID tokens carry sub, groups and org_id (scope openid), email and email_verified (scope
//   email), name and preferred_username (scope profile), signed with the current key;
// - access tokens for a resource indicator have `aud` = that indicator; their format is the
//   token request's `token_format` (jwt | opaque, a test hook), else the registered resource's
//   `format`, else `default_format`; JWTs are RFC 9068 (`typ: at+jwt`, iss, aud, sub,
//   client_id, scope, exp, iat, jti); user tokens also carry email, groups and org_id (in the
//   JWT, or in the introspection answer of an opaque token); without a resource (and no
//   default_resource) the access token is opaque and only good for userinfo;
// - a registered resource grants only its `scopes`; any other resource grants every scope
//   asked for (the IdP does not know fastsvc's scopes), OIDC scopes excepted;
// - /oauth2/introspect (RFC 7662) answers confidential clients about any opaque token;
//   /oauth2/revoke (RFC 7009); client_credentials; RFC 8693 token exchange (token-exchange.mjs); refresh tokens for every client allowed the
//   grant (rotated for public clients); dynamic registration open (RFC 7591), where a
//   registered `scope` is not kept as a restriction; PKCE S256 required for public clients.

import Provider, { errors } from 'oidc-provider';
import { registerTokenExchange, TOKEN_EXCHANGE } from './token-exchange.mjs';

export const ROUTES = {
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  jwks: '/oauth2/keys',
  introspection: '/oauth2/introspect',
  revocation: '/oauth2/revoke',
  userinfo: '/oauth2/userinfo',
  registration: '/oauth2/register',
  end_session: '/oauth2/logout',
  pushed_authorization_request: '/oauth2/par',
};

const OIDC_SCOPES = ['openid', 'offline_access', 'email', 'profile'];
const OIDC = new Set(OIDC_SCOPES);

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A Provider for the state given. d: { issuer, config, keys, store, cookieKeys, resources (Map
 * indicator → {format, scopes, ttl}), seen (Map indicator → Set of scopes asked for), log }.
 */
export function buildProvider(d) {
  const { config, keys } = d;
  const account = (sub) => config.accounts.find((a) => a.sub === sub);

  /** API scopes asked for in this request (OIDC ones excepted). */
  const asked = (ctx) => String(ctx.oidc?.params?.scope ?? '').split(' ').filter((s) => s && !OIDC.has(s));

  /** A resource indicator's server info: its registered scopes (else every API scope asked for so far), format and lifetime. */
  const serverInfo = async (ctx, indicator) => {
    const registered = d.resources.get(indicator);
    let scope;
    if (registered?.scopes) {
      scope = registered.scopes.join(' ');
    } else {
      const seen = d.seen.get(indicator) ?? new Set();
      for (const s of asked(ctx)) seen.add(s);
      d.seen.set(indicator, seen);
      scope = [...seen].join(' ');
    }
    const wanted = ctx.oidc?.body?.token_format;
    if (wanted !== undefined && wanted !== 'jwt' && wanted !== 'opaque') {
      throw new errors.InvalidRequest('token_format must be jwt or opaque');
    }
    const format = wanted ?? registered?.format ?? config.default_format;
    return {
      scope,
      audience: indicator,
      accessTokenTTL: registered?.ttl ?? config.access_token_ttl,
      accessTokenFormat: format,
      ...(format === 'jwt' && { jwt: { sign: { alg: keys.alg } } }),
    };
  };

  const provider = new Provider(d.issuer, {
    adapter: d.store.adapter,
    clients: config.clients.map((c) => structuredClone(c)),
    jwks: keys.privateJwks(),
    cookies: { keys: d.cookieKeys },
    routes: ROUTES,
    scopes: OIDC_SCOPES,
    claims: {
      openid: ['sub', 'groups', 'org_id'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: keys.alg,
    },
    enabledJWA: { idTokenSigningAlgValues: [keys.alg] },
    extraClientMetadata: {
      properties: ['scope'],
      validator: (ctx, key, _value, metadata) => {
        if (key === 'scope' && ctx?.oidc?.route === 'registration') delete metadata.scope;
      },
    },
    findAccount: async (_ctx, sub) => {
      const a = account(sub);
      if (!a) return undefined;
      return {
        accountId: a.sub,
        claims: async () => ({
          sub: a.sub,
          email: a.email,
          email_verified: a.email_verified,
          name: a.name,
          preferred_username: a.username,
          groups: a.groups ?? [],
          org_id: a.org_id,
        }),
      };
    },
    // User tokens carry who the person is; a machine token's subject is its client (in the
    // JWT by RFC 9068, and in an opaque token's introspection answer alike).
    // An exchanged token (RFC 8693) names the client that acted for the subject (act, section 4.1).
    extraTokenClaims: async (_ctx, token) => {
      if (!token.accountId) return token.kind === 'ClientCredentials' ? { sub: token.clientId } : undefined;
      const act = token.gty === TOKEN_EXCHANGE ? { act: { sub: token.clientId } } : undefined;
      const a = account(token.accountId);
      return a ? { ...act, email: a.email, groups: a.groups ?? [], org_id: a.org_id } : act;
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => client.clientAuthMethod !== 'none' || token.clientId === client.clientId,
      },
      revocation: { enabled: true },
      registration: { enabled: true, initialAccessToken: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? config.default_resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: (ctx, indicator) => serverInfo(ctx, indicator),
      },
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    interactions: { url: (_ctx, interaction) => `${config.issuer_path}/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? config.access_token_ttl,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? config.access_token_ttl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
      Session: 8 * 3600,
      Interaction: 600,
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><title>Acme sign-in error</title><h1>Sign-in failed</h1><p id="error">${esc(out.error)}: ${esc(out.error_description ?? '')}</p>`;
    },
  });
  registerTokenExchange(provider, { issuer: d.issuer, keys, serverInfo, log: d.log });
  return provider;
}
