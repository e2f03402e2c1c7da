// The OAuth settings start-up refuses, checked as configuration (no network, no key parsing,
// no oidc-provider or jose import, so `svc validate` stays light). Guarantees: `svc validate`
// (manifest/compile.ts) and start-up (server.ts, server-from-config.ts, id-jag.ts) refuse the same
// settings with the same codes and messages: an oauth.issuer that is not scheme://host[:port];
// a profile.issuer other than the authorization server's; no profile scope; and in
// oauth.enterprise_issuers an issuer listed twice, not exactly one of jwks_uri and jwks, a
// jwks_uri that is not https (http only on a loopback host), an allowed client oauth.clients
// does not declare (OAUTH_CONFIG), a scope profile.scopes does not declare (SCOPE_UNDECLARED)
// — the enterprise ones each with its manifest path; and for oauth.login.upstreams (upstream
// login) a mode and list that disagree, a name used twice (DUPLICATE_NAME), not exactly one of
// issuer and the three plain OAuth 2 endpoints, an OpenID Connect provider not asked for openid,
// a URL that is not https (http only on a loopback host), both client_secret and
// client_secret_file, auth_method private_key_jwt without private_key_file or with a client
// secret, a private_key_file with another auth_method (OAUTH_CONFIG), a rule's scope profile.scopes does not declare
// (SCOPE_UNDECLARED), each at its rule's line.

import type { OAuthConfig, UpstreamLogin } from '../../core/manifest-types.gen.js';
import { isLoopbackHost } from '../../util/loopback.js';

export type IssuerConfig = NonNullable<OAuthConfig['enterprise_issuers']>[number];

/** Why `issuer` cannot be the authorization server's issuer, or undefined. */
export function issuerProblem(issuer: string): string | undefined {
  const u = URL.parse(issuer);
  if (!u || !/^https?:$/.test(u.protocol)) return `oauth.issuer ${issuer} is not an http(s) URL`;
  if (u.pathname !== '/' || u.search || issuer.endsWith('/')) return `oauth.issuer ${issuer} must be scheme://host[:port] with no path`;
  return undefined;
}

/** Why profile.issuer cannot stand beside the authorization server's `issuer`, or undefined. */
export function profileIssuerProblem(profileIssuer: string | undefined, issuer: string): string | undefined {
  return profileIssuer !== undefined && profileIssuer !== issuer
    ? `profile.issuer ${profileIssuer} differs from the authorization server's issuer ${issuer}; clients would refuse its metadata`
    : undefined;
}

export const NO_SCOPE = 'OAuth needs at least one scope in profile.scopes (a token carries at least one scope)';

export interface ConfigProblem {
  code: 'OAUTH_CONFIG' | 'SCOPE_UNDECLARED' | 'DUPLICATE_NAME';
  path: (string | number)[];
  message: string;
}

/**
 * What is wrong with oauth.enterprise_issuers, each with its manifest path: shared by `svc validate`
 * (manifest/compile.ts, every problem) and start-up (createIdJagVerifier, the first one).
 */
export function enterpriseIssuerProblems(issuers: readonly IssuerConfig[], knownClients: ReadonlySet<string>, profileScopes: readonly string[]): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const profile = new Set(profileScopes);
  const seen = new Set<string>();
  issuers.forEach((cfg, i) => {
    const path = ['oauth', 'enterprise_issuers', i];
    const add = (code: ConfigProblem['code'], message: string, ...sub: string[]) => out.push({ code, path: [...path, ...sub], message });
    if (seen.has(cfg.issuer)) add('OAUTH_CONFIG', `enterprise issuer ${cfg.issuer} is listed twice`);
    seen.add(cfg.issuer);
    if (!cfg.jwks_uri === !cfg.jwks) add('OAUTH_CONFIG', `enterprise issuer ${cfg.issuer} needs exactly one of jwks_uri and jwks`);
    for (const c of cfg.allowed_clients) {
      if (!knownClients.has(c)) add('OAUTH_CONFIG', `enterprise issuer ${cfg.issuer} allows client ${c}, which oauth.clients does not declare`, 'allowed_clients');
    }
    const bad = (cfg.scopes ?? []).filter((s) => !profile.has(s));
    if (bad.length) add('SCOPE_UNDECLARED', `enterprise issuer ${cfg.issuer} lists ${bad.join(', ')}, which profile.scopes does not declare`, 'scopes');
    if (cfg.jwks_uri) {
      const u = URL.parse(cfg.jwks_uri);
      if (!u || (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname)))) {
        add('OAUTH_CONFIG', `enterprise issuer ${cfg.issuer}: jwks_uri must be https (http only on a loopback host)`, 'jwks_uri');
      }
    }
  });
  return out;
}

/** An https URL, or http on a loopback host: what fastsvc calls out to as an OAuth client. */
export function secureUrl(url: string): boolean {
  const u = URL.parse(url);
  return !!u && (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)));
}

const PLAIN_ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint'] as const;

/**
 * What is wrong with oauth.login's upstream providers, each with its manifest path: shared by
 * `svc validate` (every problem) and start-up (auth/signin/sign-in.ts, the first one).
 */
export function signInProblems(login: OAuthConfig['login'], profileScopes: readonly string[]): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const ups: readonly UpstreamLogin[] = login?.upstreams ?? [];
  const base = ['oauth', 'login'];
  if (login?.mode === 'upstream' && !ups.length) {
    out.push({ code: 'OAUTH_CONFIG', path: [...base, 'mode'], message: 'login mode upstream needs at least one identity provider in oauth.login.upstreams' });
  }
  if (login?.mode !== 'upstream' && ups.length) {
    out.push({ code: 'OAUTH_CONFIG', path: [...base, 'upstreams'], message: `oauth.login.upstreams are used only with login mode upstream (the mode is ${login?.mode ?? 'auto'})` });
  }
  const profile = new Set(profileScopes);
  const seen = new Map<string, number>();
  ups.forEach((up, i) => {
    const path = [...base, 'upstreams', i];
    const add = (code: ConfigProblem['code'], message: string, ...sub: (string | number)[]) => out.push({ code, path: [...path, ...sub], message });
    const who = `upstream ${up.name}`;
    if (seen.has(up.name)) add('DUPLICATE_NAME', `${who} is declared twice (first at index ${seen.get(up.name)})`, 'name');
    else seen.set(up.name, i);
    if (up.issuer !== undefined) {
      const u = URL.parse(up.issuer);
      if (u && (u.search || u.hash)) add('OAUTH_CONFIG', `${who}: issuer ${up.issuer} has a query or fragment`, 'issuer');
      for (const e of ['authorization_endpoint', 'token_endpoint'] as const) {
        if (up[e] !== undefined) add('OAUTH_CONFIG', `${who}: with issuer, ${e} comes from discovery; give issuer or the endpoints, not both`, e);
      }
      if (!(up.scopes ?? ['openid']).includes('openid')) add('OAUTH_CONFIG', `${who}: an OpenID Connect provider (issuer) must be asked for the openid scope`, 'scopes');
    } else {
      const missing = PLAIN_ENDPOINTS.filter((e) => up[e] === undefined);
      if (missing.length) add('OAUTH_CONFIG', `${who}: give issuer (OpenID Connect), or ${PLAIN_ENDPOINTS.join(', ')} (plain OAuth 2); missing ${missing.join(', ')}`);
    }
    for (const e of ['issuer', ...PLAIN_ENDPOINTS] as const) {
      const v = up[e];
      if (v !== undefined && !secureUrl(v)) add('OAUTH_CONFIG', `${who}: ${e} must be https (http only on a loopback host)`, e);
    }
    if (up.client_secret !== undefined && up.client_secret_file !== undefined) add('OAUTH_CONFIG', `${who}: give client_secret or client_secret_file, not both`, 'client_secret_file');
    const hasSecret = up.client_secret !== undefined || up.client_secret_file !== undefined;
    if (up.auth_method === 'private_key_jwt') {
      if (up.private_key_file === undefined) add('OAUTH_CONFIG', `${who}: auth_method private_key_jwt needs private_key_file (this server's private key; its public key registered at the provider)`, 'auth_method');
      if (hasSecret) add('OAUTH_CONFIG', `${who}: auth_method private_key_jwt signs with private_key_file; leave client_secret and client_secret_file out`, up.client_secret !== undefined ? 'client_secret' : 'client_secret_file');
    } else if (up.private_key_file !== undefined) {
      add('OAUTH_CONFIG', `${who}: private_key_file is used only with auth_method private_key_jwt (the method is ${up.auth_method ?? 'client_secret_basic'})`, 'private_key_file');
    }
    up.rules.forEach((r, j) => {
      r.scopes.forEach((s, k) => {
        if (!profile.has(s)) add('SCOPE_UNDECLARED', `${who} rule ${j + 1} grants scope ${s}, which profile.scopes does not declare`, 'rules', j, 'scopes', k);
      });
    });
  });
  return out;
}
