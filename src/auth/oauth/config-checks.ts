// The OAuth settings start-up refuses, checked as configuration (no network, no key parsing,
// no oidc-provider or jose import, so `svc validate` stays light). Guarantees: `svc validate`
// (manifest/compile.ts) and start-up (server.ts, from-config.ts, id-jag.ts) refuse the same
// settings with the same codes and messages: an oauth.issuer that is not scheme://host[:port];
// a profile.issuer other than the authorization server's; no profile scope; and in
// oauth.enterprise_issuers an issuer listed twice, not exactly one of jwks_uri and jwks, a
// jwks_uri that is not https (http only on a loopback host), an allowed client oauth.clients
// does not declare (OAUTH_CONFIG), a scope profile.scopes does not declare (SCOPE_UNDECLARED)
// — the enterprise ones each with its manifest path.

import type { OAuthConfig } from '../../core/manifest-types.gen.js';
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
  code: 'OAUTH_CONFIG' | 'SCOPE_UNDECLARED';
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
