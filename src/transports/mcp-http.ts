// /mcp: MCP Streamable HTTP over the shared session core (src/mcp/protocol.ts).
// Guarantees: sessions are bound to the subject that opened them (another subject
// gets 404, as for an unknown id); a tools/call, resources/read or prompts/get the
// caller lacks scopes for is answered 403 with an insufficient_scope challenge before
// dispatch; a POST is answered as JSON unless the call sends something before its
// result (then, if the client accepts it, the answer turns into an SSE stream);
// nothing per request outlives the request; idle sessions expire and their number is capped.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Application, type RequestHandler } from 'express';
import type { AuthGate } from '../auth/gate.js';
import type { ResolvedConfig } from '../config.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { parseByteSize } from '../util/bytes.js';
import { readBody, sendEmpty, sendJson } from '../http/raw.js';
import { toSvcError } from '../http/errors.js';
import { errorFrom, failure, RPC, type JsonRpcId, type JsonRpcMessage } from '../mcp/jsonrpc.js';
import { isSupportedVersion, McpSession, type HandleResult, type Sink } from '../mcp/protocol.js';

export interface McpDeps {
  runtime: Runtime;
  gate: AuthGate;
  config: ResolvedConfig;
  logger: Logger;
  /** Runs before the transport and sets res.locals.principal (the route's auth or the anonymous principal). */
  guard?: RequestHandler;
  /** A session unused this long is ended (default 30 min). */
  sessionIdleMs?: number;
  /** At most this many sessions; beyond it the least recently used idle one is ended (default 10,000). */
  maxSessions?: number;
}

export interface McpHandle {
  /** POST /mcp for a principal the caller authenticated (the server's direct path; see http/app.ts). */
  post(req: IncomingMessage, res: ServerResponse, p: Principal): Promise<void>;
  sessionCount(): number;
  /** End sessions idle for longer than the limit (runs every minute by itself). */
  sweep(now?: number): void;
  /** End the standalone GET streams (sessions stay; clients may reconnect). */
  endStreams(): void;
  /** End every session and stream. */
  close(): void;
}

interface Entry {
  readonly id: string;
  readonly sub: string;
  readonly kind: Principal['kind'];
  readonly session: McpSession;
  lastSeen: number;
  busy: number;
  stream?: { res: ServerResponse; timer: NodeJS.Timeout };
}

const KEEPALIVE_MS = 25_000;
const CHECKED: Record<string, ['tool' | 'resource' | 'prompt', 'name' | 'uri']> = {
  'tools/call': ['tool', 'name'],
  'resources/read': ['resource', 'uri'],
  'prompts/get': ['prompt', 'name'],
};

export function mountMcp(app: Application, deps: McpDeps): McpHandle {
  const { runtime, gate, logger } = deps;
  const log = logger.child({ transport: 'mcp' });
  const idleMs = deps.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = deps.maxSessions ?? 10_000;
  const bodyLimit = parseByteSize(deps.config.server.body_limit);
  const sessions = new Map<string, Entry>();

  const endStream = (e: Entry) => {
    if (!e.stream) return;
    clearInterval(e.stream.timer);
    e.stream.res.end();
    e.stream = undefined;
  };
  const end = (e: Entry, why: string) => {
    sessions.delete(e.id);
    e.session.close();
    endStream(e);
    log.debug({ session: e.id, sub: e.sub, why }, 'mcp session ended');
  };

  const sweep = (now = Date.now()) => {
    for (const e of sessions.values()) if (!e.busy && !e.stream && now - e.lastSeen > idleMs) end(e, 'idle');
  };
  const sweeper = setInterval(sweep, Math.min(60_000, idleMs)).unref();

  /** The session a request names, or the HTTP answer already sent. */
  const sessionFor = (req: IncomingMessage, res: ServerResponse, p: Principal): Entry | undefined => {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string' || !id) return void reject(res, new SvcError('INVALID_REQUEST', 'the Mcp-Session-Id header is required after initialize'));
    const e = sessions.get(id);
    // Another subject's session is answered exactly like an unknown one: its existence is not disclosed.
    if (!e || e.sub !== p.sub || e.kind !== p.kind) return void reject(res, new SvcError('NOT_FOUND', 'unknown or ended MCP session'));
    touch(e);
    return e;
  };

  /** The map's order is the recency order: a used session moves to the end. */
  const touch = (e: Entry) => {
    e.lastSeen = Date.now();
    sessions.delete(e.id);
    sessions.set(e.id, e);
  };

  const open = (p: Principal): Entry | undefined => {
    if (sessions.size >= maxSessions) {
      let lru: Entry | undefined;
      for (const e of sessions.values()) {
        if (!e.busy) {
          lru = e;
          break;
        }
      }
      if (!lru) return undefined;
      end(lru, 'evicted: session cap reached');
    }
    const id = randomUUID();
    const entry: Entry = {
      id, sub: p.sub, kind: p.kind, lastSeen: Date.now(), busy: 0,
      session: new McpSession({ runtime, logger: log, transport: 'mcp', send: (m) => standalone(entry, m) }),
    };
    return entry;
  };

  /** POST /mcp for an authenticated principal. Uses only Node's request/response API, so the server can call it directly. */
  const handlePost = async (req: IncomingMessage, res: ServerResponse, p: Principal): Promise<void> => {
    const accept = accepts(req);
    if (!accept.json && !accept.sse) return reject(res, new SvcError('INVALID_REQUEST', 'Accept must include application/json or text/event-stream'), 406);
    if (mediaType(req.headers['content-type']) !== 'application/json') return reject(res, new SvcError('INVALID_REQUEST', 'Content-Type must be application/json'), 415);
    if (!versionOk(req, res)) return;
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, bodyLimit));
    } catch (e) {
      if (e instanceof SyntaxError) return sendJson(res, 400, failure(null, RPC.PARSE_ERROR, 'the body is not valid JSON'));
      return reject(res, toSvcError(e, log)); // CANCELLED (the client went away) is logged there as request.aborted
    }

    const isInit = (m: unknown) => isRecord(m) && m.method === 'initialize';
    if (Array.isArray(body) && body.some(isInit)) return reject(res, new SvcError('INVALID_REQUEST', 'initialize must be sent alone, not in a batch'));
    let entry: Entry | undefined;
    if (isInit(body)) {
      if (req.headers['mcp-session-id'] !== undefined) return reject(res, new SvcError('INVALID_REQUEST', 'initialize opens a new session: send it without Mcp-Session-Id'));
      entry = open(p);
      if (!entry) return reject(res, new SvcError('NOT_READY', 'too many MCP sessions are busy; retry later'));
    } else {
      entry = sessionFor(req, res, p);
      if (!entry) return;
    }

    const cat = runtime.current();
    for (const m of Array.isArray(body) ? body : [body]) {
      if (!isRecord(m) || typeof m.method !== 'string' || m.id === undefined || !isRecord(m.params)) continue;
      const what = CHECKED[m.method];
      const key = what && m.params[what[1]];
      const d = what && typeof key === 'string' ? runtime.check(what[0], key, p, cat) : undefined;
      if (d && !d.ok) {
        log.warn({ event: 'access.denied', sub: p.sub, client_id: p.clientId, transport: 'mcp', kind: what![0], name: key, required: d.required, missing: d.missing }, `403 step-up on /mcp: ${m.method} ${String(key)} needs ${d.missing.join(' ')}`);
        res.setHeader('WWW-Authenticate', gate.challenge({ error: 'insufficient_scope', scopes: d.required, route: '/mcp' }));
        const err = new SvcError('INSUFFICIENT_SCOPE', `${what![0]} ${String(key)} requires scope ${d.missing.join(' ')}`, { data: { required: d.required, missing: d.missing } });
        return sendJson(res, 403, errorFrom(idOf(m), err));
      }
    }

    const e = entry;
    const hasRequest = (Array.isArray(body) ? body : [body]).some((m) => isRecord(m) && typeof m.method === 'string' && m.id !== undefined);
    e.busy++;
    try {
      if (!hasRequest) {
        // Notifications and answers get 202; a message that is neither gets its -32600 with a 400.
        const answer = await e.session.handle(body, p, { catalog: cat });
        return answer === undefined ? sendEmpty(res, 202) : sendJson(res, 400, answer);
      }
      const reply = new PostReply(res, accept, (m) => standalone(e, m));
      const answer = await e.session.handle(body, p, { reply: reply.sink, catalog: cat });
      if (isInit(body)) {
        if (e.session.initialized) {
          sessions.set(e.id, e);
          res.setHeader('Mcp-Session-Id', e.id);
          log.debug({ session: e.id, sub: e.sub, version: e.session.protocolVersion }, 'mcp session opened');
        } else {
          e.session.close();
        }
      }
      reply.finish(answer);
    } finally {
      e.busy--;
      e.lastSeen = Date.now();
    }
  };

  const get: RequestHandler = (req, res) => {
    const p = res.locals.principal as Principal;
    if (!accepts(req).sse) return reject(res, new SvcError('INVALID_REQUEST', 'GET /mcp opens an event stream: Accept must include text/event-stream'), 406);
    if (!versionOk(req, res)) return;
    const e = sessionFor(req, res, p);
    if (!e) return;
    // One standalone stream per session: a new GET replaces the previous one (a reconnect after a dead connection).
    endStream(e);
    startSse(res, e.id);
    const stream = { res, timer: setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS).unref() };
    e.stream = stream;
    res.on('close', () => {
      clearInterval(stream.timer);
      if (e.stream === stream) e.stream = undefined;
      e.lastSeen = Date.now();
    });
  };

  const del: RequestHandler = (req, res) => {
    if (!versionOk(req, res)) return;
    const e = sessionFor(req, res, res.locals.principal as Principal);
    if (!e) return;
    end(e, 'deleted by the client');
    sendEmpty(res, 204);
  };

  const router = express.Router();
  const post = guarded(handlePost, log);
  router.post('/', (req, res) => post(req, res, res.locals.principal as Principal));
  router.get('/', get);
  router.delete('/', del);
  router.all('/', (_req, res) => {
    res.setHeader('Allow', 'GET, POST, DELETE');
    reject(res, new SvcError('INVALID_REQUEST', 'use POST, GET or DELETE on /mcp'), 405);
  });
  if (deps.guard) app.use('/mcp', deps.guard, router);
  else app.use('/mcp', router);

  return {
    post,
    sessionCount: () => sessions.size,
    sweep,
    endStreams() {
      for (const e of sessions.values()) endStream(e);
    },
    close() {
      clearInterval(sweeper);
      for (const e of [...sessions.values()]) end(e, 'server closing');
    },
  };
}

/** Messages with no request to ride on go to the session's GET stream, if one is open. */
function standalone(e: Entry, m: JsonRpcMessage): boolean {
  return e.stream ? writeEvent(e.stream.res, m) : false;
}

/**
 * The answer to one POST. It stays a plain JSON answer while the call sends nothing; the first
 * notification or server→client request turns it into an SSE stream (when the client accepts one),
 * and the result is the stream's last event. A client that accepts only SSE always gets a stream.
 */
class PostReply {
  #mode: 'pending' | 'sse' | 'done' = 'pending';
  readonly #res: ServerResponse;
  readonly #accept: { json: boolean; sse: boolean };
  readonly #fallback: Sink;

  constructor(res: ServerResponse, accept: { json: boolean; sse: boolean }, fallback: Sink) {
    this.#res = res;
    this.#accept = accept;
    this.#fallback = fallback;
  }

  readonly sink: Sink = (m) => {
    if (this.#mode === 'done' || this.#res.destroyed) return this.#fallback(m);
    if (this.#mode === 'pending') {
      if (!this.#accept.sse) return this.#fallback(m);
      startSse(this.#res);
      this.#mode = 'sse';
    }
    return writeEvent(this.#res, m);
  };

  finish(answer: HandleResult): void {
    const mode = this.#mode;
    this.#mode = 'done';
    const res = this.#res;
    if (mode === 'done' || res.destroyed) return;
    if (mode === 'pending') {
      if (answer === undefined) return sendEmpty(res, 202);
      if (this.#accept.json) return sendJson(res, 200, answer);
      startSse(res);
    }
    for (const m of answer === undefined ? [] : Array.isArray(answer) ? answer : [answer]) writeEvent(res, m);
    res.end();
  }
}

function startSse(res: ServerResponse, sessionId?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  if (sessionId) res.setHeader('Mcp-Session-Id', sessionId);
  res.flushHeaders();
}

function writeEvent(res: ServerResponse, m: JsonRpcMessage): boolean {
  if (res.writableEnded || res.destroyed) return false;
  res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  return true;
}

function reject(res: ServerResponse, err: SvcError, status = err.status): void {
  sendJson(res, status, errorFrom(null, err));
}

function versionOk(req: IncomingMessage, res: ServerResponse): boolean {
  const v = req.headers['mcp-protocol-version'];
  if (v === undefined || (typeof v === 'string' && isSupportedVersion(v))) return true;
  reject(res, new SvcError('INVALID_REQUEST', `unsupported MCP-Protocol-Version ${String(v)}`));
  return false;
}

function accepts(req: IncomingMessage): { json: boolean; sse: boolean } {
  const a = (req.headers.accept ?? '*/*').toLowerCase();
  return { json: /application\/json|application\/\*|\*\/\*/.test(a), sse: a.includes('text/event-stream') };
}

function mediaType(v: string | undefined): string {
  return (v ?? '').split(';')[0]!.trim().toLowerCase();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function idOf(m: Record<string, unknown>): JsonRpcId | null {
  return typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null;
}

/** An unexpected throw in the POST handler becomes a JSON-RPC internal error, logged once. */
function guarded(h: (req: IncomingMessage, res: ServerResponse, p: Principal) => Promise<void>, log: Logger) {
  return async (req: IncomingMessage, res: ServerResponse, p: Principal): Promise<void> => {
    try {
      await h(req, res, p);
    } catch (e) {
      log.error({ err: e }, 'mcp POST failed');
      if (!res.headersSent) sendJson(res, 500, failure(null, RPC.INTERNAL, 'internal error'));
      else res.end();
    }
  };
}
