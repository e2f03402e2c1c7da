// The access tokens the auth gate accepts besides static tokens: the built-in OAuth server's
// and the external issuers', as one AccessTokenVerifier. Guarantees, in this order: a token
// already verified is answered from a cache without waiting (the built-in server's, then the
// external issuers'); a JWT, or a token longer than the built-in server ever issues and
// external issuers accept, goes to the external issuers only — routed by its `iss`, so the
// built-in server (whose tokens are opaque) never sees one and no introspection endpoint ever
// gets a JWT of another issuer; an opaque token is looked up by the built-in server first — a
// local lookup with no outbound request, and a token of ours is never sent to a third party's
// introspection endpoint — and only then introspected by the external issuers that
// introspect, in manifest order. A principal stays active as its source says (isActive). With
// external issuers the protected routes check DPoP proofs for tokens bound to a key (cnf.jkt):
// with the built-in server's verifier when it has one, else with one in `allowed` mode (bound
// tokens need a proof, unbound ones stay bearer). The protected-resource metadata
// (resource-metadata.ts) lists the built-in issuer, then the external ones, and gives the
// 401's resource_metadata and scope.

import { randomBytes } from 'node:crypto';
import type { Principal } from '../core/types.js';
import type { SvcError } from '../errors.js';
import type { AccessTokenVerifier } from './gate.js';
import { DPOP_ALGS, DpopVerifier } from './dpop.js';
import { resourceMetadata, type EndpointResources, type ResourceMetadata } from './resource-metadata.js';
import type { OAuthServer } from './oauth/server.js';
import type { ExternalIssuers } from './external/issuers.js';

export interface AccessVerifierOptions {
  builtin?: OAuthServer;
  external?: ExternalIssuers;
  /** This server's public origin: the metadata's resource, and what a DPoP proof's htu must name. */
  origin: string;
  /** The protected routes. */
  routes: readonly string[];
  /** scopes_supported: the scopes of profile.scopes (as started) some issuer can grant. */
  scopes: readonly string[];
  /** resource_name. */
  name: string;
  /** The named endpoints, each a protected resource of its own. */
  endpoints?: EndpointResources;
}

/** The verifier, with the protected-resource metadata to mount. */
export type AccessVerifier = AccessTokenVerifier & { readonly metadata: ResourceMetadata };

export function createAccessVerifier(o: AccessVerifierOptions): AccessVerifier {
  const { builtin, external } = o;
  const dpop = builtin?.dpop ?? (external ? new DpopVerifier({ mode: 'allowed', nonces: false, origin: o.origin, secret: randomBytes(32) }) : undefined);
  const metadata = resourceMetadata({
    origin: o.origin, routes: o.routes, scopes: o.scopes, name: o.name, ...(o.endpoints && { endpoints: o.endpoints }),
    authorizationServers: [...(builtin ? [builtin.issuer] : []), ...(external?.issuers ?? [])],
    ...(dpop && { dpop: { algs: DPOP_ALGS, required: dpop.mode === 'required' } }),
  });
  return {
    metadata,
    async verifyAccessToken(token): Promise<Principal | SvcError | null> {
      if (external) {
        const known = external.cached(token);
        if (known) return known;
        if (external.owns(token)) return external.verify(token);
      }
      const p = builtin ? await builtin.verifyAccessToken(token) : null;
      if (p || !external) return p;
      return external.verify(token);
    },
    cachedAccessToken(token) {
      return builtin?.cachedAccessToken(token) ?? external?.cached(token);
    },
    async isActive(p) {
      if (p.kind === 'external') return external ? external.isActive(p) : false;
      return builtin ? builtin.isActive(p) : false;
    },
    prmUrl: (route) => metadata.prmUrl(route),
    scopesSupported: metadata.scopesSupported,
    ...(dpop && { dpop }),
  };
}
