// fastsvc as the OAuth client of one identity provider people sign in at (oauth.login.upstreams[]), with
// oauth4webapi. Guarantees: every call to the provider (discovery, keys, code exchange,
// userinfo, refresh) gives up after the provider's timeout_ms; only https, or http on a loopback
// host (auth/oauth/oauth-checks.ts refuses the rest before this runs); an OpenID Connect provider's
// metadata must name exactly the configured issuer and is cached an hour (a failure is not
// cached); every authorization request carries PKCE S256 and state, and, for OpenID Connect, a
// nonce; a code exchange for an OpenID Connect provider needs an ID token whose iss is the
// issuer, aud contains our client_id (azp is ours when there are several), exp and iat are
// current, nonce is the one sent, and whose signature verifies against the provider's JWKS
// under an asymmetric algorithm (never none or HMAC); a plain OAuth 2 provider's identity is
// its userinfo answer; the code exchange and refresh authenticate this server as the provider's
// `auth_method` says — client_secret_basic (the default, the id and secret form-encoded as RFC
// 6749 Appendix B says, so `-` stays `-`), client_secret_post or private_key_jwt (a fresh
// assertion signed with private_key_file) — or as a public client (PKCE only) when it has neither
// secret nor key (outbound/client-auth.ts), and a refused exchange whose provider does not list
// that method in token_endpoint_auth_methods_supported says so; every failure is a ProviderError
// with a stable reason (the audit log's) and a message naming no token, code, secret or claim
// value (an unexpected error by its name only).

import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ResolvedSignInProvider } from '../../core/config.js';
import { clientAuth, readPrivateKey, type ClientCredential } from '../../outbound/client-auth.js';
import type { ProviderClaims } from './rules.js';

export type ProviderReason =
  | 'upstream_error' | 'upstream_response_invalid' | 'upstream_code_refused' | 'upstream_id_token_invalid'
  | 'upstream_userinfo_invalid' | 'upstream_unreachable' | 'upstream_refresh_refused';

/** A refusal or failure of the upstream step: `reason` is stable (audit), `message` is for the log. */
export class ProviderError extends Error {
  constructor(readonly reason: ProviderReason, message: string, readonly detail: Record<string, string> = {}) {
    super(message);
  }
}

/** The provider's tokens for one person: what a later call on their behalf needs. */
export interface ProviderTokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  /** Epoch seconds, when the provider said how long the access token lives. */
  expires_at?: number;
  scope?: string;
}

export interface AuthorizationParams {
  state: string;
  /** OpenID Connect only. */
  nonce?: string;
  verifier: string;
}

export interface ProviderClient {
  readonly cfg: ResolvedSignInProvider;
  /** OpenID Connect (issuer) rather than plain OAuth 2. */
  readonly oidc: boolean;
  /** This server's callback for the provider: ISSUER/interaction/callback/NAME. */
  readonly redirectUri: string;
  /** Where to send the browser. */
  authorizationUrl(p: AuthorizationParams): Promise<URL>;
  /** The claims the provider vouches for and its tokens, from the URL the browser came back to. */
  finish(callback: URL, p: AuthorizationParams): Promise<{ claims: ProviderClaims; tokens: ProviderTokens }>;
  /** Fresh tokens for a refresh token (the provider may rotate it). */
  refresh(refreshToken: string): Promise<ProviderTokens>;
}

/** Signature algorithms accepted on ID tokens: asymmetric only. */
export const ID_TOKEN_ALGS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];
const METADATA_TTL_MS = 3600_000;
const SKEW = 30;

export const callbackPath = (name: string) => `/interaction/callback/${name}`;

/** A credential file of a provider that cannot be used: `field` names it (client_secret_file, private_key_file). */
export class CredentialFileError extends Error {
  constructor(readonly field: 'client_secret_file' | 'private_key_file', message: string) {
    super(message);
  }
}

/**
 * How this server authenticates at the provider: its secret as auth_method says, its private key (private_key_jwt), or
 * nothing (no secret, no key: a public client). Files resolve against `manifestDir`; one that cannot be used throws
 * CredentialFileError.
 */
export function providerCredential(cfg: ResolvedSignInProvider, manifestDir: string): ClientCredential {
  const clientId = cfg.client_id;
  if (cfg.auth_method === 'private_key_jwt' && cfg.private_key_file !== undefined) {
    try {
      return { method: 'private_key_jwt', clientId, key: readPrivateKey(resolve(manifestDir, cfg.private_key_file)) };
    } catch (e) {
      throw new CredentialFileError('private_key_file', (e as Error).message);
    }
  }
  let secret = cfg.client_secret;
  if (secret === undefined && cfg.client_secret_file !== undefined) {
    try {
      secret = readFileSync(resolve(manifestDir, cfg.client_secret_file), 'utf8').trim();
    } catch (e) {
      throw new CredentialFileError('client_secret_file', `cannot read ${cfg.client_secret_file}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  }
  if (secret === undefined) return { method: 'none', clientId };
  return { method: cfg.auth_method === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic', clientId, secret };
}

export function createProviderClient(cfg: ResolvedSignInProvider, o: { issuer: string; manifestDir: string }): ProviderClient {
  const oidc = cfg.issuer !== undefined;
  const redirectUri = `${o.issuer}${callbackPath(cfg.name)}`;
  const credential = providerCredential(cfg, o.manifestDir);
  const client: oauth.Client = { client_id: cfg.client_id, [oauth.clockTolerance]: SKEW };
  const http = (url: string | undefined) => ({
    signal: () => AbortSignal.timeout(cfg.timeout_ms),
    ...(url?.startsWith('http:') && { [oauth.allowInsecureRequests]: true }),
  });

  // The provider's metadata: discovered (OpenID Connect) or as configured (plain OAuth 2).
  let cached: { as: oauth.AuthorizationServer; keys?: JWTVerifyGetKey; until: number } | undefined;
  async function metadata() {
    if (cached && cached.until > Date.now()) return cached;
    if (!oidc) {
      cached = {
        as: { issuer: new URL(cfg.authorization_endpoint!).origin, authorization_endpoint: cfg.authorization_endpoint, token_endpoint: cfg.token_endpoint, userinfo_endpoint: cfg.userinfo_endpoint },
        until: Infinity,
      };
      return cached;
    }
    const issuer = new URL(cfg.issuer!);
    const as = await guard('upstream_unreachable', 'discovery', async () => oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http(cfg.issuer) })));
    if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) throw new ProviderError('upstream_response_invalid', `${cfg.name}: its discovery document lacks authorization_endpoint, token_endpoint or jwks_uri`);
    const keys = createRemoteJWKSet(new URL(as.jwks_uri), { timeoutDuration: cfg.timeout_ms, cooldownDuration: 30_000 });
    cached = { as, keys, until: Date.now() + METADATA_TTL_MS };
    return cached;
  }
  const auth = (as: oauth.AuthorizationServer): oauth.ClientAuth => clientAuth(credential, as.token_endpoint!);
  /** Said of a refused exchange when the provider's metadata lists auth methods and not this one. */
  const methodHint = (as: oauth.AuthorizationServer): string => {
    const offered = as.token_endpoint_auth_methods_supported;
    return offered && credential.method !== 'none' && !offered.includes(credential.method)
      ? ` (this server authenticates with ${credential.method}; the provider lists ${offered.join(', ')}: set auth_method)` : '';
  };

  return {
    cfg,
    oidc,
    redirectUri,

    async authorizationUrl(p) {
      const { as } = await metadata();
      const u = new URL(as.authorization_endpoint!);
      u.searchParams.set('response_type', 'code');
      u.searchParams.set('client_id', cfg.client_id);
      u.searchParams.set('redirect_uri', redirectUri);
      u.searchParams.set('scope', cfg.scopes.join(' '));
      u.searchParams.set('state', p.state);
      u.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(p.verifier));
      u.searchParams.set('code_challenge_method', 'S256');
      if (p.nonce !== undefined) u.searchParams.set('nonce', p.nonce);
      return u;
    },

    async finish(callback, p) {
      const { as, keys } = await metadata();
      let params: URLSearchParams;
      try {
        // A plain OAuth 2 provider has no issuer of ours to compare an `iss` with.
        const given = new URL(callback);
        if (!oidc) given.searchParams.delete('iss');
        params = oauth.validateAuthResponse(as, client, given, p.state);
      } catch (e) {
        if (e instanceof oauth.AuthorizationResponseError) throw new ProviderError('upstream_error', `${cfg.name} answered ${e.error}`, { error: e.error.slice(0, 64) });
        throw new ProviderError('upstream_response_invalid', `${cfg.name}: the callback is not a valid authorization response (${(e as Error).message})`);
      }
      const tokens = await guard('upstream_code_refused', 'code exchange', async () => {
        const res = await oauth.authorizationCodeGrantRequest(as, client, auth(as), params, redirectUri, p.verifier, http(as.token_endpoint));
        return oauth.processAuthorizationCodeResponse(as, client, res, oidc ? { expectedNonce: p.nonce ?? oauth.expectNoNonce, requireIdToken: true } : undefined);
      }, methodHint(as));
      let claims: Record<string, unknown> = {};
      if (oidc) {
        claims = { ...oauth.getValidatedIdTokenClaims(tokens) };
        await verifySignature(tokens.id_token!, keys!, as, cfg);
      }
      if (!oidc || cfg.userinfo) {
        const info = await userinfo(as, tokens.access_token, oidc ? String(claims.sub) : undefined);
        claims = { ...info, ...claims };
      }
      return { claims, tokens: tokenSet(tokens) };
    },

    async refresh(refreshToken) {
      const { as } = await metadata();
      const tokens = await guard('upstream_refresh_refused', 'refresh', async () => {
        const res = await oauth.refreshTokenGrantRequest(as, client, auth(as), refreshToken, http(as.token_endpoint));
        return oauth.processRefreshTokenResponse(as, client, res);
      }, methodHint(as));
      return { refresh_token: refreshToken, ...tokenSet(tokens) };
    },
  };

  async function userinfo(as: oauth.AuthorizationServer, accessToken: string, sub: string | undefined): Promise<Record<string, unknown>> {
    const endpoint = cfg.userinfo_endpoint ?? as.userinfo_endpoint;
    if (!endpoint) throw new ProviderError('upstream_response_invalid', `${cfg.name}: userinfo is on but the provider names no userinfo_endpoint`);
    return guard('upstream_userinfo_invalid', 'userinfo', async () => {
      if (sub !== undefined) {
        const res = await oauth.userInfoRequest({ ...as, userinfo_endpoint: endpoint }, client, accessToken, http(endpoint));
        return { ...(await oauth.processUserInfoResponse({ ...as, userinfo_endpoint: endpoint }, client, sub, res)) };
      }
      // A plain OAuth 2 provider's user endpoint (GitHub's /user): a JSON object, no `sub` required.
      const headers = new Headers({ accept: 'application/json', 'user-agent': 'fastsvc' });
      const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(endpoint), headers, null, http(endpoint));
      if (res.status !== 200) throw new ProviderError('upstream_userinfo_invalid', `${cfg.name}: its userinfo endpoint answered ${res.status}`);
      const body: unknown = await res.json();
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ProviderError('upstream_userinfo_invalid', `${cfg.name}: its userinfo answer is not a JSON object`);
      return body as Record<string, unknown>;
    });
  }

  /** Run a step against the provider; its failures as ProviderErrors (`refused`: the provider's own refusal; `hint` added to a client authentication refusal). */
  async function guard<T>(refused: ProviderReason, step: string, op: () => Promise<T>, hint = ''): Promise<T> {
    try {
      return await op();
    } catch (e) {
      if (e instanceof ProviderError) throw e;
      const name = (e as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new ProviderError('upstream_unreachable', `${cfg.name}: no answer to the ${step} within ${cfg.timeout_ms} ms`);
      if (e instanceof oauth.ResponseBodyError) {
        const clientRefused = e.error === 'invalid_client' || e.error === 'unauthorized_client';
        throw new ProviderError(refused, `${cfg.name} refused the ${step}: ${e.error}${clientRefused ? hint : ''}`, { error: e.error.slice(0, 64) });
      }
      if (e instanceof oauth.OperationProcessingError) {
        const claim = (e.cause as { claim?: unknown } | undefined)?.claim;
        if (typeof claim === 'string' || e.code === oauth.JWT_TIMESTAMP_CHECK) {
          throw new ProviderError('upstream_id_token_invalid', `${cfg.name}: the ID token is not valid: ${e.message}`, { claim: typeof claim === 'string' ? claim : 'exp' });
        }
        throw new ProviderError(step === 'userinfo' ? 'upstream_userinfo_invalid' : 'upstream_response_invalid', `${cfg.name}: the ${step} answer is not valid: ${e.message}`);
      }
      if (e instanceof TypeError && /fetch failed/.test(e.message)) throw new ProviderError('upstream_unreachable', `${cfg.name}: the ${step} failed: ${causeOf(e)}`);
      // Only the error's name: a parser's message may quote the answer it could not read.
      throw new ProviderError('upstream_response_invalid', `${cfg.name}: the ${step} failed (${(e as Error)?.name ?? 'error'})`);
    }
  }
}

async function verifySignature(idToken: string, keys: JWTVerifyGetKey, as: oauth.AuthorizationServer, cfg: ResolvedSignInProvider): Promise<void> {
  const offered = as.id_token_signing_alg_values_supported;
  try {
    await jwtVerify(idToken, keys, {
      issuer: as.issuer, audience: cfg.client_id, clockTolerance: SKEW,
      algorithms: offered ? ID_TOKEN_ALGS.filter((a) => offered.includes(a)) : ID_TOKEN_ALGS,
    });
  } catch (e) {
    if (e instanceof joseErrors.JWKSTimeout) throw new ProviderError('upstream_unreachable', `${cfg.name}: its keys could not be fetched within ${cfg.timeout_ms} ms`);
    const why = e instanceof joseErrors.JWSSignatureVerificationFailed ? 'signature verification failed'
      : e instanceof joseErrors.JWKSNoMatchingKey ? 'no key of the provider matches'
      : e instanceof joseErrors.JOSEAlgNotAllowed ? 'signature algorithm not allowed' : (e as Error).message.slice(0, 200);
    throw new ProviderError('upstream_id_token_invalid', `${cfg.name}: the ID token is not valid: ${why}`, { claim: 'signature' });
  }
}

function tokenSet(t: oauth.TokenEndpointResponse): ProviderTokens {
  return {
    access_token: t.access_token,
    token_type: t.token_type,
    ...(t.refresh_token && { refresh_token: t.refresh_token }),
    ...(typeof t.expires_in === 'number' && { expires_at: Math.floor(Date.now() / 1000) + t.expires_in }),
    ...(t.scope && { scope: t.scope }),
  };
}

function causeOf(e: TypeError): string {
  const c = (e as { cause?: { code?: string; message?: string } }).cause;
  return c?.code ?? c?.message?.slice(0, 100) ?? 'network error';
}
