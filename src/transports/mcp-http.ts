// /mcp: MCP Streamable HTTP — the framing of the one MCP endpoint (src/mcp/endpoint.ts).
// Guarantees: Accept and Content-Type are checked and the body is read within
// server.body_limit before anything else; every POST goes to the endpoint with the
// request's headers, its policy snapshot (res.locals.policy, or the direct path's) and its
// caller; an answer stays plain JSON unless the call sends something before its result
// (then, if the client accepts it, it turns into an SSE stream); a single request refused
// for its scopes is answered 403 with the insufficient_scope step-up challenge and one over
// its quota 429 with Retry-After — mapped here, once, from the runtime's own refusal; a
// 2026-07-28 subscriptions/listen is an SSE stream that a server shutdown ends; GET opens a
// 2025 session's standing stream and DELETE ends the session (both 405 for a 2026 request);
// nothing per request outlives the request. /mcp/NAME serves the named endpoint NAME the same way,
// behind its door (endpoint-door.ts), on its view of the catalog: its sessions are its own. A policy
// change after which NAME's door no longer admits a caller ends that caller's 2025 sessions there (and
// their GET streams: endpoint-door.ts guardSessions) and its 2026-07-28 listen streams there, each
// with the door's refusal as the listen's JSON-RPC error, before the change is notified on them.
// With a SessionStore (several processes serve the 2025 sessions), any process answers any request of a
// session; its GET stream carries the session's outbound stream from the store, in order, each event with
// its number as the SSE `id:` — from after Last-Event-ID when the GET names one (the events it missed, on
// whichever process it reached before), else from the newest — one read of the store at a time; while it is open
// it moves the session's expiry and its stream mark in one write at most once per streamMarkEvery() (set before the
// stream is answered, cleared when it closes: a server→client request asked while no stream is marked fails at
// once); DELETE ends the session in the store before it is answered.

import { randomUUID } from 'node:crypto';
import { scopeOf, type RequestScope } from '../core/request-scope.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Application, type RequestHandler } from 'express';
import type { TaskEngine } from '../tasks/engine.js';
import type { AuthGate } from '../auth/gate.js';
import type { ResolvedConfig } from '../core/config.js';
import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PolicySnapshot } from '../policy/store.js';
import type { Runtime } from '../runtime/runtime.js';
import { parseByteSize } from '../util/bytes.js';
import { readBody, sendEmpty, sendJson } from '../http/raw.js';
import { refusalStatus, toSvcError } from './http-errors.js';
import { errorFrom, failure, RPC, type JsonRpcMessage, type JsonRpcRequest } from '../mcp/jsonrpc.js';
import { SSE_KEEPALIVE_MS } from '../mcp/constants.js';
import { McpEndpoint, type Exchange } from '../mcp/endpoint.js';
import type { HeaderView } from '../mcp/modern-headers.js';
import { ResponseSignal } from './response-context.js';
import { SessionRegistry, type SessionEntry } from '../mcp/sessions.js';
import type { InputRounds } from '../mcp/input-rounds.js';
import { PostReply, startSse, writeEvent, type Accepts } from './sse.js';
import { serial, storeRefusal, streamMarkEvery } from '../mcp/shared-sessions.js';
import type { EndpointDoor } from './endpoint-door.js';

export interface McpDeps {
  runtime: Runtime;
  /** Tasks (MCP 2025-11-25 experimental tasks, the 2026-07-28 extension). */
  tasks?: TaskEngine;
  gate: AuthGate;
  config: ResolvedConfig;
  logger: Logger;
  sessions: SessionRegistry;
  /** Multi-round-trip state for 2026-07-28 requests (one per server). */
  rounds: InputRounds;
  /** Runs before the transport and sets res.locals.principal (the route's auth or the anonymous principal). */
  guard?: RequestHandler;
  /** The caller's address (server.trust_proxy), for the audit log. */
  ipOf: (req: IncomingMessage) => string | undefined;
  /** The named endpoints' door: /mcp/NAME is served when given. */
  endpoints?: EndpointDoor;
}

export interface McpHandle {
  /** POST /mcp for a principal the caller authenticated with the policy of `cat` (the server's direct path; see server/app.ts); `endpoint`: /mcp/NAME's, with `cat` its view. */
  post(req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog, endpoint?: string): Promise<void>;
  /** End every open 2026-07-28 subscriptions/listen stream with its final response (server shutdown). */
  closeStreams(): void;
}

export function mountMcp(app: Application, deps: McpDeps): McpHandle {
  const log = deps.logger.child({ transport: 'mcp' });
  const endpoint = new McpEndpoint({ transport: 'mcp', routePublic: deps.config.routes.public.includes('/mcp'), runtime: deps.runtime, tasks: deps.tasks, sessions: deps.sessions, rounds: deps.rounds, logger: log });
  const listens = new Set<OpenListen>();
  const post = guarded(postHandler(deps, log, endpoint, listens), log);
  // Registered before any listen's own change listener: a listen its endpoint's door now refuses ends before it hears of the change.
  const door = deps.endpoints;
  if (door) {
    deps.runtime.onChange(() => {
      for (const l of [...listens]) {
        const refused = l.endpoint ? door.readmits(l.principal, '/mcp', l.endpoint) : undefined;
        if (refused) l.close(refused);
      }
    });
  }
  const router = express.Router();
  // res.locals.catalog and .endpoint are set by a named endpoint's door; the default endpoint has the snapshot's catalog.
  const catalogOf = (res: express.Response) => (res.locals.catalog as Catalog | undefined) ?? (res.locals.policy as PolicySnapshot | undefined)?.catalog;
  router.post('/', (req, res) => post(req, res, res.locals.principal as Principal, catalogOf(res), res.locals.endpoint as string | undefined));
  router.get('/', (req, res, next) => {
    target(endpoint, req, res, res.locals.principal as Principal, res.locals.endpoint as string | undefined).then((t) => {
      if (!t) return;
      if (!accepts(req).sse) return reject(res, new SvcError('INVALID_REQUEST', 'GET /mcp opens an event stream: Accept must include text/event-stream'), 406);
      if (t.append) return sharedStream(deps.sessions, res, t, headerView(req)('last-event-id'), log);
      openStream(deps.sessions, res, t);
    }).catch(next);
  });
  router.delete('/', (req, res, next) => {
    target(endpoint, req, res, res.locals.principal as Principal, res.locals.endpoint as string | undefined).then(async (t) => {
      if (!t) return;
      try {
        await deps.sessions.endEverywhere(t, 'deleted by the client');
      } catch (e) {
        return reject(res, storeRefusal(e));
      }
      sendEmpty(res, 204);
    }).catch(next);
  });
  router.all('/', (_req, res) => {
    res.setHeader('Allow', 'GET, POST, DELETE');
    reject(res, new SvcError('INVALID_REQUEST', 'use POST, GET or DELETE on /mcp'), 405);
  });
  if (deps.endpoints) app.use('/mcp/:endpoint', deps.endpoints.serve('/mcp', router));
  if (deps.guard) app.use('/mcp', deps.guard, router);
  else app.use('/mcp', router);
  return {
    post,
    closeStreams: () => {
      for (const l of [...listens]) l.close();
    },
  };
}

/** The 2025 session a GET or DELETE names, or undefined with the refusal sent. */
async function target(endpoint: McpEndpoint, req: IncomingMessage, res: ServerResponse, p: Principal, named: string | undefined): Promise<SessionEntry | undefined> {
  const t = await endpoint.sessionTarget(headerView(req), p, req.method ?? 'GET', named);
  if (t.ok) return t.entry;
  if (t.allow) res.setHeader('Allow', t.allow);
  reject(res, t.error, t.status);
  return undefined;
}

/** An open subscriptions/listen stream: whose, on which endpoint, and its end (with its final response, or the refusal that ends it). */
interface OpenListen {
  readonly principal: Principal;
  readonly endpoint?: string;
  close(refused?: SvcError): void;
}

/** POST /mcp for an authenticated principal. Uses only Node's request/response API, so the server can call it directly. */
function postHandler(deps: McpDeps, log: Logger, endpoint: McpEndpoint, listens: Set<OpenListen>) {
  const bodyLimit = parseByteSize(deps.config.server.body_limit);
  return async (req: IncomingMessage, res: ServerResponse, p: Principal, pinned?: Catalog, named?: string): Promise<void> => {
    const accept = accepts(req);
    if (!accept.json && !accept.sse) return reject(res, new SvcError('INVALID_REQUEST', 'Accept must include application/json or text/event-stream'), 406);
    if (mediaType(req.headers['content-type']) !== 'application/json') return reject(res, new SvcError('INVALID_REQUEST', 'Content-Type must be application/json'), 415);
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, bodyLimit));
    } catch (e) {
      if (e instanceof SyntaxError) return sendJson(res, 400, failure(null, RPC.PARSE_ERROR, 'the body is not valid JSON'));
      return reject(res, toSvcError(e, log)); // CANCELLED (the client went away) is logged there as request.aborted
    }
    // Messages a call sends that its own stream can no longer carry go to its 2025 session's standing stream, if any.
    const reply = new PostReply(res, accept, (m) => (x.session ? SessionRegistry.relay(x.session, m) : false));
    const x: Exchange = {
      principal: p, catalog: pinned ?? deps.runtime.current(named), scope: scopeFor(deps, req), headers: headerView(req),
      signal: new ResponseSignal(res, streamClosed), reply: reply.sink, ...(named && { endpoint: named }),
    };
    const out = await endpoint.receive(body, x);
    if (out.listen) return listenStream(endpoint, listens, log, res, out.listen, p, accept, named);
    if (out.opened) res.setHeader('Mcp-Session-Id', out.opened);
    reply.finish(out.answer, out.refusal ? refusalStatus(res, out.refusal, deps.gate, named ? `/mcp/${named}` : '/mcp') ?? out.status : out.status);
  };
}

/** A 2026 call's signal aborts with this when the client closes the stream before the answer. */
const streamClosed = () => new SvcError('BACKEND_TIMEOUT', 'the client closed the stream');

/**
 * subscriptions/listen: an SSE stream that opens with the acknowledgement and carries the tagged change notifications
 * until either side ends it. When the listen cannot be set up (a shared task store that is down), the stream carries
 * the request's JSON-RPC error and ends.
 */
async function listenStream(endpoint: McpEndpoint, listens: Set<OpenListen>, log: Logger, res: ServerResponse, msg: JsonRpcRequest, p: Principal, accept: Accepts, named: string | undefined): Promise<void> {
  if (!accept.sse) return reject(res, new SvcError('INVALID_REQUEST', 'subscriptions/listen answers with an event stream: Accept must include text/event-stream'), 406);
  startSse(res);
  let stop: () => void;
  try {
    stop = await endpoint.listen(msg, p, (m) => writeEvent(res, m), named);
  } catch (e) {
    writeEvent(res, errorFrom(msg.id, toSvcError(e, log)));
    return void res.end();
  }
  if (res.destroyed) return stop(); // the client left while the listen was being set up
  const timer = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS).unref();
  const halt = () => {
    clearInterval(timer);
    if (listens.delete(open)) stop();
  };
  const open: OpenListen = {
    principal: p,
    ...(named && { endpoint: named }),
    close: (refused) => {
      halt();
      writeEvent(res, refused ? errorFrom(msg.id, refused) : endpoint.listenEnd(msg.id));
      res.end();
    },
  };
  listens.add(open);
  res.on('close', halt);
}

/** GET /mcp: the session's standalone SSE stream (one per session: a new GET replaces the previous one). */
function openStream(sessions: SessionRegistry, res: ServerResponse, e: SessionEntry): void {
  startSse(res, e.id);
  const timer = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS).unref();
  const channel = { send: (m: JsonRpcMessage) => writeEvent(res, m), end: () => res.end() };
  sessions.attach(e, channel);
  res.on('close', () => {
    clearInterval(timer);
    sessions.detach(e, channel);
  });
}

/**
 * GET /mcp of a shared session: its outbound stream in the store, from after Last-Event-ID (a number) or else from the
 * newest message, each event with its number as its id; this process's instance holds the stream (one per session here:
 * a new GET replaces it), so it is the one that speaks the session's own notifications.
 */
async function sharedStream(sessions: SessionRegistry, res: ServerResponse, e: SessionEntry, lastEventId: string | undefined, log: Logger): Promise<void> {
  const store = sessions.store!;
  const id = e.id;
  // This stream's mark in the record (a server→client request asked anywhere fails at once while no stream is marked).
  const by = randomUUID();
  const unmark = () => store.streamMark(id, by, 0).catch((err: unknown) => log.warn({ session: id, err: (err as Error).message }, 'mcp session stream mark not cleared'));
  let last: number;
  try {
    last = lastEventId !== undefined && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : await store.head(id);
    await store.streamMark(id, by, Date.now(), Date.now() + sessions.idleMs);
  } catch (err) {
    return reject(res, storeRefusal(err));
  }
  if (res.destroyed || e.session.closed) {
    void unmark();
    return res.destroyed ? undefined : reject(res, new SvcError('NOT_FOUND', 'unknown or ended MCP session'));
  }
  const drain = serial(async () => {
    for (const ev of await store.since(id, last)) {
      if (ev.seq <= last) continue;
      if (!writeEvent(res, ev.msg as JsonRpcMessage, ev.seq)) return;
      last = ev.seq;
    }
  }, (err) => log.warn({ session: id, err: (err as Error).message }, 'mcp session stream not read'));
  // Attached before the stream is answered: what the session sends once the client sees the stream goes there.
  const channel = { send: e.append!, end: () => res.end(), wake: drain };
  sessions.attach(e, channel);
  startSse(res, id);
  // The mark and the expiry move together, at most once per streamMarkEvery(): one write, not one per keep-alive.
  const every = streamMarkEvery(sessions.idleMs);
  let marked = Date.now();
  const timer = setInterval(() => {
    res.write(': keep-alive\n\n');
    const now = Date.now();
    if (now - marked < every) return;
    marked = now;
    store.streamMark(id, by, now, now + sessions.idleMs).catch((err: unknown) => log.warn({ session: id, err: (err as Error).message }, 'mcp session stream mark not moved'));
  }, SSE_KEEPALIVE_MS).unref();
  res.on('close', () => {
    clearInterval(timer);
    sessions.detach(e, channel);
    void unmark();
  });
  drain();
}

function headerView(req: IncomingMessage): HeaderView {
  return (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

/** The request's scope for the audit log and tracing (only while either is on). */
function scopeFor(deps: McpDeps, req: IncomingMessage): RequestScope | undefined {
  return deps.runtime.observer.scoped() ? scopeOf(req, deps.ipOf(req)) : undefined;
}

function reject(res: ServerResponse, err: SvcError, status = err.status): void {
  sendJson(res, status, errorFrom(null, err));
}

/** What an Accept header allows; the last distinct value is remembered (clients repeat theirs on every request). */
let lastAccept: { raw: string; accepts: Accepts } = { raw: '*/*', accepts: Object.freeze({ json: true, sse: false }) };

function accepts(req: IncomingMessage): Accepts {
  const raw = req.headers.accept ?? '*/*';
  if (raw === lastAccept.raw) return lastAccept.accepts;
  const a = raw.toLowerCase();
  const parsed = Object.freeze({ json: /application\/json|application\/\*|\*\/\*/.test(a), sse: a.includes('text/event-stream') });
  lastAccept = { raw, accepts: parsed };
  return parsed;
}

function mediaType(v: string | undefined): string {
  return v === 'application/json' ? v : (v ?? '').split(';')[0]!.trim().toLowerCase();
}

/** An unexpected throw in the POST handler becomes a JSON-RPC internal error, logged once. */
function guarded(h: (req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog, named?: string) => Promise<void>, log: Logger) {
  return async (req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog, named?: string): Promise<void> => {
    try {
      await h(req, res, p, cat, named);
    } catch (e) {
      log.error({ err: e }, 'mcp POST failed');
      if (!res.headersSent) sendJson(res, 500, failure(null, RPC.INTERNAL, 'internal error'));
      else res.end();
    }
  };
}
