// The door of a named endpoint (/mcp/NAME, /ws/NAME, /svc/NAME/…): one decision for every transport,
// made on one policy snapshot. Guarantees, in this order: a name the snapshot declares no endpoint by
// is no endpoint path — serve() hands it on to the transport's own route, as before endpoints existed
// (/svc/tools/… among them: reserved names are never endpoints), and enter() answers 404 NOT_FOUND;
// the caller is authenticated as on the transport's
// own route (front-door.ts: a public route is anonymous), and a token minted for other endpoints only is
// the 401 of a token for another resource; the caller must hold every scope of the endpoint's
// required_scopes, else 403 INSUFFICIENT_SCOPE naming them (one `access.denied` line, kind endpoint,
// saying which endpoint refused whom, and a `deny` audit event); a 401's or 403's challenge names the
// endpoint's own protected-resource metadata. What passes gets the snapshot and the endpoint's view of
// its catalog, so everything after the door runs on the view.
// The door is kept after entering too: readmits() decides again, on the current policy, whether a caller
// who entered earlier still passes (the endpoint is still declared, its required_scopes still held; a
// refusal is logged as the door logs it), and guardSessions() runs it over every session of a named
// endpoint whenever the policy changes — before the sessions hear of the change — ending those it
// refuses (an /mcp session and its GET stream end, a /ws socket closes with 4403), so a caller a reload
// shuts out of an endpoint receives nothing more there.

import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Observer } from '../observe/observer.js';
import { decide } from '../policy/scopes.js';
import type { PolicySnapshot, PolicyStore } from '../policy/store.js';
import { denial } from '../runtime/denial.js';
import { viewOf } from '../catalog/endpoint-view.js';
import type { AuthGate } from '../auth/gate.js';
import type { FrontDoor } from './front-door.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import { sendError } from './http-errors.js';

/** Who passed the door of an endpoint, and what they see there. */
export interface Entered {
  readonly principal: Principal;
  readonly snapshot: PolicySnapshot;
  /** The endpoint's view of the snapshot's catalog. */
  readonly catalog: Catalog;
  readonly endpoint: string;
}

export interface EndpointDoor {
  /** The door for endpoint `name` on the transport route `route` (/mcp, /ws, /svc): who entered, or the refusal. */
  enter(req: IncomingMessage, route: string, name: string): Promise<Entered | SvcError>;
  /**
   * Express, mounted at ROUTE/:endpoint: for a declared endpoint, enter() and then `handler` with res.locals principal,
   * policy, catalog (the view) and endpoint set, or the refusal answered; any other name goes on to the next route.
   */
  serve(route: string, handler: (req: Request, res: Response, next: NextFunction) => void): (req: Request, res: Response, next: NextFunction) => void;
  /** Whether `p`, who entered endpoint `name` on `route` earlier, still passes its door on the current policy: undefined, or the refusal (logged). */
  readmits(p: Principal, route: string, name: string): SvcError | undefined;
  /** From now on, every policy change first ends the sessions of named endpoints whose door no longer admits their caller; returns the undo. */
  guardSessions(sessions: SessionRegistry): () => void;
}

export function createEndpointDoor(d: { door: FrontDoor; gate: AuthGate; store: PolicyStore; log: Logger; observer: Observer }): EndpointDoor {
  const enter = async (req: IncomingMessage, route: string, name: string): Promise<Entered | SvcError> => {
    const snapshot = d.store.current();
    const ep = snapshot.catalog.endpoints?.get(name);
    if (!ep) return new SvcError('NOT_FOUND', `no endpoint ${name}`);
    const p = await d.door.admit(req, route, snapshot, false, name);
    if (p instanceof SvcError) return p;
    const decision = decide(ep.requiredScopes, p.scopes);
    if (!decision.ok) return denial(d.log, p, route.slice(1), 'endpoint', name, decision, d.observer);
    return { principal: p, snapshot, catalog: viewOf(snapshot.catalog, name), endpoint: name };
  };
  const readmits = (p: Principal, route: string, name: string): SvcError | undefined => {
    const ep = d.store.current().catalog.endpoints?.get(name);
    if (!ep) return new SvcError('NOT_FOUND', `no endpoint ${name}`);
    const decision = decide(ep.requiredScopes, p.scopes);
    return decision.ok ? undefined : denial(d.log, p, route.slice(1), 'endpoint', name, decision, d.observer);
  };
  return {
    enter,
    readmits,
    guardSessions: (sessions) => d.store.onChange(() => sessions.refuseWhere((e) => (e.endpoint ? readmits(e.principal, `/${e.transport}`, e.endpoint) : undefined))),
    serve: (route, handler) => (req, res, next) => {
      const name = String(req.params.endpoint);
      if (!d.store.current().catalog.endpoints?.has(name)) return next();
      void enter(req, route, name).then((r) => {
        if (r instanceof SvcError) return sendError(res, r, d.gate, `${route}/${name}`);
        res.locals.principal = r.principal;
        res.locals.policy = r.snapshot;
        res.locals.catalog = r.catalog;
        res.locals.endpoint = r.endpoint;
        handler(req, res, next);
      }, next);
    },
  };
}
