// What is wrong with external_issuers, checked as configuration: no network, no file, no
// jose import, so `svc validate` stays offline and light. Guarantees: `svc validate`
// (manifest/compile.ts, every problem) and start-up (external/issuers.ts, the first one)
// refuse the same entries with the same codes and messages, each at its manifest path: an
// issuer that is not an http(s) URL without query or fragment, or http off a loopback host;
// an issuer listed twice, or equal to the built-in server's own; a jwks_uri or introspection
// endpoint that is not https (http only on a loopback host); introspection without exactly
// one of client_secret and client_secret_file (EXTERNAL_ISSUER_CONFIG); a scope in
// scope_map or `scopes` that profile.scopes does not declare (SCOPE_UNDECLARED).

import type { ExternalIssuer } from '../../core/manifest-types.gen.js';
import { isLoopbackHost } from '../../util/loopback.js';

export interface IssuerProblem {
  code: 'EXTERNAL_ISSUER_CONFIG' | 'SCOPE_UNDECLARED';
  path: (string | number)[];
  message: string;
}

/** Why `url` cannot be fetched from: not http(s), or http to a host that is not loopback; else undefined. */
export function insecureUrl(url: string): string | undefined {
  const u = URL.parse(url);
  if (!u || !/^https?:$/.test(u.protocol)) return 'is not an http(s) URL';
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) return 'must be https (http only on a loopback host)';
  if (u.username || u.password) return 'must not carry credentials';
  return undefined;
}

/** Every problem of the section; `builtinIssuer`: the built-in OAuth server's issuer when it runs. */
export function externalIssuerProblems(issuers: readonly ExternalIssuer[], profileScopes: readonly string[], builtinIssuer?: string): IssuerProblem[] {
  const out: IssuerProblem[] = [];
  const profile = new Set(profileScopes);
  const seen = new Set<string>();
  issuers.forEach((cfg, i) => {
    const at = ['external_issuers', i];
    const add = (code: IssuerProblem['code'], message: string, ...sub: (string | number)[]) => out.push({ code, path: [...at, ...sub], message });
    const who = `external issuer ${cfg.issuer}`;
    const bad = insecureUrl(cfg.issuer);
    const u = URL.parse(cfg.issuer);
    if (bad) add('EXTERNAL_ISSUER_CONFIG', `${who} ${bad}`, 'issuer');
    else if (u!.search || u!.hash || cfg.issuer.includes('#') || cfg.issuer.includes('?')) add('EXTERNAL_ISSUER_CONFIG', `${who} must have no query or fragment`, 'issuer');
    if (seen.has(cfg.issuer)) add('EXTERNAL_ISSUER_CONFIG', `${who} is listed twice`, 'issuer');
    seen.add(cfg.issuer);
    if (builtinIssuer !== undefined && cfg.issuer.replace(/\/+$/, '') === builtinIssuer.replace(/\/+$/, '')) {
      add('EXTERNAL_ISSUER_CONFIG', `${who} is the built-in OAuth server's own issuer`, 'issuer');
    }
    if (cfg.jwks_uri) {
      const why = insecureUrl(cfg.jwks_uri);
      if (why) add('EXTERNAL_ISSUER_CONFIG', `${who}: jwks_uri ${why}`, 'jwks_uri');
    }
    const intro = cfg.introspection;
    if (intro) {
      if (intro.endpoint) {
        const why = insecureUrl(intro.endpoint);
        if (why) add('EXTERNAL_ISSUER_CONFIG', `${who}: introspection.endpoint ${why}`, 'introspection', 'endpoint');
      }
      if (intro.client_secret !== undefined && intro.client_secret_file !== undefined) {
        add('EXTERNAL_ISSUER_CONFIG', `${who}: give introspection.client_secret or client_secret_file, not both`, 'introspection', 'client_secret_file');
      } else if (intro.client_secret === undefined && intro.client_secret_file === undefined) {
        add('EXTERNAL_ISSUER_CONFIG', `${who}: introspection needs client_secret (e.g. \${IDP_SECRET}) or client_secret_file`, 'introspection');
      }
    }
    for (const [value, scopes] of Object.entries(cfg.scope_map ?? {})) {
      scopes.forEach((s, j) => {
        if (!profile.has(s)) add('SCOPE_UNDECLARED', `${who}: scope_map maps ${value} to ${s}, which profile.scopes does not declare`, 'scope_map', value, j);
      });
    }
    (cfg.scopes ?? []).forEach((s, j) => {
      if (!profile.has(s)) add('SCOPE_UNDECLARED', `${who} lists ${s}, which profile.scopes does not declare`, 'scopes', j);
    });
  });
  return out;
}
