// /mcp: MCP Streamable HTTP — decodes requests, hands them to the session core
// (src/mcp/protocol.ts) through the session registry (src/mcp/sessions.ts), encodes
// the answers (JSON, or SSE via ./sse.ts).
// Guarantees: a session is used only by the principal that opened it (anyone else
// gets 404, as for an unknown id); a tools/call, resources/read or prompts/get the
// caller lacks scopes for is answered 403 with an insufficient_scope challenge before
// dispatch; a POST is answered as JSON unless the call sends something before its
// result (then, if the client accepts it, the answer turns into an SSE stream);
// nothing per request outlives the request; a POST runs on one catalog, the policy
// snapshot its caller was authenticated with (res.locals.policy, or the direct path's).
// Both MCP eras share the endpoint, chosen per request by what it says (src/mcp/era.ts): a
// 2025 client gets the initialize handshake and Mcp-Session-Id sessions; a 2026-07-28
// request is served statelessly by src/mcp/modern.ts (header checks with the revision's
// HTTP statuses, no session, GET/DELETE answered 405, subscriptions/listen as an SSE
// stream that a server shutdown ends).

import { scopeOf, type RequestScope } from '../observe/request-scope.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Application, type RequestHandler } from 'express';
import type { TaskEngine } from '../tasks/engine.js';
import type { AuthGate } from '../auth/gate.js';
import type { ResolvedConfig } from '../config.js';
import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PolicySnapshot } from '../policy/store.js';
import type { Runtime } from '../runtime/runtime.js';
import { denial, rateLimited } from '../runtime/denial.js';
import { parseByteSize } from '../util/bytes.js';
import { readBody, sendEmpty, sendJson } from '../http/raw.js';
import { retryAfterSeconds, toSvcError } from '../http/errors.js';
import { classify, errorFrom, failure, RPC, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from '../mcp/jsonrpc.js';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, McpSession, PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { eraOf } from '../mcp/era.js';
import { META, ModernProtocol, SUPPORTED_VERSIONS } from '../mcp/modern.js';
import type { HeaderView } from '../mcp/modern-headers.js';
import { ResponseSignal } from './call-context.js';
import { SessionRegistry, type SessionEntry } from '../mcp/sessions.js';
import type { InputRounds } from '../mcp/input-rounds.js';
import { PostReply, startSse, writeEvent, type Accepts } from './sse.js';

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
}

export interface McpHandle {
  /** POST /mcp for a principal the caller authenticated with the policy of `cat` (the server's direct path; see http/app.ts). */
  post(req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog): Promise<void>;
  /** End every open 2026-07-28 subscriptions/listen stream with its final response (server shutdown). */
  closeStreams(): void;
}


const KEEPALIVE_MS = 25_000;
const CHECKED: Record<string, ['tool' | 'resource' | 'prompt', 'name' | 'uri']> = {
  'tools/call': ['tool', 'name'],
  'resources/read': ['resource', 'uri'],
  'prompts/get': ['prompt', 'name'],
};

export function mountMcp(app: Application, deps: McpDeps): McpHandle {
  const log = deps.logger.child({ transport: 'mcp' });
  const modern = new ModernProtocol({ runtime: deps.runtime, logger: log, transport: 'mcp', routePublic: deps.config.routes.public.includes('/mcp'), supportedVersions: SUPPORTED_VERSIONS, rounds: deps.rounds, tasks: deps.tasks });
  const listens = new Set<() => void>();
  const post = guarded(postHandler(deps, log, modern, listens), log);
  const router = express.Router();
  router.post('/', (req, res) => post(req, res, res.locals.principal as Principal, (res.locals.policy as PolicySnapshot | undefined)?.catalog));
  router.get('/', (req, res, next) => (modernOnly(req, res) ? undefined : next()), getHandler(deps.sessions));
  router.delete('/', (req, res) => {
    if (modernOnly(req, res) || !versionOk(req, res)) return;
    const e = sessionFor(deps.sessions, req, res, res.locals.principal as Principal);
    if (!e) return;
    deps.sessions.end(e, 'deleted by the client');
    sendEmpty(res, 204);
  });
  router.all('/', (_req, res) => {
    res.setHeader('Allow', 'GET, POST, DELETE');
    reject(res, new SvcError('INVALID_REQUEST', 'use POST, GET or DELETE on /mcp'), 405);
  });
  if (deps.guard) app.use('/mcp', deps.guard, router);
  else app.use('/mcp', router);
  return {
    post,
    closeStreams: () => {
      for (const end of [...listens]) end();
    },
  };
}

/** GET and DELETE belong to 2025 sessions: a 2026-07-28 request (no session, a non-2025 version header) gets 405. True when answered. */
function modernOnly(req: IncomingMessage, res: ServerResponse): boolean {
  const hv = req.headers['mcp-protocol-version'];
  if (eraOf({ session: typeof req.headers['mcp-session-id'] === 'string', headerVersion: typeof hv === 'string' ? hv : undefined }) === 'legacy') return false;
  res.setHeader('Allow', 'POST');
  reject(res, new SvcError('INVALID_REQUEST', `MCP ${hv} has no ${req.method} on /mcp: send every request as a POST`), 405);
  return true;
}

/** POST /mcp for an authenticated principal. Uses only Node's request/response API, so the server can call it directly. */
function postHandler(deps: McpDeps, log: Logger, modern: ModernProtocol, listens: Set<() => void>) {
  const { runtime, sessions } = deps;
  const bodyLimit = parseByteSize(deps.config.server.body_limit);
  const isInit = (m: unknown) => isRecord(m) && m.method === 'initialize';

  return async (req: IncomingMessage, res: ServerResponse, p: Principal, pinned?: Catalog): Promise<void> => {
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
    if (!Array.isArray(body)) {
      const hv = req.headers['mcp-protocol-version'];
      const era = eraOf({
        session: typeof req.headers['mcp-session-id'] === 'string',
        method: isRecord(body) && typeof body.method === 'string' ? body.method : undefined,
        headerVersion: typeof hv === 'string' ? hv : undefined,
        metaVersion: isRecord(body) && isRecord(body.params) && isRecord(body.params._meta) ? body.params._meta[META.protocolVersion] : undefined,
      });
      if (era === 'modern') return modernPost(deps, log, modern, listens, req, res, p, body, accept, pinned ?? deps.runtime.current());
    }
    if (!versionOk(req, res)) return;
    const messages = Array.isArray(body) ? body : [body];
    if (Array.isArray(body) && body.some(isInit)) return reject(res, new SvcError('INVALID_REQUEST', 'initialize must be sent alone, not in a batch'));

    let e: SessionEntry | undefined;
    if (isInit(body)) {
      if (req.headers['mcp-session-id'] !== undefined) return reject(res, new SvcError('INVALID_REQUEST', 'initialize opens a new session: send it without Mcp-Session-Id'));
      e = sessions.create(p, 'mcp', (entry) => new McpSession({ runtime, logger: log, transport: 'mcp', send: (m) => SessionRegistry.send(entry, m), tasks: deps.tasks }));
      if (!e) {
        deps.runtime.observer.limited('mcp_session_cap', '/mcp', 'mcp', p, undefined, scopeFor(deps, req));
        return reject(res, new SvcError('NOT_READY', 'too many MCP sessions are busy; retry later'));
      }
    } else {
      e = sessionFor(sessions, req, res, p);
      if (!e) return;
    }

    const cat = pinned ?? runtime.current();
    const refused = stepUp(deps, log, req, res, messages, p, cat);
    if (refused === true || (refused !== false && await refused)) return;

    const entry = e;
    const hasRequest = messages.some((m) => isRecord(m) && typeof m.method === 'string' && m.id !== undefined);
    entry.busy++;
    try {
      if (!hasRequest) {
        // Notifications and answers get 202; a message that is neither gets its -32600 with a 400.
        const answer = await entry.session.handle(body, p, { catalog: cat, scope: scopeFor(deps, req) });
        return answer === undefined ? sendEmpty(res, 202) : sendJson(res, 400, answer);
      }
      const reply = new PostReply(res, accept, (m) => SessionRegistry.send(entry, m));
      const answer = await entry.session.handle(body, p, { reply: reply.sink, catalog: cat, scope: scopeFor(deps, req) });
      if (isInit(body)) {
        if (entry.session.initialized) {
          sessions.add(entry);
          res.setHeader('Mcp-Session-Id', entry.id);
        } else {
          entry.session.close();
        }
      }
      reply.finish(answer);
    } finally {
      entry.busy--;
      entry.lastSeen = Date.now();
    }
  };
}

/** One 2026-07-28 POST: admitted in the revision's order, stepped up like a 2025 call, served with no session. */
async function modernPost(deps: McpDeps, log: Logger, modern: ModernProtocol, listens: Set<() => void>, req: IncomingMessage, res: ServerResponse, p: Principal, body: unknown, accept: Accepts, cat: Catalog): Promise<void> {
  const c = classify(body);
  if (c.kind === 'invalid') return sendJson(res, 400, failure(c.id, RPC.INVALID_REQUEST, c.reason));
  if (c.kind === 'response') return sendJson(res, 400, failure(c.msg.id, RPC.INVALID_REQUEST, 'a 2026-07-28 server sends no requests, so there is nothing to answer'));
  if (c.kind === 'notification') return sendEmpty(res, 202);
  const msg = c.msg;
  const adm = modern.admit(msg, headerView(req), cat);
  if (!adm.ok) return sendJson(res, adm.status, adm.answer);
  const refused = stepUp(deps, log, req, res, [msg], p, cat);
  if (refused === true || (refused !== false && await refused)) return;
  if (msg.method === 'subscriptions/listen') return listenStream(modern, listens, log, res, msg, p, accept);
  const reply = new PostReply(res, accept, NO_FALLBACK);
  const { status, answer } = await modern.handle(msg, adm.meta, p, reply.sink, cat, new ResponseSignal(res, streamClosed), scopeFor(deps, req));
  if (status !== 200 && !reply.streaming) return res.destroyed ? undefined : sendJson(res, status, answer);
  reply.finish(answer);
}

/** A modern POST has no session to carry a message once its own stream is done. */
const NO_FALLBACK = (): boolean => false;

/** A modern call's signal aborts with this when the client closes the stream before the answer. */
const streamClosed = () => new SvcError('BACKEND_TIMEOUT', 'the client closed the stream');

/**
 * subscriptions/listen: an SSE stream that opens with the acknowledgement and carries the tagged change notifications
 * until either side ends it. When the listen cannot be set up (a shared task store that is down), the stream carries
 * the request's JSON-RPC error and ends.
 */
async function listenStream(modern: ModernProtocol, listens: Set<() => void>, log: Logger, res: ServerResponse, msg: JsonRpcRequest, p: Principal, accept: Accepts): Promise<void> {
  if (!accept.sse) return reject(res, new SvcError('INVALID_REQUEST', 'subscriptions/listen answers with an event stream: Accept must include text/event-stream'), 406);
  startSse(res);
  let stop: () => void;
  try {
    stop = await modern.listen(msg, p, (m) => writeEvent(res, m));
  } catch (e) {
    writeEvent(res, errorFrom(msg.id, toSvcError(e, log)));
    return void res.end();
  }
  if (res.destroyed) return stop(); // the client left while the listen was being set up
  const timer = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS).unref();
  const end = () => {
    writeEvent(res, modern.listenEnd(msg.id));
    res.end();
  };
  listens.add(end);
  res.on('close', () => {
    clearInterval(timer);
    stop();
    listens.delete(end);
  });
}

function headerView(req: IncomingMessage): HeaderView {
  return (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

/**
 * The HTTP-level refusals before dispatch, true when answered: a checked method the caller
 * lacks scopes for gets the 403 step-up (naming the concrete scopes, tenant-bound ones
 * filled from the arguments); one over its quota gets 429 with Retry-After. A bound-argument
 * refusal is not a scope problem: it is left to the call, which answers ARGUMENT_BOUND.
 */
/** The request's scope for the audit log and tracing (only while either is on). */
function scopeFor(deps: McpDeps, req: IncomingMessage): RequestScope | undefined {
  return deps.runtime.observer.scoped() ? scopeOf(req, deps.ipOf(req)) : undefined;
}

function stepUp(deps: McpDeps, log: Logger, req: IncomingMessage, res: ServerResponse, messages: unknown[], p: Principal, cat: ReturnType<Runtime['current']>): boolean | Promise<boolean> {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m) || typeof m.method !== 'string' || m.id === undefined || !isRecord(m.params)) continue;
    const what = CHECKED[m.method];
    const key = what && m.params[what[1]];
    if (!what || typeof key !== 'string') continue;
    const d = deps.runtime.check(what[0], key, p, cat, m.params.arguments);
    if (d && !d.ok && d.reason !== 'bound_argument') {
      const err = denial(log, p, 'mcp', what[0], key, d, deps.runtime.observer, scopeFor(deps, req));
      res.setHeader('WWW-Authenticate', deps.gate.challenge({ error: 'insufficient_scope', scopes: d.required, route: '/mcp' }));
      sendJson(res, 403, errorFrom(idOf(m), err));
      return true;
    }
    const wait = d?.ok ? deps.runtime.quotaWait(what[0], key, p, cat) : 0;
    // A quota counted elsewhere (PostgreSQL) answers later: the rest of the check continues then.
    if (typeof wait !== 'number') return wait.then((w) => tooMany(res, m, what[0], key, w) || stepUp(deps, log, req, res, messages.slice(i + 1), p, cat));
    if (tooMany(res, m, what[0], key, wait)) return true;
  }
  return false;
}

/** The 429 for a call over its quota (true when answered). */
function tooMany(res: ServerResponse, m: Record<string, unknown>, kind: string, key: string, wait: number): boolean {
  if (wait <= 0) return false;
  const err = rateLimited(kind, key, wait, 'for this caller');
  res.setHeader('Retry-After', String(retryAfterSeconds(wait)));
  sendJson(res, 429, errorFrom(idOf(m), err));
  return true;
}

/** GET /mcp: the session's standalone SSE stream (one per session: a new GET replaces the previous one). */
function getHandler(sessions: SessionRegistry): RequestHandler {
  return (req, res) => {
    if (!accepts(req).sse) return reject(res, new SvcError('INVALID_REQUEST', 'GET /mcp opens an event stream: Accept must include text/event-stream'), 406);
    if (!versionOk(req, res)) return;
    const e = sessionFor(sessions, req, res, res.locals.principal as Principal);
    if (!e) return;
    startSse(res, e.id);
    const timer = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS).unref();
    const channel = { send: (m: JsonRpcMessage) => writeEvent(res, m), end: () => res.end() };
    sessions.attach(e, channel);
    res.on('close', () => {
      clearInterval(timer);
      sessions.detach(e, channel);
    });
  };
}

/** The session a request names, or undefined with the HTTP answer already sent. */
function sessionFor(sessions: SessionRegistry, req: IncomingMessage, res: ServerResponse, p: Principal): SessionEntry | undefined {
  const id = req.headers['mcp-session-id'];
  if (typeof id !== 'string' || !id) return void reject(res, new SvcError('INVALID_REQUEST', 'the Mcp-Session-Id header is required after initialize'));
  const e = sessions.find(id, p);
  if (!e) reject(res, new SvcError('NOT_FOUND', 'unknown or ended MCP session'));
  return e;
}

function reject(res: ServerResponse, err: SvcError, status = err.status): void {
  sendJson(res, status, errorFrom(null, err));
}

function versionOk(req: IncomingMessage, res: ServerResponse): boolean {
  const v = req.headers['mcp-protocol-version'];
  if (v === undefined || (typeof v === 'string' && isSupportedVersion(v))) return true;
  reject(res, new SvcError('INVALID_REQUEST', `unsupported MCP-Protocol-Version ${String(v)} (2025 sessions speak ${PROTOCOL_VERSIONS.join(', ')}; ${LATEST_PROTOCOL_VERSION} is the latest)`));
  return false;
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

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function idOf(m: Record<string, unknown>): JsonRpcId | null {
  return typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null;
}

/** An unexpected throw in the POST handler becomes a JSON-RPC internal error, logged once. */
function guarded(h: (req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog) => Promise<void>, log: Logger) {
  return async (req: IncomingMessage, res: ServerResponse, p: Principal, cat?: Catalog): Promise<void> => {
    try {
      await h(req, res, p, cat);
    } catch (e) {
      log.error({ err: e }, 'mcp POST failed');
      if (!res.headersSent) sendJson(res, 500, failure(null, RPC.INTERNAL, 'internal error'));
      else res.end();
    }
  };
}
