// /ws: MCP's JSON-RPC over one WebSocket (subprotocol `mcp`) — the framing of the one MCP
// endpoint (src/mcp/endpoint.ts), which also serves /mcp.
// Guarantees: the front door (src/transports/front-door.ts: Host/Origin, tokens only in headers,
// the bearer token), then the subprotocol, are checked during the
// handshake, so a refused upgrade is a plain HTTP answer (401 with the challenge, 403,
// 404, 400) and never an open socket; the credential is re-checked on every message and
// periodically (and at once when its OAuth grant is revoked on any replica), and a socket whose credential lapsed is closed with 4401; a malformed
// frame gets a -32700 answer, never a crash; messages over server.body_limit close the
// socket with 1009; at most ws_max_in_flight requests run per socket; a socket that
// misses a pong, or stops reading its answers, is dropped.
// Both MCP eras share a socket (the endpoint tells them apart per message): anything 2025
// goes to the socket's own session; a 2026-07-28 subscriptions/listen streams its tagged
// notifications on the socket until the client sends notifications/cancelled for it or the
// socket closes.
//
// /ws/NAME serves the named endpoint NAME the same way: its door (endpoint-door.ts: the endpoint exists,
// the token is for it, the caller holds its required_scopes) is part of the handshake, and the socket's
// session and every message live in the endpoint's view of the current policy. A policy change after
// which the door no longer admits the socket's caller (a reload added required_scopes it lacks, or
// removed the endpoint) closes the socket with 4403 at once (endpoint-door.ts guardSessions), before the
// change is notified on it; nothing that arrives on a socket being closed is dispatched.
//
// Close codes: 4401 credential expired/revoked/rotated · 4403 the endpoint's door no longer admits the
// caller · 1009 message too big · 1008 the client does not read its answers · 1001 server shutting down.

import { scopeOf } from '../core/request-scope.js';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Application } from 'express';
import type expressWs from 'express-ws';
import type { WebSocketServer } from 'ws';
import type { AuthGate, ChallengeError } from '../auth/gate.js';
import type { ResolvedConfig } from '../core/config.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import type { FrontDoor } from './front-door.js';
import type { PolicySnapshot, PolicyStore } from '../policy/store.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { parseByteSize } from '../util/bytes.js';
import { errorFrom, errorOf, failure, RPC, type JsonRpcId, type JsonRpcRequest } from '../mcp/jsonrpc.js';
import { toSvcError } from './http-errors.js';
import type { Sink } from '../mcp/protocol.js';
import { McpEndpoint, type Exchange } from '../mcp/endpoint.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import type { InputRounds } from '../mcp/input-rounds.js';
import type { TaskEngine } from '../tasks/engine.js';
import type { EndpointDoor } from './endpoint-door.js';

export const WS_CLOSE = Object.freeze({
  CREDENTIAL_INVALID: 4401,
  ENDPOINT_REFUSED: 4403,
  MESSAGE_TOO_BIG: 1009,
  NOT_READING: 1008,
  GOING_AWAY: 1001,
});

export interface WsDeps {
  runtime: Runtime;
  gate: AuthGate;
  config: ResolvedConfig;
  logger: Logger;
  /** Decides whether a handshake may enter, and as whom. */
  door: FrontDoor;
  /** The caller's address as server.trust_proxy resolves it (the audit log's and tracing's request scope). */
  ipOf: (req: IncomingMessage) => string | undefined;
  store: PolicyStore;
  /** The express-ws WebSocketServer (expressWs(...).getWss()); its handshake options are set here. */
  wss: WebSocketServer;
  /** Each socket's session is registered here; ending it closes the socket with 1001. */
  sessions: SessionRegistry;
  /** Multi-round-trip state for 2026-07-28 messages (one per server, shared with /mcp). */
  rounds: InputRounds;
  /** Tasks, the same methods as on /mcp. */
  tasks?: TaskEngine;
  /** The named endpoints' door: /ws/NAME is served when given. */
  endpoints?: EndpointDoor;
}

type Verdict = { ok: true; principal: Principal; endpoint?: string } | { ok: false; err: SvcError; headers?: Record<string, string> };

export function mountWs(app: Application, deps: WsDeps): void {
  const { runtime, gate, config } = deps;
  const log = deps.logger.child({ transport: 'ws' });
  const maxPayload = parseByteSize(config.server.body_limit);
  const maxInFlight = config.server.ws_max_in_flight;
  const pingEvery = config.server.ws_ping_interval_ms;
  const principals = new WeakMap<IncomingMessage, { principal: Principal; endpoint?: string }>();
  // One keep-alive timer for all sockets (not one per socket): each tick runs every open socket's beat.
  const beats = new Set<() => void>();
  let pinger: NodeJS.Timeout | undefined;
  const keepAlive = (beat: () => void) => {
    beats.add(beat);
    pinger ??= setInterval(() => {
      for (const b of beats) b();
    }, pingEvery).unref();
  };
  const stopKeepAlive = (beat: () => void) => {
    beats.delete(beat);
    if (beats.size === 0 && pinger) {
      clearInterval(pinger);
      pinger = undefined;
    }
  };
  const endpoint = new McpEndpoint({ transport: 'ws', routePublic: config.routes.public.includes('/ws'), runtime, tasks: deps.tasks, sessions: deps.sessions, rounds: deps.rounds, logger: log });

  const verify = async (req: IncomingMessage): Promise<Verdict> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const named = NAMED.exec(url.pathname)?.[1];
    if (url.pathname !== '/ws' && url.pathname !== '/ws/' && !(named && deps.endpoints)) return { ok: false, err: new SvcError('NOT_FOUND', `no WebSocket route ${url.pathname}`) };
    const bad = deps.door.check(req);
    if (bad) return { ok: false, err: bad };
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim());
    if (!offered.includes('mcp')) return { ok: false, err: new SvcError('INVALID_REQUEST', 'offer the WebSocket subprotocol "mcp"') };
    const entered = named ? await deps.endpoints!.enter(req, '/ws', named) : undefined;
    const r = entered ? (entered instanceof SvcError ? entered : entered.principal) : await deps.door.admit(req, '/ws', deps.store.current());
    if (!(r instanceof SvcError)) return { ok: true, principal: r, ...(named && { endpoint: named }) };
    const route = named ? `/ws/${named}` : '/ws';
    if (r.code === 'INSUFFICIENT_SCOPE') {
      return { ok: false, err: r, headers: { 'WWW-Authenticate': gate.challenge({ error: 'insufficient_scope', scopes: r.data?.required as string[], route, description: r.message }) } };
    }
    if (r.code !== 'UNAUTHENTICATED') return { ok: false, err: r };
    const error = r.data?.error as ChallengeError | undefined;
    const nonce: Record<string, string> = typeof r.data?.dpopNonce === 'string' ? { 'DPoP-Nonce': r.data.dpopNonce } : {};
    return { ok: false, err: r, headers: { 'WWW-Authenticate': gate.challenge({ error, route, description: error ? r.message : undefined }), ...nonce } };
  };

  const opts = deps.wss.options;
  opts.maxPayload = maxPayload;
  // express-ws bundles ws 7, which passes the offered protocols as an array (ws 8: a Set).
  opts.handleProtocols = (protocols) => ([...protocols].includes('mcp') ? 'mcp' : false);
  opts.verifyClient = (info, done) => {
    verify(info.req).then((v) => {
      if (v.ok) {
        principals.set(info.req, { principal: v.principal, endpoint: v.endpoint });
        return done(true);
      }
      const body = JSON.stringify({ error: v.err.toJSON() });
      done(false, v.err.status, body, { 'Content-Type': 'application/json', ...v.headers });
    }).catch((e: unknown) => {
      log.error({ err: e }, 'ws handshake failed');
      info.req.socket.destroy();
    });
  };

  const onSocket = (ws: Parameters<expressWs.WebsocketRequestHandler>[0], req: IncomingMessage) => {
    const handshake = principals.get(req);
    if (!handshake) return ws.close(WS_CLOSE.CREDENTIAL_INVALID, 'not authenticated');
    const { principal, endpoint: named } = handshake;
    // Every message belongs to the upgrade request: its address and traceparent (audit log, tracing).
    const scope = runtime.observer.scoped() ? scopeOf(req, deps.ipOf(req)) : undefined;
    let alive = true;
    let inflight = 0;
    // Credential re-checks run in arrival order so a message is never dispatched ahead of an earlier one.
    // A static token's or the anonymous caller's verdict is decided synchronously, once per policy
    // snapshot (snapshots and token tables are immutable); an OAuth principal's checks are async
    // and chained, so each message waits for the checks queued before it.
    let gateQueue: Promise<boolean> = Promise.resolve(true);
    let checkedSnap: PolicySnapshot | undefined;
    let checkedOk = true;

    // Answers ready in the same tick leave in one write: the first one corks the TCP socket and the
    // socket is uncorked once this tick's promise jobs have run (one writev instead of one per answer).
    const tcp = (ws as unknown as { _socket: Socket })._socket;
    let corked = false;
    const uncork = () => {
      corked = false;
      tcp.uncork();
    };
    const send: Sink = (m) => {
      if (ws.readyState !== ws.OPEN) return false;
      if (ws.bufferedAmount > 8 * maxPayload) {
        ws.close(WS_CLOSE.NOT_READING, 'the client is not reading its answers');
        return false;
      }
      if (!corked) {
        corked = true;
        tcp.cork();
        process.nextTick(uncork);
      }
      ws.send(JSON.stringify(m));
      return true;
    };
    const entry = endpoint.openSocketSession(principal, send, named);
    /** Open 2026-07-28 subscriptions/listen streams by request id; created on the first one. */
    let listens: Map<JsonRpcId, () => void> | undefined;
    const listen = async (msg: JsonRpcRequest): Promise<void> => {
      let stopListen: () => void;
      try {
        stopListen = await endpoint.listen(msg, principal, send, named);
      } catch (e) {
        return void send(errorFrom(msg.id, toSvcError(e, log)));
      }
      if (ws.readyState !== ws.OPEN) return stopListen(); // the socket closed while the listen was being set up
      const open = (listens ??= new Map());
      open.get(msg.id)?.();
      open.set(msg.id, () => {
        stopListen();
        open.delete(msg.id);
      });
    };
    const revoked = (): false => {
      log.info({ event: 'ws.revoked', sub: principal.sub }, 'closing /ws socket: credential no longer valid');
      if (ws.readyState === ws.OPEN) ws.close(WS_CLOSE.CREDENTIAL_INVALID, 'credential expired or revoked');
      return false;
    };
    /** The verdict without waiting (static and anonymous callers); undefined for OAuth and external issuers' tokens, whose checks are async. */
    const validNow = (): boolean | undefined => {
      if (principal.kind === 'oauth' || principal.kind === 'external') return undefined;
      if (principal.kind === 'anonymous') return true;
      const snap = deps.store.current();
      if (snap !== checkedSnap) {
        checkedSnap = snap;
        checkedOk = snap.tokens?.stillValid(principal) ?? false;
      }
      return checkedOk || revoked();
    };
    const stillValid = async (): Promise<boolean> => (await gate.stillValid(principal)) || revoked();
    /** An OAuth credential check, queued behind the pending ones. */
    const queued = (): Promise<boolean> => (gateQueue = gateQueue.then(stillValid));
    const recheck = () => void (validNow() ?? queued());
    deps.sessions.attach(entry, {
      send,
      end: () => ws.close(WS_CLOSE.GOING_AWAY, 'server shutting down'),
      recheck,
      refuse: (err) => {
        log.info({ event: 'ws.refused', sub: principal.sub, endpoint: named, code: err.code }, `closing /ws/${named} socket: ${err.message}`);
        if (ws.readyState === ws.OPEN) ws.close(WS_CLOSE.ENDPOINT_REFUSED, closeReason(err.message));
      },
    });
    const beat = () => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
      recheck();
    };
    keepAlive(beat);
    const expiry = principal.expiresAt === undefined ? undefined
      : setTimeout(recheck, Math.max(0, principal.expiresAt * 1000 - Date.now()) + 50).unref();

    ws.on('pong', () => (alive = true));
    ws.on('error', (err) => log.debug({ err }, 'ws protocol error'));
    ws.on('close', () => {
      stopKeepAlive(beat);
      clearTimeout(expiry);
      if (listens) for (const stop of [...listens.values()]) stop();
      deps.sessions.end(entry, 'socket closed');
    });
    /** A message whose credential check passed (ok) or failed; n requests were counted in flight at arrival. */
    const admitted = (msg: unknown, n: number, over: boolean, ok: boolean): void => {
      if (over) {
        if (ok) refuse(msg);
      } else if (ok) void dispatch(msg, n);
      else inflight -= n;
    };
    const refuse = (msg: unknown): void => {
      runtime.observer.limited('ws_max_in_flight', '/ws', 'ws', principal, undefined, scope);
      const message = `at most ${maxInFlight} requests may be unanswered on one socket`;
      if (!Array.isArray(msg)) return void send(errorOf(requestId(msg)!, 'RATE_LIMITED', message));
      for (const m of msg) {
        const id = requestId(m);
        if (id !== undefined) send(errorOf(id, 'RATE_LIMITED', message));
      }
    };
    const dispatch = async (msg: unknown, n: number): Promise<void> => {
      try {
        const x: Exchange = { principal, catalog: runtime.current(named), scope, reply: send, session: entry, listens, ...(named && { endpoint: named }) };
        const out = await endpoint.receive(msg, x);
        if (out.listen) return await listen(out.listen);
        const answer = out.answer;
        if (Array.isArray(answer)) for (const m of answer) send(m);
        else if (answer !== undefined) send(answer);
      } catch (e) {
        log.error({ err: e }, 'ws message failed unexpectedly');
        send(failure(null, RPC.INTERNAL, 'internal error'));
      } finally {
        inflight -= n;
      }
    };
    // ws 7 (bundled by express-ws) hands text frames over as strings and binary frames as Buffers.
    ws.on('message', (data: Buffer | string) => {
      if (ws.readyState !== ws.OPEN) return; // closing (refused, revoked, shutting down): nothing more is dispatched
      alive = true;
      let msg: unknown;
      try {
        msg = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
      } catch {
        send(failure(null, RPC.PARSE_ERROR, 'the message is not valid JSON'));
        return;
      }
      const n = requestCount(msg);
      const over = n > 0 && inflight + n > maxInFlight;
      if (!over) inflight += n;
      const now = validNow();
      if (now !== undefined) admitted(msg, n, over, now);
      else void queued().then((ok) => admitted(msg, n, over, ok));
    });
  };
  (app as expressWs.Application).ws('/ws', onSocket);
  if (deps.endpoints) (app as expressWs.Application).ws('/ws/:endpoint', onSocket);
}

/** /ws/NAME: a named endpoint's socket (its name checked by the endpoint's door). */
const NAMED = /^\/ws\/([^/]+)\/?$/;

/** A close frame's reason: at most 123 bytes of UTF-8. */
function closeReason(text: string): string {
  return Buffer.byteLength(text) <= 123 ? text : `${Buffer.from(text).subarray(0, 120).toString('utf8').replace(/\uFFFD$/, '')}…`;
}

/** The id of a JSON-RPC request (a message with a method and an id); undefined otherwise. */
function requestId(m: unknown): string | number | undefined {
  if (m === null || typeof m !== 'object' || typeof (m as { method?: unknown }).method !== 'string') return undefined;
  const id = (m as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** How many requests a message (or batch) carries. */
function requestCount(msg: unknown): number {
  if (!Array.isArray(msg)) return requestId(msg) === undefined ? 0 : 1;
  let n = 0;
  for (const m of msg) if (requestId(m) !== undefined) n++;
  return n;
}
