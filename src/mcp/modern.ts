// MCP revision 2026-07-28 ("modern"): every request stands alone. Its protocol version and
// client capabilities travel in params._meta; there is no initialize, no session and no
// server→client request. One ModernProtocol per transport serves every modern request
// through the same stateless method table as the 2025 session (methods.ts).
// Guarantees: a request is checked in the revision's order (Mcp-Method header, required
// _meta, header/_meta version agreement, supported version, Mcp-Name and Mcp-Param-*
// headers, known method) and refused with the revision's code and HTTP status; nothing is
// constructed or compiled per request beyond the call context; every result carries
// resultType and the serverInfo _meta, cacheable results carry ttlMs and cacheScope (never
// `public` when the answer depends on the caller's scopes); notifications/message is sent
// only when the request named a logLevel; a server→client request the client did not
// declare the capability for is refused with -32021 (MISSING_CLIENT_CAPABILITY);
// subscriptions/listen with notifications.taskIds needs the tasks extension (-32021) and then
// streams notifications/tasks (the DetailedTask, as tasks/get answers it) for each of the
// caller's own tasks named there, re-authorized on every change.

import { isSvcError, SvcError } from '../errors.js';
import { changesFor } from '../policy/store.js';
import type { Catalog } from '../core/catalog.js';
import type { CacheHint, CallChannel, CallContext, LogLevel, Principal } from '../core/types.js';
import type { Logger } from '../log.js';
import { RESULTS_PREFIX } from '../runtime/results.js';
import { findResource } from '../core/catalog.js';
import { declaresApps } from './apps.js';
import { instructionsOf, isProgressive } from '../catalog/discovery.js';
import { isMetaTool } from '../catalog/meta-tools.js';
import { LOG_LEVELS, META, MODERN_VERSION, MODERN_VERSIONS, SERVER_CAPABILITIES, SUPPORTED_VERSIONS } from './constants.js';
import { errorFrom, failure, RPC, type JsonRpcId, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.js';
import { isObject, MethodNotFound, runMethod, SHARED_METHODS, type McpRuntime, type MethodEnv } from './methods.js';
import { headerProblem, type HeaderView } from './modern-headers.js';
import { InputRound, settleRound, type InputRounds, type RoundRequest } from './input-rounds.js';
import { Context, listenAbort, type SignalSource } from '../core/call-context.js';
import { NEVER } from '../core/lazy-abort.js';
import type { TaskEngine } from '../tasks/engine.js';
import type { RequestScope } from '../core/request-scope.js';
import { declaresExtension, detailedTask, missingExtension, MODERN_TASK_METHODS, modernTaskMethod, startModernTask, TASKS_EXTENSION, type TaskCall } from './tasks.js';
import type { AdmittedTool, TaskAsk } from '../runtime/runtime.js';

/** Methods of this revision; anything else (initialize, ping, logging/setLevel, resources/(un)subscribe…) is 404 / -32601. */
export const MODERN_METHODS: ReadonlySet<string> = new Set([...SHARED_METHODS, 'server/discover', 'subscriptions/listen', ...MODERN_TASK_METHODS]);

/** Methods whose Mcp-Name header mirrors a body field. */
const NAMED: Record<string, string> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };
/** Methods whose Mcp-Name header mirrors a body field, tasks methods (their taskId) included. */
const HEADER_NAMED: Record<string, string> = { ...NAMED, 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };

const TASK_CAPABILITIES = Object.freeze({ ...SERVER_CAPABILITIES, extensions: { ...SERVER_CAPABILITIES.extensions, [TASKS_EXTENSION]: {} } });

/** What a modern request declared in its _meta, after admission. */
export interface ModernMeta {
  readonly version: string;
  readonly capabilities: Record<string, unknown>;
  /** Rank in LOG_LEVELS of the requested logLevel; -1: the request asked for no log messages. */
  readonly logRank: number;
}

export type Admission = { ok: true; meta: ModernMeta } | { ok: false; status: number; answer: JsonRpcResponse };

export interface ModernAnswer {
  status: number;
  answer: JsonRpcResponse;
  /** The SvcError behind an error answer (the HTTP transport answers an access refusal with its own status and headers). */
  refusal?: SvcError;
}

export interface ModernOptions {
  runtime: McpRuntime;
  logger: Logger;
  transport: 'mcp' | 'ws';
  /** The route serving this transport is public: a caller-independent answer may then be cached as `public`. */
  routePublic: boolean;
  /** Signs and checks the multi-round-trip state (one per server, shared by /mcp and /ws). */
  rounds: InputRounds;
  /** The server's task engine: with it, the io.modelcontextprotocol/tasks extension is served. */
  tasks?: TaskEngine;
}

/** One input-capable request (tools/call, prompts/get, resources/read), as the multi-round-trip support sees it. */
interface ListHints { discover: Hint; tools: Hint; resources: Hint; templates: Hint; prompts: Hint }
interface Hint { ttlMs: number; cacheScope: 'public' | 'private' }

export class ModernProtocol {
  readonly #opts: ModernOptions;
  readonly #hints = new WeakMap<Catalog, ListHints>();
  readonly #meta = new WeakMap<Catalog, Record<string, unknown>>();

  constructor(opts: ModernOptions) {
    this.#opts = opts;
  }

  /**
   * Admission in the revision's order. `headers` is absent on transports without HTTP headers (/ws),
   * where the header checks do not apply.
   */
  admit(msg: JsonRpcRequest, headers?: HeaderView, cat: Catalog = this.#opts.runtime.current()): Admission {
    const id = msg.id;
    const p = msg.params ?? {};
    if (headers) {
      const m = headers('mcp-method');
      if (m === undefined || m !== msg.method) return refuse(id, 'HEADER_MISMATCH', m === undefined ? 'the Mcp-Method header is required' : `Header mismatch: Mcp-Method header value '${m}' does not match body method '${msg.method}'`);
    }
    const meta = p._meta;
    const version = isObject(meta) ? meta[META.protocolVersion] : undefined;
    const caps = isObject(meta) ? meta[META.clientCapabilities] : undefined;
    if (typeof version !== 'string' || !isObject(caps)) {
      return refuse(id, 'INVALID_INPUT', `params._meta must carry "${META.protocolVersion}" (a string) and "${META.clientCapabilities}" (an object)`);
    }
    if (headers) {
      const hv = headers('mcp-protocol-version');
      if (hv !== version) return refuse(id, 'HEADER_MISMATCH', hv === undefined ? 'the MCP-Protocol-Version header is required' : `Header mismatch: MCP-Protocol-Version header value '${hv}' does not match _meta protocolVersion '${version}'`);
    }
    if (!MODERN_VERSIONS.includes(version)) {
      return refuse(id, 'UNSUPPORTED_PROTOCOL_VERSION', `Unsupported protocol version ${version}: per-request _meta serves ${MODERN_VERSIONS.join(', ')}; 2025-era versions need initialize`, { supported: [...SUPPORTED_VERSIONS], requested: version });
    }
    if (headers) {
      // A meta-tool of a progressive endpoint wins over a real tool of its name: its schema mirrors no argument.
      const problem = headerProblem(msg.method, p, headers, HEADER_NAMED[msg.method], (name) => (isProgressive(cat) && isMetaTool(name, false) ? undefined : cat.tools.get(name)?.wire.inputSchema));
      if (problem) return refuse(id, 'HEADER_MISMATCH', problem);
    }
    if (!MODERN_METHODS.has(msg.method)) return { ok: false, status: 404, answer: failure(id, RPC.METHOD_NOT_FOUND, `method not found in MCP ${MODERN_VERSION}: ${msg.method}`) };
    if (msg.method === 'subscriptions/listen' && isObject(p.notifications) && p.notifications.taskIds !== undefined && !declaresExtension(caps)) {
      return { ok: false, status: 400, answer: modernError(id, missingExtension('subscriptions/listen with taskIds')) };
    }
    let logRank = -1;
    const level = isObject(meta) ? meta[META.logLevel] : undefined;
    if (level !== undefined) {
      logRank = LOG_LEVELS.indexOf(level as LogLevel);
      if (logRank < 0) return refuse(id, 'INVALID_INPUT', `_meta "${META.logLevel}" must be one of ${LOG_LEVELS.join(', ')}`);
    }
    return { ok: true, meta: { version, capabilities: caps, logRank } };
  }

  /**
   * Serve one admitted request. `sink` carries the request's own notifications (progress, logs);
   * `signal` (a source read on first use, or a function called then) aborts when the client goes away.
   */
  async handle(msg: JsonRpcRequest, meta: ModernMeta, principal: Principal, sink: (m: JsonRpcNotification) => boolean, cat: Catalog, signal?: SignalSource | (() => AbortSignal), scope?: RequestScope): Promise<ModernAnswer> {
    const id = msg.id;
    const method = msg.method;
    const p = msg.params ?? {};
    try {
      if (method === 'server/discover') return ok(id, this.#result(cat, this.#discover(cat), this.#listHints(cat).discover));
      if (method === 'subscriptions/listen') throw new SvcError('INVALID_REQUEST', 'subscriptions/listen needs a stream: use POST /mcp with Accept: text/event-stream, or /ws');
      const named = NAMED[method];
      const call = new ModernCall(this.#opts, msg, p, meta, principal, sink, cat, named === undefined ? undefined : String(p[named]), signal, scope);
      if (MODERN_TASK_METHODS.has(method)) {
        if (!call.tasks) throw new MethodNotFound(method);
        return ok(id, this.#result(cat, await modernTaskMethod(method, p, meta.capabilities, call.tasks), undefined));
      }
      const value = named === undefined ? await runMethod(method, p, call) : await settleRound(call, () => runMethod(method, p, call));
      return ok(id, this.#result(cat, value as Record<string, unknown>, this.#hintFor(method, p, cat)));
    } catch (e) {
      return this.#error(id, msg.method, e, p);
    }
  }

  /**
   * subscriptions/listen: sends the acknowledgement (the honoured subset of the filter) and then each
   * later notification, tagged with the subscription id, to `send`; resolves to the function that
   * stops it. A principal is told only about lists and resources it may see, and about its own tasks
   * (wherever they run, when replicas share a task store). Rejects, having sent nothing, when the
   * shared task store cannot be read.
   */
  async listen(msg: JsonRpcRequest, principal: Principal, send: (m: JsonRpcNotification) => boolean, endpoint?: string): Promise<() => void> {
    const rt = this.#opts.runtime;
    const filter = isObject(msg.params?.notifications) ? msg.params!.notifications as Record<string, unknown> : {};
    const honored: Record<string, unknown> = {};
    for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged']) if (filter[k] === true) honored[k] = true;
    const cat0 = rt.current(endpoint);
    const meta = isObject(msg.params?._meta) ? msg.params!._meta as Record<string, unknown> : {};
    const apps = declaresApps(isObject(meta[META.clientCapabilities]) ? meta[META.clientCapabilities] as Record<string, unknown> : {});
    const uris = Array.isArray(filter.resourceSubscriptions)
      ? [...new Set(filter.resourceSubscriptions.filter((u): u is string => typeof u === 'string' && rt.mayRead(u, principal, cat0)))]
      : undefined;
    if (uris) honored.resourceSubscriptions = uris;
    const tag = { [META.subscriptionId]: msg.id };
    const note = (method: string, extra?: Record<string, unknown>) => send({ jsonrpc: '2.0', method, params: { _meta: tag, ...extra } });
    const tasks = this.#opts.tasks;
    const followed = tasks && Array.isArray(filter.taskIds)
      ? await tasks.follow(filter.taskIds.filter((t): t is string => typeof t === 'string'), { principal, transport: this.#opts.transport, catalog: cat0, ...(endpoint && { endpoint }) })
      : undefined;
    if (followed) honored.taskIds = followed.ids;
    // From here on synchronous: the acknowledgement goes out before any notification.
    send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: tag, notifications: honored } });
    const unfollow = followed?.watch((t) => note('notifications/tasks', detailedTask(t, rt.current(endpoint))));
    const unwatch = (uris ?? []).map((uri) => rt.watchResource(uri, () => {
      if (rt.mayStillRead(uri, principal, endpoint)) note('notifications/resources/updated', { uri });
    }, cat0));
    let seen = cat0;
    const stop = rt.onChange((all) => {
      const c = changesFor(all, endpoint);
      const prev = seen;
      const next = (seen = rt.current(endpoint));
      const changed = (list: (p: Principal, cat: Catalog, apps?: boolean) => object[]) => JSON.stringify(list.call(rt, principal, prev, apps)) !== JSON.stringify(list.call(rt, principal, next, apps));
      if (honored.toolsListChanged && c.tools && changed(rt.listTools)) note('notifications/tools/list_changed');
      if (honored.promptsListChanged && c.prompts && changed(rt.listPrompts)) note('notifications/prompts/list_changed');
      if (honored.resourcesListChanged && c.resources && (changed(rt.listResources) || changed(rt.listResourceTemplates))) note('notifications/resources/list_changed');
      for (const uri of uris ?? []) if (rt.updatedBy(c, uri, next) && rt.mayRead(uri, principal, next)) note('notifications/resources/updated', { uri });
    });
    return () => {
      stop();
      unfollow?.();
      for (const u of unwatch) u();
    };
  }

  /** The graceful end of a listen stream (server shutting down). */
  listenEnd(id: JsonRpcId): JsonRpcResponse {
    return { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } } };
  }

  #discover(cat: Catalog): Record<string, unknown> {
    return {
      supportedVersions: [...SUPPORTED_VERSIONS],
      capabilities: this.#opts.tasks ? TASK_CAPABILITIES : SERVER_CAPABILITIES,
      ...(instructionsOf(cat) && { instructions: instructionsOf(cat) }),
    };
  }

  #result(cat: Catalog, value: Record<string, unknown>, hint: Hint | undefined): Record<string, unknown> {
    // Object.assign, not a spread: V8 adds properties to a spread copy ~20× slower. A spread only
    // where assigning would differ (an own "__proto__" key would set the copy's prototype).
    const out: Record<string, unknown> = Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
    if (typeof out.resultType !== 'string') out.resultType = 'complete';
    if (hint && out.resultType === 'complete') {
      out.ttlMs = hint.ttlMs;
      out.cacheScope = hint.cacheScope;
    }
    const own = this.#serverMeta(cat);
    out._meta = isObject(value._meta) ? { ...value._meta, ...own } : own;
    return out;
  }

  /** The result _meta naming this server, one shared object per catalog. */
  #serverMeta(cat: Catalog): Record<string, unknown> {
    let m = this.#meta.get(cat);
    if (!m) this.#meta.set(cat, (m = Object.freeze({ [META.serverInfo]: Object.freeze({ name: cat.name, version: cat.version }) })));
    return m;
  }

  #hintFor(method: string, p: Record<string, unknown>, cat: Catalog): Hint | undefined {
    switch (method) {
      case 'tools/list': return this.#listHints(cat).tools;
      case 'prompts/list': return this.#listHints(cat).prompts;
      case 'resources/list': return this.#listHints(cat).resources;
      case 'resources/templates/list': return this.#listHints(cat).templates;
      case 'resources/read': {
        const uri = p.uri as string;
        if (uri.startsWith(RESULTS_PREFIX)) return { ttlMs: 0, cacheScope: 'private' };
        const entry = findResource(cat, uri)?.entry;
        return hintOf(entry?.def.cache, (entry?.required.length ?? 0) > 0 || !!entry?.patterns, this.#opts.routePublic);
      }
      default:
        return undefined;
    }
  }

  /** Cache hints of the lists and discover, computed once per catalog. */
  #listHints(cat: Catalog): ListHints {
    let h = this.#hints.get(cat);
    if (h) return h;
    const scoped = (entries: Iterable<{ required: readonly string[]; patterns?: readonly unknown[] }>) => [...entries].some((e) => e.required.length > 0 || !!e.patterns);
    const pub = this.#opts.routePublic;
    h = {
      discover: hintOf(cat.cache, false, pub),
      tools: hintOf(cat.cache, scoped(cat.tools.values()), pub),
      prompts: hintOf(cat.cache, scoped(cat.prompts.values()), pub),
      resources: hintOf(cat.cache, scoped(cat.resources.values()), pub),
      templates: hintOf(cat.cache, scoped(cat.templates), pub),
    };
    this.#hints.set(cat, h);
    return h;
  }

  #error(id: JsonRpcId, method: string, e: unknown, p: Record<string, unknown>): ModernAnswer {
    if (e instanceof MethodNotFound) return { status: 404, answer: failure(id, RPC.METHOD_NOT_FOUND, `method not found: ${method}`) };
    if (isSvcError(e)) {
      // This revision's wire form of the runtime's TASK_REQUIRED: the call lacks the tasks extension.
      if (e.code === 'TASK_REQUIRED') e = missingExtension(`tool ${String(p.name)} runs only as a task, so calling it`);
      const err = e as SvcError;
      const status = err.code === 'MISSING_CLIENT_CAPABILITY' || err.code === 'HEADER_MISMATCH' || err.code === 'UNSUPPORTED_PROTOCOL_VERSION' ? 400 : 200;
      return { status, answer: modernError(id, err), refusal: err };
    }
    this.#opts.logger.error({ err: e, method }, 'mcp request failed unexpectedly');
    return { status: 500, answer: failure(id, RPC.INTERNAL, 'internal error') };
  }
}

/**
 * One modern request, as everything its handler sees: the method table's environment, its
 * CallChannel (progress only with a progressToken, logs only at or above the request's
 * logLevel, the input_required round of tools/call, prompts/get and resources/read — built
 * only when the request carries state or the handler asks) and the source of its signal.
 * Methods without input rounds (lists, completions) cannot ask the client anything.
 */
class ModernCall extends InputRound implements CallChannel, MethodEnv, SignalSource {
  readonly runtime: McpRuntime;
  readonly catalog: Catalog;
  readonly principal: Principal;
  readonly inputErrorsAsToolResults = true;
  /** The body field Mcp-Name mirrors (tool or prompt name, resource uri); undefined for methods without rounds. */
  readonly name: string | undefined;
  readonly #opts: ModernOptions;
  readonly #meta: Record<string, unknown>;
  readonly #logRank: number;
  readonly #sink: (m: JsonRpcNotification) => boolean;
  readonly #signal: SignalSource | (() => AbortSignal) | undefined;
  readonly #scope: RequestScope | undefined;
  readonly #caps: Record<string, unknown>;
  #tasks: TaskCall | undefined;

  constructor(opts: ModernOptions, msg: JsonRpcRequest, p: Record<string, unknown>, meta: ModernMeta, principal: Principal, sink: (m: JsonRpcNotification) => boolean, cat: Catalog, name: string | undefined, signal: SignalSource | (() => AbortSignal) | undefined, scope: RequestScope | undefined) {
    super(opts.rounds, msg.method as RoundRequest['method'], name ?? '', name === undefined ? NO_ROUND_PARAMS : p, principal, meta.capabilities);
    this.runtime = opts.runtime;
    this.catalog = cat;
    this.principal = principal;
    this.name = name;
    this.#opts = opts;
    this.#meta = p._meta as Record<string, unknown>;
    this.#logRank = meta.logRank;
    this.#sink = sink;
    this.#signal = signal;
    this.#scope = scope;
    this.#caps = meta.capabilities;
  }

  /** The request declares MCP Apps (io.modelcontextprotocol/ui) in its _meta clientCapabilities. */
  get apps(): boolean {
    return declaresApps(this.#caps);
  }

  /** A tools/call asks to run as a task by declaring the tasks extension. */
  get taskAsk(): TaskAsk {
    return declaresExtension(this.#caps) ? 'asked' : 'plain';
  }

  /** What the task methods and a task's start need; undefined without a task engine. */
  get tasks(): TaskCall | undefined {
    const engine = this.#opts.tasks;
    return engine && (this.#tasks ??= { tasks: engine, catalog: this.catalog, principal: this.principal, transport: this.#opts.transport, scope: this.#scope, round: this });
  }

  get runAsTask(): ((call: AdmittedTool) => Promise<Record<string, unknown>>) | undefined {
    return this.#opts.tasks && ((call) => startModernTask(call, this.#caps, this.tasks!));
  }

  get signal(): AbortSignal {
    const s = this.#signal;
    return s === undefined ? NEVER.signal : typeof s === 'function' ? s() : s.signal;
  }

  get aborted(): boolean {
    const s = this.#signal;
    return s === undefined ? false : typeof s === 'function' ? s().aborted : s.aborted ?? s.signal.aborted;
  }

  onAbort(fn: (reason: unknown) => void): () => void {
    const s = this.#signal;
    return s !== undefined && typeof s !== 'function' && s.onAbort ? s.onAbort(fn) : listenAbort(this.signal, fn);
  }

  context(): CallContext {
    return new Context(this.principal, this.#opts.logger, this.#opts.transport, this, this, this.#meta, this.#scope);
  }

  override supports(method: string): boolean {
    return this.name !== undefined && super.supports(method);
  }

  override request(method: string, params: Record<string, unknown>, opts?: { timeoutMs?: number; key?: string }): Promise<unknown> {
    if (this.name === undefined) return Promise.reject(new SvcError('BACKEND_FAILED', `${method} can be asked only while serving tools/call, prompts/get or resources/read`));
    return super.request(method, params, opts);
  }

  async progress(progress: number, total?: number, message?: string): Promise<void> {
    const token = this.#meta.progressToken;
    if (typeof token !== 'string' && typeof token !== 'number') return;
    this.#sink({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) } });
  }

  hearsProgress(): boolean {
    const token = this.#meta.progressToken;
    return typeof token === 'string' || typeof token === 'number';
  }

  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    if (this.#logRank < 0 || LOG_LEVELS.indexOf(level) < this.#logRank) return;
    this.#sink({ jsonrpc: '2.0', method: 'notifications/message', params: { level, data, ...(logger !== undefined && { logger }) } });
  }
}

/** A method without rounds never reads requestState or inputResponses. */
const NO_ROUND_PARAMS: Record<string, unknown> = Object.freeze({});

function ok(id: JsonRpcId, value: unknown): ModernAnswer {
  return { status: 200, answer: { jsonrpc: '2.0', id, result: value } };
}

/**
 * A SvcError as a 2026 JSON-RPC error. The spec's own error shapes (-32021, -32022) keep their
 * `data` exactly as the revision defines it; fastsvc's errors add data.code as on the 2025 path.
 */
function modernError(id: JsonRpcId | null, e: SvcError): JsonRpcResponse {
  if (e.code === 'MISSING_CLIENT_CAPABILITY' || e.code === 'UNSUPPORTED_PROTOCOL_VERSION' || e.code === 'HEADER_MISMATCH') {
    return failure(id, e.rpcCode, e.message, e.data);
  }
  return errorFrom(id, e);
}

function refuse(id: JsonRpcId, code: 'HEADER_MISMATCH' | 'INVALID_INPUT' | 'UNSUPPORTED_PROTOCOL_VERSION', message: string, data?: Record<string, unknown>): Admission {
  const e = new SvcError(code, message, data ? { data } : {});
  return { ok: false, status: 400, answer: modernError(id, e) };
}

/**
 * The cache hint of one answer. `auto` is `public` only on a public route for an answer that
 * cannot depend on the caller; an answer filtered by the caller's scopes is always `private`.
 * No hint (a code-built app that set none) is ttlMs 0: immediately stale, as the revision reads
 * a missing hint.
 */
export function hintOf(hint: CacheHint | undefined, dependsOnCaller: boolean, routePublic: boolean): Hint {
  const scope = hint?.scope ?? 'auto';
  const pub = !dependsOnCaller && (scope === 'public' || (scope === 'auto' && routePublic));
  return { ttlMs: hint?.ttl_ms ?? 0, cacheScope: pub ? 'public' : 'private' };
}
