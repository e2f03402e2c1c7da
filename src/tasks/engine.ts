// The task engine: a tool call that outlives its request. Every transport (/svc, /mcp and /ws
// in both MCP eras) starts, reads, lists and cancels tasks here; they differ only in how they
// encode a task. Guarantees:
// - a task is created (and readable) before start() returns, only for a call the runtime has
//   already admitted (its one decision: tool, access, task mode, arguments, quota), and only
//   within the caps (server.task_max_running, server.task_max_running_per_principal:
//   TASK_LIMIT_REACHED); the task keeps the arguments it was admitted with;
// - a task belongs to the principal that started it (principalKey: kind, issuer, subject and
//   client): anyone else gets NOT_FOUND, exactly as for an id that never existed; ids are 128
//   random bits;
// - every read, result, list, cancel, input answer and status notification admits the caller
//   again through the runtime's admission list for a follow-up (refollow) with
//   the task's stored arguments, against the current policy — fixed scopes, tenant-bound scopes
//   and bindings alike — on every transport and every replica (a reload that removed the scope,
//   or the tool, ends access to the result); a task the caller may no longer follow is left out
//   of a list or a follow() whatever the reason, never failing the others;
// - cancelling aborts the call's AbortSignal (exec kills its process group, http aborts the
//   request, a module sees context.signal) and records who cancelled; a draining server
//   cancels what is still running when drain_timeout_ms ends and logs which tasks finished
//   and which it cancelled;
// - each start, status change, cancellation and expiry is one `task.*` log line with the
//   task id, subject, client, tool and reason, and each start, cancellation (who cancelled) and
//   expiry, a refusal by a task cap and a read of another principal's task is one audit event
//   (task_start, task_cancel, task_expire, refuse task_limit, deny not_task_owner);
// - on a shared store (PostgreSQL) start, get, list, cancel, update and settled work from any
//   replica: a task is answered only once every replica can read it; a cancel reaches the
//   replica running the task and aborts it there;
//   follow() hears a task's status changes on whichever replica runs it, each once, in order, from
//   the state it read the task in (a change made before, announced late, is not one);
//   tasks/update (input answers) needs the replica running the task, and the running caps
//   count each replica's own tasks;
// - a tool declaring ask_before_task (startAfterInput) runs before its task exists: until the
//   handler calls channel.startTask() its questions go to the call's input_required round, and a
//   run that ends with a question unanswered leaves no task behind (nothing stored or logged).

import { randomBytes } from 'node:crypto';
import type { Catalog } from '../core/catalog.js';
import type { CallChannel, CallContext, Principal, ToolResult } from '../core/types.js';
import { isSvcError, SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { Observer } from '../observe/observer.js';
import type { RequestScope } from '../core/request-scope.js';
import type { AdmittedTool, Runtime } from '../runtime/runtime.js';
import { Context } from '../core/call-context.js';
import { principalKey } from '../core/principal-key.js';
import { isShared, MemoryTaskStore, TERMINAL, type InputRequest, type SharedTaskStore, type TaskRecord, type TaskStatus, type TaskStore } from './task-store.js';

export type { TaskRecord, TaskStatus } from './task-store.js';

export interface TaskLimits {
  ttlMs: number;
  pollIntervalMs: number;
  maxRunning: number;
  maxRunningPerPrincipal: number;
}

export interface TaskEngineOptions extends TaskLimits {
  runtime: Pick<Runtime, 'current' | 'run' | 'refollow' | 'refusal' | 'mayDeliver'>;
  logger: Logger;
  store?: TaskStore;
  /** The app's audit log and metrics; none by default. */
  observer?: Observer;
}

export interface StartRequest {
  /** The call the runtime admitted to run as a task. */
  call: AdmittedTool;
  principal: Principal;
  transport: CallContext['transport'];
  /** Client requests (elicitation/create, …) the caller can answer through tasks/update; none by default. */
  askable?: ReadonlySet<string>;
  /** The request's address and trace headers (audit log, tracing), when the transport built them. */
  scope?: RequestScope;
}

/** Who asks about tasks: `catalog` the policy (an endpoint's view) of the request, `endpoint` the endpoint a follower's later deliveries are decided through. */
type Caller = { principal: Principal; transport: CallContext['transport']; catalog?: Catalog; scope?: RequestScope; endpoint?: string };

/** A follow(): the task ids it follows, for whom, and where each change goes. */
interface Follower {
  readonly ids: ReadonlySet<string>;
  /** Another replica's followed task → the version (status and time) this follower last had: read at follow(), then delivered. */
  readonly versions: Map<string, string>;
  readonly who: Caller;
  readonly fn: (t: TaskRecord) => void;
}

/** The version of a task a follower has: a change is a different one. */
const versionOf = (t: TaskRecord) => `${t.status} ${t.lastUpdatedAt}`;

interface Live {
  controller: AbortController;
  waiting: Map<string, { resolve(v: unknown): void; reject(e: unknown): void }>;
  settled: Promise<void>;
}

function failure(e: unknown): SvcError {
  return isSvcError(e) ? e : new SvcError('INTERNAL', 'the task failed unexpectedly');
}

export class TaskEngine {
  readonly #opts: TaskEngineOptions;
  readonly #store: TaskStore;
  readonly #live = new Map<string, Live>();
  readonly #listeners = new Set<(t: TaskRecord) => void>();
  readonly #followers = new Set<Follower>();
  /**
   * Reads of other replicas' changed tasks, and follow()'s reads, one at a time: changes are delivered in order, and a
   * follower gets only what was read after the version it started from.
   */
  #reading: Promise<void> = Promise.resolve();
  readonly #sweeper: NodeJS.Timeout;
  readonly #obs: Observer;

  constructor(opts: TaskEngineOptions) {
    this.#opts = opts;
    this.#obs = opts.observer ?? Observer.NONE;
    this.#store = opts.store ?? new MemoryTaskStore();
    this.#sweeper = setInterval(() => this.sweep(), Math.min(opts.ttlMs, 60_000)).unref();
    const store = this.#store;
    if (isShared(store)) {
      store.onCancel((id, by) => {
        const task = this.#live.has(id) ? store.get(id) : undefined;
        if (task && !TERMINAL.has(task.status)) this.#cancel(task, by, 'cancelled through another replica');
      });
      store.onChange((id) => this.#changedElsewhere(store, id));
    }
  }

  /**
   * Starts a task for an admitted call; resolves with the task once it is readable on every replica
   * sharing the store (at once for a store of this process only). When it cannot be saved there, the
   * task is cancelled and this rejects.
   */
  start(req: StartRequest): Promise<TaskRecord> {
    const task = this.#admit(req);
    const controller = new AbortController();
    const live = this.#publish(task, controller, req);
    live.settled = this.#opts.runtime.run(req.call, this.#context(req, controller, this.#channel(task, live, req.askable ?? new Set()))).then(
      (result) => this.#finish(task, 'completed', { result }),
      (e: unknown) => this.#finish(task, 'failed', { error: failure(e) }),
    ).finally(() => this.#live.delete(task.id));
    return this.#saved(task);
  }

  async #saved(task: TaskRecord): Promise<TaskRecord> {
    if (!isShared(this.#store)) return task;
    try {
      await this.#store.flush();
    } catch (e) {
      if (!TERMINAL.has(task.status)) this.#cancel(task, 'shutdown', 'it could not be saved to the shared store');
      throw e;
    }
    return task;
  }

  /**
   * A call to a tool declaring ask_before_task: the handler runs now with its requests going to
   * `before` (the call's input_required round); the task is created when the handler calls
   * channel.startTask(), and this resolves with `{ task }` (once every replica can read it) while the
   * run goes on as that task. If the run ends first this resolves with `{ ended }`: the caller drops
   * it (a question went unanswered: no task exists) or calls it to create the task, already finished.
   */
  startAfterInput(req: StartRequest, before: CallChannel): Promise<{ task: TaskRecord } | { ended: () => Promise<TaskRecord> }> {
    const task = this.#admit(req);
    const controller = new AbortController();
    let markDone!: () => void;
    const done = new Promise<void>((r) => (markDone = r));
    let live: Live | undefined;
    let inTask: CallChannel | undefined;
    const publish = () => {
      live = this.#publish(task, controller, req);
      live.settled = done;
      inTask = this.#channel(task, live, req.askable ?? new Set());
    };
    const now = () => inTask ?? before;
    return new Promise((resolve) => {
      const channel: CallChannel = {
        progress: (...a) => now().progress(...a),
        log: (...a) => now().log(...a),
        supports: (m) => now().supports(m),
        request: (m, params, o) => now().request(m, params, o),
        startTask: () => {
          if (live) return;
          publish();
          resolve(this.#saved(task).then(() => ({ task })));
        },
      };
      this.#opts.runtime.run(req.call, this.#context(req, controller, channel)).then((result): { result?: ToolResult; error?: SvcError } => ({ result }), (e: unknown) => ({ error: failure(e) }))
        .then((outcome) => {
          const end = () => this.#finish(task, outcome.error ? 'failed' : 'completed', outcome);
          if (live) return end();
          resolve({ ended: () => (publish(), end(), this.#live.delete(task.id), this.#saved(task)) });
        })
        .finally(() => {
          if (live) this.#live.delete(task.id);
          markDone();
        });
    });
  }

  /** The running caps (the runtime admitted the call itself), then the task's record. */
  #admit(req: StartRequest): TaskRecord {
    const log = this.#opts.logger;
    const tool = req.call.entry.def.name;
    const owner = principalKey(req.principal);
    const mine = this.#store.running(owner).length;
    const all = this.#store.running().length;
    if (mine >= this.#opts.maxRunningPerPrincipal || all >= this.#opts.maxRunning) {
      const which = mine >= this.#opts.maxRunningPerPrincipal ? `you have ${mine} running (server.task_max_running_per_principal)` : `the server has ${all} running (server.task_max_running)`;
      log.warn({ event: 'task.refused', sub: req.principal.sub, client_id: req.principal.clientId, tool, reason: 'limit' }, `task for ${tool} refused: ${which}`);
      this.#obs.limited('task_limit', `tool:${tool}`, req.transport, req.principal, undefined, req.scope);
      throw new SvcError('TASK_LIMIT_REACHED', `too many running tasks: ${which}; wait for one to finish or cancel one`);
    }
    const now = new Date().toISOString();
    return {
      id: randomBytes(16).toString('base64url'),
      tool,
      args: req.call.input,
      owner,
      sub: req.principal.sub,
      ...(req.principal.clientId !== undefined && { clientId: req.principal.clientId }),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.#opts.ttlMs,
      pollIntervalMs: this.#opts.pollIntervalMs,
    };
  }

  /** The task becomes readable (stored, live, logged). */
  #publish(task: TaskRecord, controller: AbortController, req: StartRequest): Live {
    this.#store.put(task);
    const live: Live = { controller, waiting: new Map(), settled: Promise.resolve() };
    this.#live.set(task.id, live);
    this.#log(task, 'task.started', 'started');
    this.#audit(task, 'task_start', 'admitted', req.principal, req.transport, req.scope);
    return live;
  }

  #context(req: StartRequest, controller: AbortController, channel: CallChannel): CallContext {
    return new Context(req.principal, this.#opts.logger, req.transport, channel, controller, undefined, req.scope);
  }

  /** The caller's task, started on any replica sharing the store, re-authorised; NOT_FOUND for an unknown id or someone else's task. */
  async get(id: string, who: Caller): Promise<TaskRecord> {
    const store = this.#store;
    return this.#authorize(store.get(id) ?? (isShared(store) ? await store.fetch(id) : undefined), id, who);
  }

  /** The caller's own tasks on every replica sharing the store that it may still see, oldest first. */
  async list(who: Caller): Promise<TaskRecord[]> {
    const store = this.#store;
    const local = store.list(principalKey(who.principal));
    let all = local;
    if (isShared(store)) {
      const here = new Set(local.map((t) => t.id));
      all = [...local, ...(await store.listShared(principalKey(who.principal))).filter((t) => !here.has(t.id))];
    }
    const cat = who.catalog ?? this.#opts.runtime.current();
    const now = Date.now();
    return all
      .filter((t) => (t.expiresAt === undefined || t.expiresAt > now) && !this.#opts.runtime.refollow(t.tool, t.args, who.principal, cat))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Cancels the caller's task wherever it runs (the replica running it aborts it), resolving once every replica
   * sharing the store reads it cancelled; a task already finished is returned unchanged.
   */
  async cancel(id: string, who: Caller): Promise<TaskRecord> {
    const store = this.#store;
    const task = await this.get(id, who);
    if (TERMINAL.has(task.status)) return task;
    if (!isShared(store) || this.#live.has(id)) {
      this.#cancel(task, who.principal.sub, 'cancelled by its owner');
      this.#audit(task, 'task_cancel', 'owner', who.principal, who.transport, who.scope);
      return this.#saved(task); // answered once every replica reads it cancelled
    }
    await store.requestCancel(task, who.principal.sub, `cancelled by ${who.principal.sub}`);
    this.#log({ ...task, status: 'cancelled', cancelledBy: who.principal.sub }, 'task.cancelled', 'cancelled by its owner on another replica');
    return this.#authorize(await store.fetch(id), id, who);
  }

  /** Task `id` as read now, if the caller may follow it (its own, not expired, admitted again); rejects only when the shared store cannot be read. */
  async #followable(id: string, who: Caller): Promise<TaskRecord | undefined> {
    const store = this.#store;
    const t = store.get(id) ?? (isShared(store) ? await store.fetch(id) : undefined);
    return t !== undefined && t.owner === principalKey(who.principal) && (t.expiresAt === undefined || t.expiresAt > Date.now())
      && !this.#opts.runtime.refollow(t.tool, t.args, who.principal, who.catalog) ? t : undefined;
  }

  /** Ownership, expiry, then the runtime's follow-up admission with the task's own arguments. */
  #authorize(task: TaskRecord | undefined, id: string, who: Caller): TaskRecord {
    const theirs = task !== undefined && task.owner !== principalKey(who.principal);
    if (theirs) this.#audit(task, 'deny', 'not_task_owner', who.principal, who.transport, who.scope);
    if (!task || theirs || (task.expiresAt !== undefined && task.expiresAt <= Date.now())) {
      throw new SvcError('NOT_FOUND', `no task ${id}`, { data: { taskId: id } });
    }
    const r = this.#opts.runtime.refollow(task.tool, task.args, who.principal, who.catalog);
    if (r?.step === 'served') throw new SvcError('NOT_FOUND', `no task ${id}: its tool ${task.tool} is no longer served`, { data: { taskId: id } });
    if (r) throw this.#opts.runtime.refusal(r, 'tool', task.tool, this.#ctx(who));
    return task;
  }

  #ctx(who: Caller): { principal: Principal; transport: CallContext['transport']; log: Logger; scope?: RequestScope; endpoint?: string } {
    return { principal: who.principal, transport: who.transport, log: this.#opts.logger, scope: who.scope, ...(who.endpoint && { endpoint: who.endpoint }) };
  }

  /** Resolves when the caller's task is terminal (MCP 2025-11-25 tasks/result). */
  async settled(id: string, who: Caller): Promise<TaskRecord> {
    let task = await this.get(id, who);
    const live = this.#live.get(id);
    if (live) await live.settled;
    // Running on another replica: poll the shared store at the task's own interval.
    while (!live && !TERMINAL.has(task.status)) {
      await new Promise((r) => setTimeout(r, task.pollIntervalMs));
      task = await this.get(id, who);
    }
    return task;
  }

  /**
   * Answers to the task's outstanding input requests (MCP 2026-07-28 tasks/update); unknown keys are ignored,
   * and so are answers for a task this replica does not run.
   */
  async update(id: string, who: Caller, responses: Record<string, unknown>): Promise<TaskRecord> {
    const task = await this.get(id, who);
    const live = this.#live.get(id);
    if (!live || task.status !== 'input_required') return task;
    for (const [key, value] of Object.entries(responses)) {
      const w = live.waiting.get(key);
      if (!w) continue;
      live.waiting.delete(key);
      delete task.inputRequests![key];
      w.resolve(value);
    }
    if (live.waiting.size === 0) this.#set(task, 'working', 'input received');
    return task;
  }

  /** Called with each task of this replica whose status changed. */
  onChange(fn: (t: TaskRecord) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * The caller's tasks among `ids`, wherever they run (any replica sharing the store), to follow: resolves to
   * the ids — those tasks/get would show the caller now, in the order given — and watch(fn), from which `fn`
   * gets each status change of one of them, while runtime.mayDeliver allows it (the credential still current,
   * the access decision with the task's arguments under the policy of that moment), until
   * the function watch() returns is called. Rejects when the shared store cannot be read (STORE_UNAVAILABLE).
   */
  async follow(ids: readonly string[], who: Caller): Promise<{ ids: string[]; watch(fn: (t: TaskRecord) => void): () => void }> {
    const unique = [...new Set(ids)];
    const read = this.#reading.then(() => Promise.all(unique.map((id) => this.#followable(id, who))));
    this.#reading = read.then(() => undefined, () => undefined);
    const found = (await read).filter((t): t is TaskRecord => t !== undefined);
    // The state each task had when read is where the follower starts: an announcement of it arriving later is no change.
    const versions = new Map(found.map((t) => [t.id, versionOf(t)]));
    const own = new Set(unique.filter((id) => versions.has(id)));
    return {
      ids: [...own],
      watch: (fn) => {
        const f: Follower = { ids: own, versions, who, fn };
        if (own.size) this.#followers.add(f);
        return () => void this.#followers.delete(f);
      },
    };
  }

  /** Tells each follower of `task` about its change, if the follower may still see it (runtime.mayDeliver). */
  #deliver(task: TaskRecord): void {
    for (const f of this.#followers) {
      if (f.ids.has(task.id) && this.#opts.runtime.mayDeliver(task.tool, task.args, this.#ctx(f.who))) f.fn(task);
    }
  }

  /** A task's shared record changed (any replica): a followed task of another replica is read and delivered. */
  #changedElsewhere(store: SharedTaskStore, id: string): void {
    if (store.get(id) || ![...this.#followers].some((f) => f.ids.has(id))) return; // this replica's own: #set delivered it
    this.#reading = this.#reading.then(async () => {
      const task = await store.fetch(id);
      if (!task) return;
      const version = versionOf(task);
      for (const f of this.#followers) {
        if (!f.ids.has(id) || f.versions.get(id) === version) continue;
        f.versions.set(id, version);
        if (this.#opts.runtime.mayDeliver(task.tool, task.args, this.#ctx(f.who))) f.fn(task);
      }
    }).catch((err: unknown) => this.#opts.logger.warn({ event: 'task.follow_failed', task_id: id, err }, `could not read task ${id.slice(0, 6)}… after another replica changed it`));
  }

  /** Tasks running now (for /metadata and /readyz). */
  counts(): { running: number } {
    return { running: this.#store.running().length };
  }

  /** Drop expired tasks, logging each. */
  sweep(now = Date.now()): void {
    for (const t of this.#store.sweep(now)) {
      this.#log(t, 'task.expired', `expired ${t.ttlMs} ms after it finished`);
      this.#audit(t, 'task_expire', 'ttl');
    }
  }

  /**
   * Server shutdown: waits up to `limitMs` for running tasks to finish, then cancels the rest
   * (cancelled by `shutdown`). Logs one `task.drain` line naming both groups.
   */
  async drain(limitMs: number): Promise<{ finished: string[]; cancelled: string[] }> {
    const running = this.#store.running();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(running.map((t) => this.#live.get(t.id)?.settled)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs))),
    ]);
    clearTimeout(timer);
    const cancelled: string[] = [];
    for (const t of running) {
      if (TERMINAL.has(t.status)) continue;
      this.#cancel(t, 'shutdown', `the server shut down before it finished (drain_timeout_ms ${limitMs})`);
      this.#audit(t, 'task_cancel', 'shutdown');
      cancelled.push(t.id);
    }
    const finished = running.filter((t) => !cancelled.includes(t.id)).map((t) => t.id);
    if (running.length) {
      this.#opts.logger.info({ event: 'task.drain', finished, cancelled }, `shutdown: ${finished.length} task(s) finished, ${cancelled.length} cancelled`);
    }
    return { finished, cancelled };
  }

  close(): void {
    clearInterval(this.#sweeper);
  }

  #cancel(task: TaskRecord, by: string, reason: string): void {
    task.cancelledBy = by;
    const live = this.#live.get(task.id);
    const err = new SvcError('CANCELLED', `task ${task.id} was cancelled by ${by}`);
    this.#finish(task, 'cancelled', {}, reason);
    live?.controller.abort(err);
    for (const w of live?.waiting.values() ?? []) w.reject(err);
    live?.waiting.clear();
  }

  #finish(task: TaskRecord, status: TaskStatus, outcome: { result?: ToolResult; error?: SvcError }, reason?: string): void {
    if (TERMINAL.has(task.status)) return; // cancelled first: the call's own ending changes nothing
    if (outcome.result) task.result = outcome.result;
    if (outcome.error) task.error = outcome.error;
    delete task.inputRequests;
    task.expiresAt = Date.now() + task.ttlMs;
    this.#set(task, status, reason ?? (outcome.error ? `${outcome.error.code}: ${outcome.error.message}` : outcome.result?.isError ? 'the tool reported an error' : 'done'));
  }

  #set(task: TaskRecord, status: TaskStatus, reason: string): void {
    task.status = status;
    task.lastUpdatedAt = new Date().toISOString();
    if (status === 'cancelled') task.statusMessage = `cancelled by ${task.cancelledBy}`;
    else if (status === 'failed') task.statusMessage = reason;
    else if (status === 'input_required') task.statusMessage = 'waiting for the client to answer';
    else delete task.statusMessage;
    this.#store.put(task);
    this.#log(task, status === 'cancelled' ? 'task.cancelled' : 'task.status', reason);
    for (const fn of this.#listeners) fn(task);
    this.#deliver(task);
  }

  /** The call's channel: progress messages become the status message; requests wait for tasks/update. */
  #channel(task: TaskRecord, live: Live, askable: ReadonlySet<string>): CallChannel {
    let n = 0;
    return {
      progress: async (_p, _t, message) => {
        if (message !== undefined && task.status === 'working') task.statusMessage = message;
      },
      log: async () => {},
      supports: (method) => askable.has(method),
      request: (method, params, o) => {
        if (!askable.has(method)) return Promise.reject(new SvcError('BACKEND_FAILED', `this task cannot ask the client ${method}: the client that started it cannot answer`));
        if (TERMINAL.has(task.status)) return Promise.reject(new SvcError('CANCELLED', 'the task ended'));
        const key = o?.key ?? `input-${++n}`;
        return new Promise((resolve, reject) => {
          live.waiting.set(key, { resolve, reject });
          (task.inputRequests ??= {})[key] = { method, params } satisfies InputRequest;
          if (task.status !== 'input_required') this.#set(task, 'input_required', `asks the client ${method}`);
          else this.#store.put(task);
        });
      },
    };
  }

  /** One audit event about task `t`; without a caller (expiry, shutdown) it names the task's owner. */
  #audit(t: TaskRecord, decision: 'task_start' | 'task_cancel' | 'task_expire' | 'deny', reason: string, p?: Principal, transport?: string, scope?: RequestScope): void {
    if (!this.#obs.audit.enabled) return;
    this.#obs.task({
      decision, reason, principal: p, capability: `tool:${t.tool}`, transport, scope,
      detail: {
        task_id: t.id,
        ...(p === undefined && { sub: t.sub, client_id: t.clientId }),
        ...(t.cancelledBy !== undefined && { cancelled_by: t.cancelledBy }),
      },
    });
  }

  #log(t: TaskRecord, event: string, reason: string): void {
    this.#opts.logger.info({
      event, task_id: t.id, sub: t.sub, client_id: t.clientId, tool: t.tool, status: t.status,
      ...(t.cancelledBy !== undefined && { cancelled_by: t.cancelledBy }), reason,
    }, `task ${t.tool} ${t.id.slice(0, 6)}…: ${event.slice(5)} (${reason})`);
  }
}
