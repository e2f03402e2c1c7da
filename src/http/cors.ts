// CORS for browser-based clients (server.cors). Guarantees: while server.cors.origins
// is empty this module is not installed and adds no header; otherwise it acts only on
// /mcp, /svc and the OAuth endpoints a browser client calls (token, registration,
// revocation, introspection, jwks, the discovery documents), and only for an Origin
// equal to a listed origin: Access-Control-Allow-Origin echoes that origin (never *,
// never Allow-Credentials — tokens travel in the Authorization header, not cookies);
// a preflight (OPTIONS with Access-Control-Request-Method) is answered 204 before any
// auth; other responses expose Mcp-Session-Id, Mcp-Protocol-Version and WWW-Authenticate.
// Responses on those paths carry Vary: Origin.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsSettings } from '../core/manifest-types.gen.js';

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, DPoP';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, DPoP-Nonce';
const PATHS = /^\/(mcp|svc)(\/|$)|^\/(token|register|revoke|introspect|jwks)$|^\/\.well-known\/(oauth-authorization-server|openid-configuration|oauth-protected-resource(\/.*)?)$/;

/** The origin forms compared: lower case, no trailing slash. */
export const normalizeOrigin = (o: string) => o.toLowerCase().replace(/\/+$/, '');

/**
 * A handler for server.cors, or undefined when CORS is off. It returns true when it
 * answered the request itself (a preflight), false when the request goes on.
 */
export function corsHandler(c: CorsSettings): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  // resolveConfig applied the schema's defaults: both fields are set.
  const origins = c.origins!;
  const maxAge = String(c.max_age!);
  if (!origins.length) return undefined;
  const allowed = new Set(origins.map(normalizeOrigin));
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (!PATHS.test(q === -1 ? url : url.slice(0, q))) return false;
    vary(res, 'Origin');
    const origin = req.headers.origin;
    if (!origin || !allowed.has(normalizeOrigin(origin))) return false;
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Max-Age', maxAge);
      res.setHeader('Content-Length', '0');
      res.writeHead(204).end();
      return true;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    return false;
  };
}

function vary(res: ServerResponse, field: string): void {
  const now = String(res.getHeader('Vary') ?? '');
  if (!now.split(',').some((v) => v.trim().toLowerCase() === field.toLowerCase())) res.setHeader('Vary', now ? `${now}, ${field}` : field);
}
