// The front door: one module decides whether a request may enter, and as whom, for
// every route and transport (the Express app, the server's direct paths, the /ws
// handshake). Guarantees: a request carrying twice a header that may appear once
// (Authorization, DPoP, Host, Origin, Content-Type, Last-Event-ID, any Mcp-* header:
// http/repeated-headers.ts) is refused first (400 HEADER_REPEATED, naming the header);
// a Host that is not host[:port] is refused (400); a token in
// the query string is refused; Host and Origin are checked (host-check.ts), with
// `Origin: null` let through only to the sign-in form posts that check their own CSRF
// token; every refusal is logged as one `front_door.refused` line (reason, method,
// path without its query string, host, origin, the caller's ip as server.trust_proxy
// resolves it — never a header that carries a credential); a browser on the sign-in
// pages gets the refusal as a small HTML page, everyone else the JSON error shape.
// On a protected route the caller is authenticated against one policy snapshot and
// every failure is one `auth.failed` line; on a public route the caller is anonymous.
// Every refusal and 401 (and 503 from an external issuer that cannot be asked) is also
// reported to the Observer (a `deny` audit event, an auth-failure count) under the reason
// the gate gave — for an external token, the check it failed (token_aud, token_exp,
// introspection_inactive…) — and guard() runs the rest of the request in its request scope.
// A credential minted for named endpoints only (Principal.endpoints: its audience names them) is
// accepted on those endpoints' routes and refused everywhere else with the 401 of a token for another
// resource (check token_audience) — on the default endpoint's path that costs one property read.
// admitNow (the direct paths) reads a connection's Authorization header once while it stays the
// same — syntax only: every request still asks the token caches, which alone decide validity.

import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { TOKEN_REFUSED, type AuthGate } from '../auth/gate.js';
import { ANONYMOUS } from '../policy/principals.js';
import { CSRF_GUARDED_POST, SIGN_IN_PAGES } from '../auth/oauth/interactions.js';
import { errorPage, sendPage } from '../auth/oauth/pages.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PolicySnapshot, PolicyStore } from '../policy/store.js';
import { sendError } from './http-errors.js';
import { invalidHost, type hostRefusal, type RefusalReason } from '../http/host-check.js';
import { repeatedHeader } from '../http/repeated-headers.js';
import type { Observer } from '../observe/observer.js';

/** Where a connection keeps its last Authorization header and the token read from it. */
const LAST_BEARER = Symbol('last bearer');

const HINTS: Record<RefusalReason, string> = {
  header_repeated: 'A header that may appear once was sent more than once.',
  host_invalid: 'The Host header is not a valid host[:port].',
  host_not_allowed: 'This server does not answer at this address (server.allowed_hosts).',
  origin_null: 'Your browser did not say which site sent this request, and this address only accepts requests it can trace to a trusted site.',
  origin_not_allowed: 'The request came from a site this server does not trust (server.allowed_origins).',
  token_in_query: 'Tokens are accepted only in the Authorization header.',
};

const clip = (v: string | undefined) => (v === undefined ? undefined : v.slice(0, 200));

/** One structured line per refusal; `path` is the URL path only, so a token in the query is never written. */
function logRefusal(log: Logger, req: IncomingMessage, err: SvcError, ip: string | undefined): void {
  const path = clip((req.url ?? '/').split('?')[0]);
  const reason = err.data?.reason as RefusalReason | undefined;
  log.warn({
    event: 'front_door.refused', reason, code: err.code, status: err.status, method: req.method, path,
    host: clip(req.headers.host), origin: clip(req.headers.origin), ip,
  }, `${err.status} ${req.method} ${path}: ${clip(err.message)}`);
}

export interface FrontDoorDeps {
  refusal: ReturnType<typeof hostRefusal>;
  gate: AuthGate;
  store: PolicyStore;
  log: Logger;
  /** The caller's address as server.trust_proxy resolves it. */
  ipOf: (req: IncomingMessage) => string | undefined;
  isProtected: (route: string) => boolean;
  observer: Observer;
}

/** The reason code of a 401: no Authorization header, one that is not `Bearer <token>`, or a token nobody knows. */
function authReason(authorization: string | undefined): string {
  if (!authorization) return 'missing_token';
  return /^Bearer +\S/i.test(authorization) ? 'invalid_token' : 'malformed_authorization';
}

export interface FrontDoor {
  /** Why this request may not enter at all (Host, Origin, a token in the query), or undefined. Logs nothing. */
  refuse(req: IncomingMessage): SvcError | undefined;
  /** refuse(), logging the refusal. */
  check(req: IncomingMessage): SvcError | undefined;
  /**
   * Who the caller is on `route` (anonymous on a public route) through the named `endpoint` (absent: the
   * default endpoint), or the 401 error, logged as auth.failed unless `quiet` (the direct paths, which hand a
   * failure to the Express app to answer and log).
   */
  admit(req: IncomingMessage, route: string, snap: PolicySnapshot, quiet?: boolean, endpoint?: string): Promise<Principal | SvcError>;
  /** admit()'s principal when it is known without waiting (a public route, a static or cached OAuth token); undefined: ask admit(). */
  admitNow(req: IncomingMessage, route: string, snap: PolicySnapshot): Principal | undefined;
  /** Express: the refusal layer every request passes first. */
  middleware(): (req: Request, res: Response, next: NextFunction) => void;
  /** Express: admit() for a route; sets res.locals.principal and res.locals.policy (the snapshot it used). */
  guard(route: string): (req: Request, res: Response, next: NextFunction) => void;
}

export function createFrontDoor(d: FrontDoorDeps): FrontDoor {
  // The last Host that passed without an Origin: the same Host, again without Origin or query, passes at once
  // (the checks are a pure function of those; the server's Host policy never changes while it runs).
  let passedHost: string | undefined;
  const refuse = (req: IncomingMessage): SvcError | undefined => {
    const twice = repeatedHeader(req.rawHeaders);
    if (twice !== undefined) return new SvcError('HEADER_REPEATED', `the ${twice} header may appear once and appears more than once`, { data: { reason: 'header_repeated', header: twice } });
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const { host, origin } = req.headers;
    if (host !== undefined && host === passedHost && origin === undefined && q === -1) return undefined;
    const bad = invalidHost(host)
      ?? (q !== -1 && new URLSearchParams(url.slice(q + 1)).has('access_token')
        ? new SvcError('INVALID_REQUEST', 'tokens are accepted only in the Authorization header', { data: { reason: 'token_in_query' } })
        : d.refusal(host, origin, req.method === 'POST' && CSRF_GUARDED_POST.test(q === -1 ? url : url.slice(0, q))));
    if (!bad && origin === undefined && q === -1) passedHost = host;
    return bad;
  };
  const check = (req: IncomingMessage) => {
    const bad = refuse(req);
    if (bad) {
      const ip = d.ipOf(req);
      logRefusal(d.log, req, bad, ip);
      d.observer.refused(String(bad.data?.reason ?? bad.code.toLowerCase()), (req.url ?? '/').split('?')[0]!.slice(0, 200), ip);
    }
    return bad;
  };
  const admit = async (req: IncomingMessage, route: string, snap: PolicySnapshot, quiet = false, endpoint?: string): Promise<Principal | SvcError> => {
    if (!d.isProtected(route)) return ANONYMOUS;
    // Express strips a mount path from req.url; a DPoP proof names the URL the client sent.
    const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url;
    let r = await d.gate.authenticate(req.headers.authorization, snap, { method: req.method, url, headers: req.headers });
    if (!(r instanceof SvcError) && r.endpoints && !(endpoint && r.endpoints.includes(endpoint))) {
      r = new SvcError('UNAUTHENTICATED', TOKEN_REFUSED, {
        data: { error: 'invalid_token' }, reason: 'token_audience',
        detail: `the token was minted for the endpoint${r.endpoints.length > 1 ? 's' : ''} ${r.endpoints.join(', ')} only (its audience), not for ${endpoint ? `the endpoint ${endpoint}` : 'the default endpoint'}`,
      });
    }
    if (r instanceof SvcError && !quiet) {
      const ip = d.ipOf(req);
      const check = r.reason ?? authReason(req.headers.authorization);
      const why = r.detail ?? r.message;
      d.log.info({ event: 'auth.failed', route, method: req.method, ip, status: r.status, check, reason: why }, `${r.status} on ${route}: ${why}`);
      d.observer.refused(check, route, ip);
    }
    return r;
  };
  const admitNow = (req: IncomingMessage, route: string, snap: PolicySnapshot): Principal | undefined => {
    if (!d.isProtected(route)) return ANONYMOUS;
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    // The header's token, read once per keep-alive connection: a client repeats its header on every request, and the
    // token string kept here keeps its hash, so the caches' lookups do not hash a long JWT again (only syntax is
    // remembered: every request still asks the caches, which decide validity, expiry and revocation).
    const socket = req.socket as Socket & { [LAST_BEARER]?: { header: string; bearer: string | undefined } };
    let last = socket[LAST_BEARER];
    if (last?.header !== header) socket[LAST_BEARER] = last = { header, bearer: d.gate.bearerOf(header) };
    const p = last.bearer === undefined ? undefined : d.gate.principalNow(last.bearer, snap);
    return p?.endpoints ? undefined : p; // a token for named endpoints only: admit() refuses it here
  };
  return {
    refuse, check, admit, admitNow,
    middleware: () => (req, res, next) => {
      const bad = check(req);
      if (!bad) return next();
      const browser = (req.method === 'GET' || req.method === 'POST') && SIGN_IN_PAGES.test(req.path)
        && req.accepts(['application/json', 'text/html']) === 'text/html';
      if (!browser) return sendError(res, bad);
      const hint = HINTS[bad.data?.reason as RefusalReason] ?? '';
      sendPage(res, bad.status, errorPage('Request refused', `${bad.message}. ${hint}`));
    },
    guard: (route) => (req, res, next) => {
      const snap = d.store.current();
      void admit(req, route, snap).then((r) => {
        if (r instanceof SvcError) return sendError(res, r, d.gate, route);
        res.locals.principal = r;
        res.locals.policy = snap;
        next();
      }, next);
    },
  };
}
