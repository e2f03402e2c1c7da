// The front door: the first layer every HTTP request meets, before any route. Guarantees:
// a Host that is not host[:port] is refused (400); a token in the query string is
// refused; Host and Origin are checked (host-check.ts),
// with `Origin: null` let through only to the sign-in form posts that check their own
// CSRF token; every refusal is logged as one `front_door.refused` line (reason, method,
// path without its query string, host, origin, the caller's ip as server.trust_proxy
// resolves it — never a header that carries a
// credential); a browser on the sign-in pages gets the refusal as a small HTML page,
// everyone else the JSON error shape.

import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { CSRF_GUARDED_POST, SIGN_IN_PAGES } from '../auth/oauth/interactions.js';
import { errorPage, sendPage } from '../auth/oauth/pages.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { sendError } from './errors.js';
import { invalidHost, type hostRefusal, type RefusalReason } from './host-check.js';

const HINTS: Record<RefusalReason, string> = {
  host_invalid: 'The Host header is not a valid host[:port].',
  host_not_allowed: 'This server does not answer at this address (server.allowed_hosts).',
  origin_null: 'Your browser did not say which site sent this request, and this address only accepts requests it can trace to a trusted site.',
  origin_not_allowed: 'The request came from a site this server does not trust (server.allowed_origins).',
  token_in_query: 'Tokens are accepted only in the Authorization header.',
};

const clip = (v: string | undefined) => (v === undefined ? undefined : v.slice(0, 200));

/** One structured line per refusal; `path` is the URL path only, so a token in the query is never written. */
export function logRefusal(log: Logger, req: IncomingMessage, err: SvcError, ip: string | undefined): void {
  const path = clip((req.url ?? '/').split('?')[0]);
  const reason = err.data?.reason as RefusalReason | undefined;
  log.warn({
    event: 'front_door.refused', reason, code: err.code, status: err.status, method: req.method, path,
    host: clip(req.headers.host), origin: clip(req.headers.origin), ip,
  }, `${err.status} ${req.method} ${path}: ${clip(err.message)}`);
}

/** `ipOf`: the caller's address as server.trust_proxy resolves it. */
export function frontDoor(refusal: ReturnType<typeof hostRefusal>, log: Logger, ipOf: (req: IncomingMessage) => string | undefined) {
  return (req: Request, res: Response, next: NextFunction) => {
    const bad = invalidHost(req.headers.host) ?? (req.url.includes('access_token=') && typeof req.query.access_token === 'string'
      ? new SvcError('INVALID_REQUEST', 'tokens are accepted only in the Authorization header', { data: { reason: 'token_in_query' } })
      : refusal(req.headers.host, req.headers.origin, req.method === 'POST' && CSRF_GUARDED_POST.test(req.path)));
    if (!bad) return next();
    logRefusal(log, req, bad, ipOf(req));
    const browser = (req.method === 'GET' || req.method === 'POST') && SIGN_IN_PAGES.test(req.path)
      && req.accepts(['application/json', 'text/html']) === 'text/html';
    if (!browser) return sendError(res, bad);
    const hint = HINTS[bad.data?.reason as RefusalReason] ?? '';
    sendPage(res, bad.status, errorPage('Request refused', `${bad.message}. ${hint}`));
  };
}
