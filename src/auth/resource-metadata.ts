// Protected resource metadata (RFC 9728), served whenever some authorization server issues
// tokens for this server: the built-in OAuth server, external issuers, or both. Guarantees: one
// document at /.well-known/oauth-protected-resource (its `resource` the origin) and one per
// protected route at the path-inserted form (its `resource` exactly origin + route);
// `authorization_servers` lists every issuer whose tokens are accepted — the built-in one
// first (MCP clients use the first), then the external ones in manifest order;
// `scopes_supported` — the declared scopes some issuer can grant, never one none can — is what
// the 401 challenge's `scope` names (auth/gate.ts reads it from here), so the two never disagree; `dpop_signing_alg_values_supported` when DPoP proofs are
// checked; readable from any origin and cacheable for 5 minutes; built from configuration
// only, never from the request's Host header. Each named endpoint is a protected resource of its own:
// its document at the path-inserted form of each protected transport route + /NAME
// (/.well-known/oauth-protected-resource/mcp/github, …/ws/github, …/svc/github), `resource` exactly
// origin + that path, served while the live policy declares the endpoint (a 404 otherwise), and a
// 401 on the endpoint names it. Audiences (endpointResources): a token for the origin or a transport
// route is for every endpoint; one whose audience is an endpoint's resource (origin/mcp/NAME, or the
// /ws/NAME and /svc/NAME forms, all canonicalised to /mcp/NAME) is for that endpoint only.

import type { Application, Request, Response } from 'express';

export const PRM_PATH = '/.well-known/oauth-protected-resource';

export interface ResourceMetadataOptions {
  /** This server's public origin (scheme://host[:port]). */
  origin: string;
  /** The protected routes ('/mcp', '/svc', '/ws'). */
  routes: readonly string[];
  /** Issuers whose tokens are accepted, in the order clients should try them. */
  authorizationServers: readonly string[];
  scopes: readonly string[];
  /** resource_name. */
  name: string;
  /** DPoP: the proof algorithms, and whether only bound tokens are accepted. */
  dpop?: { algs: readonly string[]; required: boolean };
  /** The named endpoints now (the live policy's). */
  endpoints?: EndpointResources;
}

/** The named endpoints as protected resources: their resource URLs, and which endpoint an audience names. */
export interface EndpointResources {
  /** Whether `name` names an endpoint now. */
  has(name: string): boolean;
  /** The audience of every endpoint now: origin/mcp/NAME. */
  audiences(): string[];
  /**
   * What a resource indicator or audience of this server names: the whole server (origin, a transport route, or a
   * path under one that is no endpoint) → {}; a declared endpoint (origin/{mcp,ws,svc}/NAME…) → {endpoint, audience
   * origin/mcp/NAME}; undefined: not this server's.
   */
  resolve(indicator: string): { endpoint?: string; audience: string } | undefined;
}

export function endpointResources(origin: string, routes: readonly string[], names: () => Iterable<string> | undefined): EndpointResources {
  const has = (name: string) => {
    for (const n of names() ?? []) if (n === name) return true;
    return false;
  };
  return {
    has,
    audiences: () => [...names() ?? []].map((n) => `${origin}/mcp/${n}`),
    resolve(indicator) {
      const u = URL.parse(indicator);
      if (!u || u.origin !== origin || u.search || u.hash || u.username || u.password) return undefined;
      const path = u.pathname.replace(/\/+$/, '');
      if (path === '') return { audience: origin };
      const [, route, name] = /^(\/[^/]+)(?:\/([^/]+))?/.exec(path) ?? [];
      if (!route || !routes.includes(route)) return undefined;
      return name && has(name) ? { endpoint: name, audience: `${origin}/mcp/${name}` } : { audience: origin };
    },
  };
}

export interface ResourceMetadata {
  /** Serve the documents (before the 404 handler). */
  mount(app: Application): void;
  /** The document's URL for a protected route (path-inserted form), or the root form. */
  prmUrl(route?: string): string;
  /** scopes_supported: what a first authorization should ask for. */
  readonly scopesSupported: readonly string[];
}

export function resourceMetadata(o: ResourceMetadataOptions): ResourceMetadata {
  const doc = (resource: string) => ({
    resource,
    authorization_servers: [...o.authorizationServers],
    scopes_supported: [...o.scopes],
    bearer_methods_supported: ['header'],
    resource_name: o.name,
    ...(o.dpop && { dpop_signing_alg_values_supported: [...o.dpop.algs], dpop_bound_access_tokens_required: o.dpop.required }),
  });
  const publicJson = (body: Record<string, unknown>) => (_req: Request, res: Response) => {
    // Public documents: readable from any origin, unless server.cors already answered for this one.
    if (!res.getHeader('Access-Control-Allow-Origin')) res.set('Access-Control-Allow-Origin', '*');
    res.set('Cache-Control', 'public, max-age=300').json(body);
  };
  return {
    mount(app) {
      app.get(PRM_PATH, publicJson(doc(o.origin)));
      for (const r of o.routes) app.get(`${PRM_PATH}${r}`, publicJson(doc(`${o.origin}${r}`)));
      const eps = o.endpoints;
      if (eps) {
        for (const r of o.routes) {
          app.get(`${PRM_PATH}${r}/:endpoint`, (req, res, next) => {
            const name = String(req.params.endpoint);
            if (!eps.has(name)) return next();
            publicJson(doc(`${o.origin}${r}/${name}`))(req, res);
          });
        }
      }
    },
    prmUrl(route) {
      if (!route) return `${o.origin}${PRM_PATH}`;
      if (o.routes.includes(route)) return `${o.origin}${PRM_PATH}${route}`;
      const named = /^(\/[^/]+)\/([^/]+)$/.exec(route);
      return named && o.routes.includes(named[1]!) && o.endpoints?.has(named[2]!) ? `${o.origin}${PRM_PATH}${route}` : `${o.origin}${PRM_PATH}`;
    },
    scopesSupported: o.scopes,
  };
}
