// The one MCP endpoint behind /mcp and /ws. Every inbound JSON value (a POST body, a socket
// message) goes through receive(): its era is read once (era.ts), a 2026-07-28 request is
// classified, admitted in the revision's order and served statelessly (modern.ts), a 2025
// message goes to its session (protocol.ts: /ws brings the socket's own, on /mcp the
// Mcp-Session-Id header names it or initialize opens it), and a subscriptions/listen is
// handed back for the transport to open its stream. The transports keep only their framing.
// Guarantees: a session is used only by the principal that opened it, on the endpoint it was opened
// on (anyone else, or anywhere else, is told what an unknown id gets); an Exchange on a named endpoint
// (/mcp/NAME, /ws/NAME) carries that endpoint's view as its catalog and its name, which the sessions,
// listens and follow-ups it opens keep; one outcome per input, with the status the revision gives it and,
// for one request refused with a SvcError, that error (refusal) — the transport maps an access
// refusal to its wire form in one place (HTTP: 403 step-up, 429 Retry-After); a session
// counts as busy while it handles a message, so it is never swept or evicted mid-request.
// With a SessionStore (shared-sessions.ts), an /mcp session's record is created before its initialize is
// answered; a request, GET or DELETE naming a session this process holds no instance of reads the record
// (the same owner and endpoint checks: anyone else is told what an unknown id gets) and builds one from it,
// cached under the registry's cap while the store is listening, else used for that request only; a hit
// on a cached instance adds no await. Without a store nothing of this runs.

import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import type { SignalSource } from '../core/call-context.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RequestScope } from '../core/request-scope.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TaskEngine } from '../tasks/engine.js';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS } from './constants.js';
import { byHeaders, eraOf } from './era.js';
import type { InputRounds } from './input-rounds.js';
import { classify, errorFrom, failure, RPC, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.js';
import type { HeaderView } from './modern-headers.js';
import { ModernProtocol } from './modern.js';
import { McpSession, type HandleOptions, type HandleResult, type Sink } from './protocol.js';
import { SessionRegistry, type SessionEntry } from './sessions.js';
import { recordOf, share, storeRefusal } from './shared-sessions.js';
import { principalKey } from '../core/principal-key.js';

export interface EndpointOptions {
  transport: 'mcp' | 'ws';
  /** The route serving this transport is public (2026 cache hints may then be `public`). */
  routePublic: boolean;
  runtime: Runtime;
  tasks?: TaskEngine;
  sessions: SessionRegistry;
  rounds: InputRounds;
  logger: Logger;
}

/** One inbound JSON value and what its transport knows about it. */
export interface Exchange {
  readonly principal: Principal;
  /** The catalog of the policy snapshot the caller was authenticated with: on a named endpoint, that endpoint's view of it. */
  readonly catalog: Catalog;
  /** The named endpoint the request came to (absent: the default endpoint). */
  readonly endpoint?: string;
  readonly scope?: RequestScope;
  /** The request's HTTP headers (/mcp); /ws has none, so no header check applies there. */
  readonly headers?: HeaderView;
  /** Aborts a 2026 call when its client goes away. */
  readonly signal?: SignalSource;
  /** Where this request's own messages go while it runs (its POST stream, the socket). */
  readonly reply: Sink;
  /** The 2025 session serving it: /ws gives its socket's; on /mcp receive() sets the one found or opened. */
  session?: SessionEntry;
  /** /ws: the socket's open subscriptions/listen streams by request id (a notifications/cancelled for one ends it). */
  readonly listens?: Map<JsonRpcId, () => void>;
}

export interface Outcome {
  /** The HTTP status this answer has (200 unless the revision or the refusal says otherwise; 202: nothing to answer). */
  status: number;
  answer: HandleResult;
  /** The SvcError behind a single request's error answer. */
  refusal?: SvcError;
  /** The 2025 session this input's initialize opened (HTTP announces it as Mcp-Session-Id). */
  opened?: string;
  /** An admitted subscriptions/listen: the transport opens its stream and calls listen(). */
  listen?: JsonRpcRequest;
}

/** A GET or DELETE on /mcp: the session it names, or why not (with the Allow header of a 405). */
export type SessionTarget = { ok: true; entry: SessionEntry } | { ok: false; error: SvcError; status: number; allow?: string };

export class McpEndpoint {
  readonly #opts: EndpointOptions;
  readonly #modern: ModernProtocol;

  constructor(opts: EndpointOptions) {
    this.#opts = opts;
    this.#modern = new ModernProtocol({ runtime: opts.runtime, logger: opts.logger, transport: opts.transport, routePublic: opts.routePublic, rounds: opts.rounds, tasks: opts.tasks });
  }

  async receive(body: unknown, x: Exchange): Promise<Outcome> {
    const session = x.session ? x.session.session.initialized : x.headers?.('mcp-session-id') !== undefined;
    if (eraOf(body, session, x.headers?.('mcp-protocol-version')) === 'modern' || cancelsListen(body, x)) return this.#modernInput(body, x);
    return this.#legacyInput(body, x);
  }

  /**
   * Opens an admitted subscriptions/listen on `send`: the acknowledgement, then each notification; resolves to the
   * function that stops it. Rejects (nothing sent) when a shared task store cannot be read.
   */
  listen(msg: JsonRpcRequest, principal: Principal, send: (m: JsonRpcNotification) => boolean, endpoint?: string): Promise<() => void> {
    return this.#modern.listen(msg, principal, send, endpoint);
  }

  /** The final response that ends a listen stream (server shutdown). */
  listenEnd(id: JsonRpcId): JsonRpcResponse {
    return this.#modern.listenEnd(id);
  }

  /** The 2025 session of a /ws socket: registered at once, speaking on the socket. */
  openSocketSession(principal: Principal, send: Sink, endpoint?: string): SessionEntry {
    const { sessions, runtime, logger, tasks } = this.#opts;
    const entry = sessions.create(principal, 'ws', () => new McpSession({ runtime, logger, transport: 'ws', send, tasks, endpoint }), endpoint)!;
    sessions.add(entry);
    return entry;
  }

  /** GET and DELETE belong to 2025 sessions: the session the headers name (a shared one's instance held here), or the refusal. */
  async sessionTarget(headers: HeaderView, principal: Principal, method: string, endpoint?: string): Promise<SessionTarget> {
    const hv = headers('mcp-protocol-version');
    if (byHeaders(headers('mcp-session-id') !== undefined, hv) === 'modern') {
      return { ok: false, status: 405, allow: 'POST', error: new SvcError('INVALID_REQUEST', `MCP ${hv} has no ${method} on /mcp: send every request as a POST`) };
    }
    const bad = versionProblem(hv);
    if (bad) return { ok: false, status: bad.status, error: bad };
    let found = this.#find(headers, principal, endpoint);
    if (found instanceof SvcError && found.code === 'NOT_FOUND' && this.#opts.sessions.store) found = await this.#load(headers('mcp-session-id')!, principal, endpoint, true);
    return found instanceof SvcError ? { ok: false, status: found.status, error: found } : { ok: true, entry: found };
  }

  async #modernInput(body: unknown, x: Exchange): Promise<Outcome> {
    const c = classify(body);
    if (c.kind === 'invalid') return { status: 400, answer: failure(c.id, RPC.INVALID_REQUEST, c.reason) };
    if (c.kind === 'response') return { status: 400, answer: failure(c.msg.id, RPC.INVALID_REQUEST, 'a 2026-07-28 server sends no requests, so there is nothing to answer') };
    if (c.kind === 'notification') {
      const id = c.msg.params?.requestId;
      if (c.msg.method === 'notifications/cancelled' && (typeof id === 'string' || typeof id === 'number')) x.listens?.get(id)?.();
      return ACCEPTED;
    }
    const adm = this.#modern.admit(c.msg, x.headers, x.catalog);
    if (!adm.ok) return { status: adm.status, answer: adm.answer };
    if (c.msg.method === 'subscriptions/listen') return { status: 200, answer: undefined, listen: c.msg };
    return this.#modern.handle(c.msg, adm.meta, x.principal, x.reply, x.catalog, x.signal, x.scope);
  }

  async #legacyInput(body: unknown, x: Exchange): Promise<Outcome> {
    const batch = Array.isArray(body);
    const init = !batch && isInit(body);
    if (x.headers) {
      const bad = versionProblem(x.headers('mcp-protocol-version'));
      if (bad) return refused(bad);
      if (batch && body.some(isInit)) return refused(new SvcError('INVALID_REQUEST', 'initialize must be sent alone, not in a batch'));
    }
    let opened: SessionEntry | undefined;
    if (!x.session) {
      if (init) {
        if (x.headers?.('mcp-session-id') !== undefined) return refused(new SvcError('INVALID_REQUEST', 'initialize opens a new session: send it without Mcp-Session-Id'));
        opened = this.#open(x);
        if (!opened) return refused(new SvcError('NOT_READY', 'too many MCP sessions are busy; retry later'));
        x.session = opened;
      } else {
        let found = this.#find(x.headers!, x.principal, x.endpoint);
        // Only a miss with a store awaits: a cached instance is served at once.
        if (found instanceof SvcError && found.code === 'NOT_FOUND' && this.#opts.sessions.store) found = await this.#load(x.headers!('mcp-session-id')!, x.principal, x.endpoint, false);
        if (found instanceof SvcError) return refused(found);
        x.session = found;
      }
    }
    const e = x.session;
    const hasRequest = batch ? body.some(isRequest) : isRequest(body);
    e.busy++;
    try {
      const opts: HandleOptions = { reply: x.reply, catalog: x.catalog, scope: x.scope };
      const answer = await e.session.handle(body, x.principal, opts);
      // Notifications and answers get 202; a message that is neither gets its -32600 with a 400.
      if (!hasRequest) return answer === undefined ? ACCEPTED : { status: 400, answer };
      if (!opened) return { status: 200, answer, refusal: opts.refusal };
      if (!opened.session.initialized) {
        opened.session.close();
        return { status: 200, answer, refusal: opts.refusal };
      }
      const { sessions } = this.#opts;
      if (opened.append) {
        try {
          await sessions.store!.create(recordOf(opened, Date.now() + sessions.idleMs));
        } catch (err) {
          opened.session.close();
          return refused(storeRefusal(err));
        }
      }
      sessions.add(opened);
      return { status: 200, answer, opened: opened.id };
    } finally {
      e.busy--;
      e.lastSeen = Date.now();
      // A shared session's instance built for this request alone (not cached) ends with it; the session goes on.
      if (e.append && this.#opts.sessions.peek(e.id) !== e) e.session.close();
    }
  }

  /**
   * This process's instance of the shared session `id`, built from its record when `p` opened it on `endpoint` (else
   * what an unknown id gets). Cached when the store is listening and there is room (`hold`: cached whenever there is
   * room, for a GET stream); else it serves one request.
   */
  async #load(id: string, p: Principal, endpoint: string | undefined, hold: boolean): Promise<SessionEntry | SvcError> {
    const { sessions } = this.#opts;
    const store = sessions.store!;
    let r;
    try {
      r = await store.get(id);
    } catch (err) {
      return storeRefusal(err);
    }
    if (!r || r.owner !== principalKey(p) || (r.endpoint || undefined) !== endpoint) return new SvcError('NOT_FOUND', 'unknown or ended MCP session');
    const raced = sessions.find(id, p, endpoint);
    if (raced) return raced;
    const make = (entry: SessionEntry) => this.#session(entry, endpoint);
    const cached = (hold || store.listening()) && sessions.instance(r, p, make, true);
    const e = cached || sessions.instance(r, p, make, false)!;
    e.session.apply(r, p);
    if (cached) sessions.add(e);
    store.touch(id, Date.now() + sessions.idleMs).catch((err: unknown) => this.#opts.logger.warn({ session: id, err: (err as Error).message }, 'mcp session expiry not moved'));
    return e;
  }

  /** The McpSession of an /mcp entry: speaking on its standing channel; with a store, an instance of a shared session. */
  #session(entry: SessionEntry, endpoint: string | undefined): McpSession {
    const { sessions, runtime, logger, tasks, transport } = this.#opts;
    const shared = sessions.store && share(entry, sessions, logger);
    return new McpSession({
      runtime, logger, transport, send: (m) => SessionRegistry.send(entry, m), tasks, endpoint,
      ...(shared && { shared, fallback: (m) => SessionRegistry.relay(entry, m) }),
    });
  }

  /** A new /mcp session for an initialize (not registered until it succeeds), or undefined at the session cap. */
  #open(x: Exchange): SessionEntry | undefined {
    const { sessions, runtime, transport } = this.#opts;
    const e = sessions.create(x.principal, transport, (entry) => this.#session(entry, x.endpoint), x.endpoint);
    if (!e) runtime.observer.limited('mcp_session_cap', '/mcp', transport, x.principal, undefined, x.scope);
    return e;
  }

  #find(headers: HeaderView, p: Principal, endpoint: string | undefined): SessionEntry | SvcError {
    const id = headers('mcp-session-id');
    if (!id) return new SvcError('INVALID_REQUEST', 'the Mcp-Session-Id header is required after initialize');
    return this.#opts.sessions.find(id, p, endpoint) ?? new SvcError('NOT_FOUND', 'unknown or ended MCP session');
  }
}

const ACCEPTED: Outcome = Object.freeze({ status: 202, answer: undefined });

function refused(err: SvcError): Outcome {
  return { status: err.status, answer: errorFrom(null, err) };
}

/** A 2025 MCP-Protocol-Version header this server does not speak, as its refusal. */
function versionProblem(v: string | undefined): SvcError | undefined {
  if (v === undefined || isSupportedVersion(v)) return undefined;
  return new SvcError('INVALID_REQUEST', `unsupported MCP-Protocol-Version ${v} (2025 sessions speak ${PROTOCOL_VERSIONS.join(', ')}; ${LATEST_PROTOCOL_VERSION} is the latest)`);
}

/** /ws: a notifications/cancelled for one of the socket's open listens belongs to the modern path. */
function cancelsListen(body: unknown, x: Exchange): boolean {
  if (!x.listens?.size) return false;
  const m = body as { method?: unknown; params?: { requestId?: unknown } } | null;
  const id = m?.method === 'notifications/cancelled' ? m.params?.requestId : undefined;
  return (typeof id === 'string' || typeof id === 'number') && x.listens.has(id);
}

function isInit(m: unknown): boolean {
  return m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize';
}

function isRequest(m: unknown): boolean {
  return m !== null && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' && (m as { id?: unknown }).id !== undefined;
}
