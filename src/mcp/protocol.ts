// The MCP 2025 session core, independent of any transport: JSON-RPC dispatch, the
// initialize lifecycle with version negotiation, every server method over the shared
// Runtime, and the outgoing side (progress, logs, list changes, task status, server→client
// requests). Guarantees: per-request state lives only while the request runs (nothing is
// left in a map after it answers); errors carry CODES[code].rpc; tool backend failures are
// {isError:true} results; lists come from the Runtime, already filtered by scope; every
// access question is the runtime's one decision (a refused single request leaves its
// SvcError in HandleOptions.refusal for the transport's wire form); a task's status
// notification is sent only while the runtime still allows its starter to see it; a subscribed
// resource whose source reports its changes (an upstream's) is watched while subscribed, and its
// notifications/resources/updated sent only while the subscriber may still read it. A session opened
// on a named endpoint (/mcp/NAME, /ws/NAME) lives in that endpoint's view: its serverInfo and
// instructions are the endpoint's, its requests default to the view, and it is told of list changes
// and resource updates only as the view shows them. A session shared by several processes (SessionOptions.shared)
// watches its subscribed resources' sources only while its GET stream is held by this instance (holdStream), awaits
// `persist` for every change of its state (log level, subscriptions, loaded tools, tasks started), each as what
// it adds or removes (so changes made at once on several processes are all kept), before answering the request that
// made it, removes a task it started from the record when the task ends, takes its state from a record with apply(), names its server→client requests
// so that no other process's instance of it uses the same id, and hands an answer or a cancellation it has
// nothing waiting for to `unclaimed` (the process whose request or call it is completes it).

import { isSvcError, SvcError } from '../errors.js';
import { changesFor } from '../policy/store.js';
import type { Catalog } from '../core/catalog.js';
import type { CallChannel, LogLevel, Principal } from '../core/types.js';
import { isObject, MethodNotFound, runMethod, str, type McpRuntime } from './methods.js';
import type { SessionTools } from './progressive.js';
import { instructionsOf } from '../catalog/discovery.js';
import { declaresApps } from './apps.js';
import type { Logger } from '../log.js';
import type { TaskEngine } from '../tasks/engine.js';
import { LEGACY_TASKS_CAPABILITY, legacyTask, legacyTaskMethod, NOT_A_TASK_METHOD, startLegacyTask, type TaskCall } from './tasks.js';
import { TERMINAL } from '../tasks/task-store.js';
import { DEFAULT_PROTOCOL_VERSION, isSupportedVersion, LATEST_PROTOCOL_VERSION, LOG_LEVELS, SERVER_CAPABILITIES } from './constants.js';
import { Context } from '../core/call-context.js';
import { LazyAbort } from '../core/lazy-abort.js';
import type { RequestScope } from '../core/request-scope.js';
import type { SessionChange } from '../sessions/session-store.js';
import {
  classify, errorFrom, errorOf, failure, result, RPC,
  type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse,
} from './jsonrpc.js';

export type { McpRuntime } from './methods.js';

/** Delivers one outgoing message; returns false when nothing can carry it now. */
export type Sink = (msg: JsonRpcMessage) => boolean;

export interface SessionOptions {
  runtime: McpRuntime;
  logger: Logger;
  transport: 'mcp' | 'ws';
  /** The session's own channel: the GET SSE stream on /mcp, the socket on /ws. */
  send: Sink;
  /** Server→client requests time out after this long (default 60 s). */
  requestTimeoutMs?: number;
  /** resources/subscribe entries a session may hold (default 256). */
  maxSubscriptions?: number;
  /** The server's task engine: with it, 2025-11-25 sessions get the experimental tasks. */
  tasks?: TaskEngine;
  /** The named endpoint the session was opened on (absent: the default endpoint). */
  endpoint?: string;
  /** Where a call's messages go once its own stream cannot carry them (default: send). */
  fallback?: Sink;
  /** The session is served by several processes sharing a SessionStore. */
  shared?: SharedSessionHooks;
}

/** What a session served by several processes needs of the store. */
export interface SharedSessionHooks {
  /** Records a change of the session's state (awaited before the request that made it is answered). */
  persist(change: SessionChange): Promise<void>;
  /** An answer or cancellation nothing here waits for: the process whose request or call it is takes it. */
  unclaimed(u: Unclaimed): void;
  /** Prefix of this instance's server→client request ids (unique among the session's instances). */
  askPrefix: string;
}

/** A client's answer to a server→client request, or its cancellation of a request, that no request or call here is waiting for. */
export type Unclaimed = { readonly kind: 'answer'; readonly msg: JsonRpcResponse } | { readonly kind: 'cancel'; readonly requestId: JsonRpcId };

/** A shared session's state as its record holds it (sessions/session-store.ts SessionRecord). */
export interface SessionState {
  version: string;
  clientCaps: Record<string, unknown>;
  logLevel: string;
  subscriptions: string[];
  loadedTools: string[];
  tasks: string[];
}

export interface HandleOptions {
  /** Where messages related to this request go (its POST stream); default: the session channel. */
  reply?: Sink;
  /** The catalog snapshot to use: the policy the caller was authenticated with. */
  catalog?: Catalog;
  /** The request's address and trace headers (audit log, tracing), when the transport built them. */
  scope?: RequestScope;
  /**
   * Set by handle(): the refusal (INSUFFICIENT_SCOPE, RATE_LIMITED, …) behind the answer when the input was one
   * request that failed with a SvcError, so an HTTP transport can answer it with the refusal's status and headers.
   */
  refusal?: SvcError;
}

export type HandleResult = JsonRpcResponse | JsonRpcResponse[] | undefined;

/** Client capability a server→client request needs. */
const NEEDS: Record<string, string> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

const CANCELLED = Symbol('cancelled by client');

interface Pending {
  readonly method: string;
  settle(msg: JsonRpcResponse): void;
  fail(err: SvcError): void;
}

/** What a request's channel needs of its session (one per session). */
interface SessionPort {
  readonly send: Sink;
  logRank(): number;
  supports(method: string): boolean;
  ask(call: SessionCall, method: string, params: Record<string, unknown>, timeoutMs: number | undefined): Promise<unknown>;
}

/**
 * One running request: its abort state (the AbortController only if something reads the signal),
 * where its messages go (its POST stream while it runs, the session channel after), and the
 * CallChannel its handler gets.
 */
class SessionCall extends LazyAbort implements CallChannel {
  live = true;
  readonly #port: SessionPort;
  readonly #reply: Sink;
  readonly #token: JsonRpcId | undefined;

  constructor(port: SessionPort, reply: Sink, token: JsonRpcId | undefined) {
    super();
    this.#port = port;
    this.#reply = reply;
    this.#token = token;
  }

  send(m: JsonRpcMessage): boolean {
    return this.live ? this.#reply(m) : this.#port.send(m);
  }

  async progress(progress: number, total?: number, message?: string): Promise<void> {
    if (this.#token === undefined) return;
    this.send({
      jsonrpc: '2.0', method: 'notifications/progress',
      params: { progressToken: this.#token, progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) },
    });
  }

  hearsProgress(): boolean {
    return this.#token !== undefined;
  }

  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    const rank = LOG_LEVELS.indexOf(level);
    if (rank < 0 || rank < this.#port.logRank()) return;
    this.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level, data, ...(logger !== undefined && { logger }) } });
  }

  request(method: string, params: Record<string, unknown>, opts?: { timeoutMs?: number }): Promise<unknown> {
    return this.#port.ask(this, method, params, opts?.timeoutMs);
  }

  supports(method: string): boolean {
    return this.#port.supports(method);
  }
}

export class McpSession {
  #state: 'new' | 'ready' | 'closed' = 'new';
  #version = DEFAULT_PROTOCOL_VERSION;
  #clientCaps: Record<string, unknown> = {};
  /** The client declared MCP Apps at initialize (apps.ts): read once, not per message. */
  #apps = false;
  #logRank = LOG_LEVELS.indexOf('info');
  #seq = 0;
  readonly #opts: SessionOptions;
  /** resources/subscribe: each URI with the principal that subscribed and, while its source is watched, the unwatch. */
  readonly #subs = new Map<string, { unwatch?: () => void; principal: Principal }>();
  /** Subscribed sources are watched: always in a session of one process; in a shared one, only while this instance holds its GET stream. */
  #watching: boolean;
  readonly #inflight = new Map<JsonRpcId, SessionCall>();
  readonly #pending = new Map<string, Pending>();
  readonly #unsubscribe: () => void;
  /** Tasks this session started and that have not ended, with who started each: their status changes are notified here. */
  readonly #tasks = new Map<string, Principal>();
  readonly #untask: () => void;
  readonly #port: SessionPort;
  /** A shared session: the tasks this instance started (it removes each from the record when it ends). */
  readonly #mine = new Set<string>();
  /** The tools this session loaded through a progressive endpoint's load_tools (progressive.ts). */
  readonly #tools: SessionTools = {
    loaded: new Set(),
    // A call's doing (load_tools), not the server's: a shared session's process running the call sends it.
    changed: () => {
      this.#port.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    },
  };

  constructor(opts: SessionOptions) {
    this.#opts = opts;
    this.#watching = !opts.shared;
    this.#port = {
      send: opts.fallback ?? opts.send,
      logRank: () => this.#logRank,
      supports: (method) => !NEEDS[method] || NEEDS[method]! in this.#clientCaps,
      ask: (call, method, params, timeoutMs) => this.#ask(call, method, params, timeoutMs),
    };
    const endpoint = opts.endpoint;
    this.#unsubscribe = opts.runtime.onChange((all) => {
      if (this.#state !== 'ready') return;
      const c = changesFor(all, endpoint);
      if (c.tools) this.#notify('notifications/tools/list_changed');
      if (c.prompts) this.#notify('notifications/prompts/list_changed');
      if (c.resources) this.#notify('notifications/resources/list_changed');
      for (const [uri, sub] of this.#subs) {
        if (opts.runtime.updatedBy(c, uri, opts.runtime.current(endpoint)) && opts.runtime.mayStillRead(uri, sub.principal, endpoint)) this.#notify('notifications/resources/updated', { uri });
      }
    });
    this.#untask = opts.tasks?.onChange((t) => {
      const starter = this.#tasks.get(t.id);
      if (!starter) return;
      if (TERMINAL.has(t.status)) {
        this.#tasks.delete(t.id);
        if (this.#mine.delete(t.id)) this.#unrecord(t.id);
      }
      if (opts.runtime.mayDeliver(t.tool, t.args, { principal: starter, transport: opts.transport, log: opts.logger, endpoint })) this.#notify('notifications/tasks/status', legacyTask(t));
    }) ?? (() => {});
  }

  get protocolVersion(): string {
    return this.#version;
  }

  get initialized(): boolean {
    return this.#state === 'ready';
  }

  get closed(): boolean {
    return this.#state === 'closed';
  }

  /** Requests currently running (for transports that bound concurrency). */
  get inflight(): number {
    return this.#inflight.size;
  }

  /** The state a shared session's record keeps. */
  state(): SessionState {
    return {
      version: this.#version, clientCaps: this.#clientCaps, logLevel: LOG_LEVELS[this.#logRank]!,
      subscriptions: [...this.#subs.keys()], loadedTools: [...this.#tools.loaded], tasks: [...this.#tasks.keys()],
    };
  }

  /**
   * Takes a shared session's state from its record (read by another process's instance, or changed there):
   * initialized, its version and capabilities, log level, subscriptions (watched for `principal`, the owner
   * as it last reached this process), loaded tools and tasks (one a change adds that has already ended is told).
   */
  apply(s: SessionState, principal: Principal): void {
    if (this.#state === 'closed') return;
    const changed = this.#state === 'ready';
    if (!changed) {
      this.#state = 'ready';
      this.#version = s.version;
      this.#clientCaps = s.clientCaps;
      this.#apps = declaresApps(s.clientCaps);
    }
    const rank = LOG_LEVELS.indexOf(s.logLevel as LogLevel);
    if (rank >= 0) this.#logRank = rank;
    const subs = new Set(s.subscriptions);
    for (const [uri, sub] of this.#subs) {
      if (subs.has(uri)) continue;
      sub.unwatch?.();
      this.#subs.delete(uri);
    }
    for (const uri of subs) if (!this.#subs.has(uri)) this.#watch(uri, principal, this.#opts.runtime.current(this.#opts.endpoint));
    const loaded = this.#tools.loaded;
    loaded.clear();
    for (const n of s.loadedTools) loaded.add(n);
    const tasks = new Set(s.tasks);
    // A task gone from the record has ended (its starter removed it): told here once if its end went unheard.
    for (const id of this.#tasks.keys()) if (!tasks.has(id)) this.#catchUp(id, this.#tasks.get(id)!);
    for (const id of tasks) {
      if (this.#tasks.has(id)) continue;
      this.#tasks.set(id, principal);
      if (changed) this.#catchUp(id, principal);
    }
  }

  /**
   * A task another process started in this shared session, learnt of from a change of the record: if it ended before
   * this instance followed it (its last status change went unheard here), its final status is told now — once: the
   * change listener drops a task whose end it told. (An instance built from the record follows its tasks from then on.)
   * Also run for a task this instance just started (a quick one may have ended before it was followed) and for one gone
   * from the record (its starter saw it end).
   */
  #catchUp(id: string, principal: Principal): void {
    const { tasks, runtime, transport, logger, endpoint } = this.#opts;
    tasks?.get(id, { principal, transport, catalog: runtime.current(endpoint), ...(endpoint && { endpoint }) }).then((t) => {
      if (!TERMINAL.has(t.status) || !this.#tasks.delete(id)) return;
      if (this.#mine.delete(id)) this.#unrecord(id);
      if (this.#state === 'ready' && runtime.mayDeliver(t.tool, t.args, { principal, transport, log: logger, endpoint })) this.#notify('notifications/tasks/status', legacyTask(t));
    }, () => {}); // gone, expired or no longer visible: nothing to tell
  }

  /** A task this instance started has ended: its id leaves the shared record (a failure leaves it until the session ends). */
  #unrecord(id: string): void {
    this.#opts.shared!.persist({ remove: { tasks: [id] } }).catch((err: unknown) => this.#opts.logger.debug({ task: id, err: (err as Error).message }, 'ended task not removed from its session record'));
  }

  /** Handle one parsed JSON value (a message or a batch); resolves to what must be answered, if anything. */
  async handle(input: unknown, principal: Principal, opts: HandleOptions = {}): Promise<HandleResult> {
    if (!Array.isArray(input)) return this.#one(input, principal, opts);
    if (input.length === 0) return failure(null, RPC.INVALID_REQUEST, 'an empty batch is not a valid request');
    if (this.#state !== 'ready' || this.#version !== '2025-03-26') {
      return failure(null, RPC.INVALID_REQUEST, `JSON-RPC batches are not supported in protocol version ${this.#state === 'ready' ? this.#version : LATEST_PROTOCOL_VERSION}`);
    }
    const answers = await Promise.all(input.map((m) => this.#one(m, principal, opts)));
    const out = answers.filter((a): a is JsonRpcResponse => a !== undefined);
    return out.length ? out : undefined;
  }

  /** End the session: running calls are aborted, waiting server→client requests fail. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#unsubscribe();
    this.#untask();
    this.#tasks.clear();
    this.#mine.clear();
    for (const call of this.#inflight.values()) call.abort(new SvcError('NOT_FOUND', 'session ended'));
    for (const p of [...this.#pending.values()]) p.fail(new SvcError('BACKEND_FAILED', 'session ended before the client answered'));
    for (const sub of this.#subs.values()) sub.unwatch?.();
    this.#subs.clear();
  }

  async #one(input: unknown, principal: Principal, opts: HandleOptions): Promise<JsonRpcResponse | undefined> {
    const c = classify(input);
    if (c.kind === 'invalid') return failure(c.id, RPC.INVALID_REQUEST, c.reason);
    if (c.kind === 'response') {
      if (!this.settle(c.msg)) this.#opts.shared?.unclaimed({ kind: 'answer', msg: c.msg });
      return undefined;
    }
    if (c.kind === 'notification') {
      if (c.msg.method === 'notifications/cancelled') {
        const id = c.msg.params?.requestId;
        if ((typeof id === 'string' || typeof id === 'number') && !this.cancel(id)) this.#opts.shared?.unclaimed({ kind: 'cancel', requestId: id });
      }
      return undefined;
    }
    return this.#request(c.msg, principal, opts);
  }

  /** Completes the server→client request `msg` answers; false when none here waits for it. */
  settle(msg: JsonRpcResponse): boolean {
    const p = typeof msg.id === 'string' ? this.#pending.get(msg.id) : undefined;
    p?.settle(msg);
    return p !== undefined;
  }

  /** A shared session: the server→client request `id` found no GET stream open anywhere to carry it, so it fails now. */
  undeliverable(id: JsonRpcId): void {
    const p = typeof id === 'string' ? this.#pending.get(id) : undefined;
    p?.fail(new SvcError('BACKEND_FAILED', `no open stream to the client can carry ${p.method}`));
  }

  /** Aborts the running request `id` (the client cancelled it); false when it does not run here. */
  cancel(id: JsonRpcId): boolean {
    const call = this.#inflight.get(id);
    call?.abort(CANCELLED);
    return call !== undefined;
  }

  async #request(msg: JsonRpcRequest, principal: Principal, opts: HandleOptions): Promise<JsonRpcResponse | undefined> {
    const id = msg.id;
    if (this.#state === 'closed') return errorOf(id, 'NOT_FOUND', 'session ended');
    if (msg.method === 'initialize') return this.#initialize(msg, opts.catalog ?? this.#opts.runtime.current(this.#opts.endpoint));
    if (msg.method === 'ping') return result(id, {});
    if (this.#state !== 'ready') return errorOf(id, 'INVALID_REQUEST', `send initialize before ${msg.method}`);
    if (this.#inflight.has(id)) return errorOf(id, 'INVALID_REQUEST', `request id ${JSON.stringify(id)} is already in use`);
    const meta = msg.params?._meta;
    const token = isObject(meta) && (typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number') ? meta.progressToken : undefined;
    const call = new SessionCall(this.#port, opts.reply ?? this.#opts.send, token);
    this.#inflight.set(id, call);
    try {
      const value = await this.#dispatch(msg, principal, call, opts.catalog ?? this.#opts.runtime.current(this.#opts.endpoint), opts.scope);
      return call.aborted ? this.#interrupted(id, call) : result(id, value);
    } catch (e) {
      if (call.aborted) return this.#interrupted(id, call);
      if (isSvcError(e)) opts.refusal = e;
      return this.#errorAnswer(id, msg.method, e);
    } finally {
      call.live = false;
      this.#inflight.delete(id);
    }
  }

  /** A call the client cancelled gets no answer; one cut short by the session ending gets NOT_FOUND. */
  #interrupted(id: JsonRpcId, call: SessionCall): JsonRpcResponse | undefined {
    return call.reason === CANCELLED ? undefined : errorOf(id, 'NOT_FOUND', 'session ended');
  }

  #initialize(msg: JsonRpcRequest, cat: Catalog): JsonRpcResponse {
    if (this.#state !== 'new') return errorOf(msg.id, 'INVALID_REQUEST', 'this session is already initialized');
    const p = msg.params ?? {};
    if (typeof p.protocolVersion !== 'string') return errorOf(msg.id, 'INVALID_INPUT', 'params.protocolVersion must be a string');
    this.#version = isSupportedVersion(p.protocolVersion) ? p.protocolVersion : LATEST_PROTOCOL_VERSION;
    this.#clientCaps = isObject(p.capabilities) ? p.capabilities : {};
    this.#apps = declaresApps(this.#clientCaps);
    this.#state = 'ready';
    return result(msg.id, {
      protocolVersion: this.#version,
      capabilities: this.#opts.tasks && this.#version >= '2025-11-25' ? { ...SERVER_CAPABILITIES, tasks: LEGACY_TASKS_CAPABILITY } : SERVER_CAPABILITIES,
      serverInfo: { name: cat.name, version: cat.version },
      ...(instructionsOf(cat) && { instructions: instructionsOf(cat) }),
    });
  }

  async #dispatch(msg: JsonRpcRequest, principal: Principal, call: SessionCall, cat: Catalog, scope: RequestScope | undefined): Promise<unknown> {
    const rt = this.#opts.runtime;
    const p = msg.params ?? {};
    switch (msg.method) {
      case 'resources/subscribe': {
        const uri = str(p, 'uri');
        rt.authorizeRead(uri, { principal, transport: this.#opts.transport, log: this.#opts.logger, scope }, cat);
        if (!this.#subs.has(uri) && this.#subs.size >= (this.#opts.maxSubscriptions ?? 256)) {
          throw new SvcError('RATE_LIMITED', 'too many resource subscriptions on this session');
        }
        if (!this.#subs.has(uri)) {
          this.#watch(uri, principal, cat);
          await this.#opts.shared?.persist({ add: { subscriptions: [uri] } });
        }
        return {};
      }
      case 'resources/unsubscribe': {
        const uri = str(p, 'uri');
        const sub = this.#subs.get(uri);
        if (sub) {
          sub.unwatch?.();
          this.#subs.delete(uri);
          await this.#opts.shared?.persist({ remove: { subscriptions: [uri] } });
        }
        return {};
      }
      case 'logging/setLevel': {
        const rank = LOG_LEVELS.indexOf(p.level as LogLevel);
        if (rank < 0) throw new SvcError('INVALID_INPUT', `params.level must be one of ${LOG_LEVELS.join(', ')}`);
        this.#logRank = rank;
        await this.#opts.shared?.persist({ logLevel: LOG_LEVELS[rank]! });
        return {};
      }
      default: {
        const tasks = this.#opts.tasks;
        const tc: TaskCall | undefined = tasks && { tasks, catalog: cat, principal, transport: this.#opts.transport, scope };
        if (tc && msg.method.startsWith('tasks/')) {
          const answer = await legacyTaskMethod(msg.method, p, tc);
          if (answer !== NOT_A_TASK_METHOD) return answer;
        }
        const apps = this.#apps;
        const shared = this.#opts.shared;
        const answer = runMethod(msg.method, p, {
          runtime: rt, catalog: cat, principal,
          context: () => new Context(principal, this.#opts.logger, this.#opts.transport, call, call, isObject(msg.params?._meta) ? msg.params._meta : undefined, scope),
          inputErrorsAsToolResults: this.#version >= '2025-11-25',
          apps,
          session: this.#tools,
          taskAsk: isObject(p.task) ? 'asked' : 'plain',
          runAsTask: tc && ((admitted) => startLegacyTask(admitted, tc).then(async (t) => {
            this.#tasks.set(t.id, principal);
            if (shared) {
              this.#mine.add(t.id);
              await shared.persist({ add: { tasks: [t.id] } });
              this.#catchUp(t.id, principal);
            }
            return { task: legacyTask(t) };
          })),
        });
        return shared ? this.#persistTools(answer, shared) : answer;
      }
    }
  }

  /** A shared session: the tools load_tools added (or a listing dropped) while `answer` was made are recorded before it is answered. */
  async #persistTools(answer: Promise<unknown>, shared: SharedSessionHooks): Promise<unknown> {
    const loaded = this.#tools.loaded;
    const before = new Set(loaded);
    const value = await answer;
    const add = [...loaded].filter((n) => !before.has(n));
    const remove = [...before].filter((n) => !loaded.has(n));
    if (add.length || remove.length) await shared.persist({ add: { loadedTools: add }, remove: { loadedTools: remove } });
    return value;
  }

  /** Subscribes `uri` for `principal`, watching its changes (while #watching): notifications/resources/updated while `principal` may still read it. */
  #watch(uri: string, principal: Principal, cat: Catalog): void {
    const rt = this.#opts.runtime;
    const unwatch = !this.#watching ? undefined : rt.watchResource(uri, () => {
      if (this.#state === 'ready' && rt.mayStillRead(uri, principal, this.#opts.endpoint)) this.#notify('notifications/resources/updated', { uri });
    }, cat);
    this.#subs.set(uri, { unwatch, principal });
  }

  /**
   * A shared session's GET stream is now held by this instance (true) or no longer (false): its subscribed sources are
   * watched only while it is (only the holder speaks, so N processes holding a copy do not subscribe N times upstream).
   */
  holdStream(held: boolean): void {
    if (this.#state === 'closed' || held === this.#watching) return;
    this.#watching = held;
    const cat = this.#opts.runtime.current(this.#opts.endpoint);
    for (const [uri, sub] of this.#subs) {
      if (held) this.#watch(uri, sub.principal, cat);
      else {
        sub.unwatch?.();
        sub.unwatch = undefined;
      }
    }
  }

  /** A server→client request. Failures are SvcError BACKEND_FAILED / BACKEND_TIMEOUT (a tool error if uncaught). */
  #ask(call: SessionCall, method: string, params: Record<string, unknown>, timeoutMs: number | undefined): Promise<unknown> {
    const cap = NEEDS[method];
    if (cap && !(cap in this.#clientCaps)) {
      return Promise.reject(new SvcError('BACKEND_FAILED', `the client did not declare the ${cap} capability, so ${method} cannot be sent`));
    }
    if (this.#state === 'closed') return Promise.reject(new SvcError('BACKEND_FAILED', 'session ended'));
    const id = `${this.#opts.shared?.askPrefix ?? 's'}${++this.#seq}`;
    const signal = call.signal;
    return new Promise((resolve, reject) => {
      const done = (cancelReason?: string) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#pending.delete(id);
        if (cancelReason) this.#port.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: cancelReason } });
      };
      const onAbort = () => {
        done('the call that made this request ended');
        reject(new SvcError('CANCELLED', `${method} abandoned: the call was cancelled`));
      };
      const timer = setTimeout(() => {
        done('timed out');
        reject(new SvcError('BACKEND_TIMEOUT', `the client did not answer ${method} in time`));
      }, timeoutMs ?? this.#opts.requestTimeoutMs ?? 60_000);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        method,
        settle: (m) => {
          done();
          if (m.error) reject(new SvcError('BACKEND_FAILED', `the client answered ${method} with error ${m.error.code}: ${m.error.message}`, { data: { error: m.error } }));
          else resolve(m.result);
        },
        fail: (err) => {
          done();
          reject(err);
        },
      });
      if (!call.send({ jsonrpc: '2.0', id, method, params })) {
        done();
        reject(new SvcError('BACKEND_FAILED', `no open stream to the client can carry ${method}`));
      }
    });
  }

  #notify(method: string, params?: Record<string, unknown>): void {
    this.#opts.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  #errorAnswer(id: JsonRpcId, method: string, e: unknown): JsonRpcResponse {
    if (isSvcError(e)) return errorFrom(id, e);
    if (e instanceof MethodNotFound) return failure(id, RPC.METHOD_NOT_FOUND, `method not found: ${method}`);
    this.#opts.logger.error({ err: e, method }, 'mcp request failed unexpectedly');
    return failure(id, RPC.INTERNAL, 'internal error');
  }
}
