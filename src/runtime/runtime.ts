// The runtime: the one place a call is admitted and run, whatever the transport.
// Guarantees: each call reads the policy store's current catalog once, or uses the one the
// transport passes (so a reload never mixes two policies in one decision); every call, read,
// prompt, listing, completion and follow-up (a task or stored result read later, a status change
// or resource update delivered) runs the one admission list (policy/admission.ts: served, visible,
// access, task, input, quota — explain prints the same list), with the inputs the call brings
// (CallAsk: the catalog, whether the client declares MCP Apps, how it asked about tasks); a
// refusal is thrown as the SvcError every transport encodes its own way (an access denial logged
// and audited, RATE_LIMITED with its wait); quotas are taken only when a limit is set and given
// back when the call (or its task) ends; only this module makes an AdmittedTool, the value that
// says a tools/call was admitted (its class is not exported), so nothing else can start a run;
// results are shaped by output_mode (a backend's JsonReply always as JSON) and inline_ok the same
// way on every transport; a large result is kept for its caller (principalKey) and admitted again,
// with the arguments that produced it, at every read; every decision and call is reported to the
// app's Observer (audit log, metrics, a span per call and per backend run) when those are on, and
// costs nothing more when they are off.

import { Context } from '../core/call-context.js';
import { SvcError } from '../errors.js';
import { findResource, type Catalog, type ToolEntry } from '../core/catalog.js';
import type { CallContext, Completion, Principal, PromptMessage, ResourceContents, ToolDef, ToolResult } from '../core/types.js';
import { admit, type Kind, type Refusal, type TaskAsk } from '../policy/admission.js';
import { InProcessQuotas, type QuotaCounter, type QuotaItem } from '../policy/quotas.js';
import { principalKey } from '../core/principal-key.js';
import { denial, rateLimited } from './denial.js';
import { RESULTS_PREFIX, ResultStore } from './results.js';
import type { Logger } from '../log.js';
import { PolicyStore, resourceKey, type ChangeSet, type PolicySnapshot } from '../policy/store.js';
import { Observer, UNKNOWN } from '../observe/observer.js';
import { inBackendSpan, type CallSpan } from '../observe/tracing.js';
import { JsonReply } from './backends/contract.js';
import { viewOf } from '../catalog/endpoint-view.js';

export type { ChangeSet, Kind, TaskAsk };

/**
 * A tools/call the runtime admitted: the tool, its arguments (bound values filled in, defaults
 * applied), and the release of the quota it took. Only the runtime makes one (the class is not
 * exported, and its private field keeps any object of the same shape from passing for one).
 */
class AdmittedTool {
  readonly #entry: ToolEntry;
  readonly #input: Record<string, unknown>;
  readonly #release: (() => void) | undefined;
  constructor(entry: ToolEntry, input: Record<string, unknown>, release: (() => void) | undefined) {
    this.#entry = entry;
    this.#input = input;
    this.#release = release;
  }

  get entry(): ToolEntry {
    return this.#entry;
  }

  get input(): Record<string, unknown> {
    return this.#input;
  }

  /** Gives the quota back (idempotent); undefined when the call took none. */
  get release(): (() => void) | undefined {
    return this.#release;
  }
}
export type { AdmittedTool };

/** What a call brings beside its capability and arguments: inputs of the admission list. */
export interface CallAsk {
  /** The catalog of the policy snapshot the caller was authenticated with (default: the current one). */
  readonly catalog?: Catalog;
  /** The client declares MCP Apps (io.modelcontextprotocol/ui): app-only tools exist for it. */
  readonly apps?: boolean;
}

/** A tools/call that may run as a task: how it asked, and where an admitted task call goes. */
export interface TaskCallAsk<T> extends CallAsk {
  readonly task: TaskAsk;
  readonly startTask: (call: AdmittedTool, ctx: CallContext) => Promise<T>;
}

/**
 * Who follows up, and where: what a follow-up's refusal needs to be logged, and the endpoint it follows through
 * (its view of the policy of the moment decides; absent: the default endpoint, the whole catalog).
 */
type Follower = Pick<CallContext, 'principal' | 'transport' | 'log' | 'scope'> & { readonly endpoint?: string };

export interface RuntimeOptions {
  inlineLimit: number;
  logger: Logger;
  /** Audit log, metrics and tracing; default: none. */
  observer?: Observer;
  /** Where quota counters live (default: in this process). */
  quotas?: QuotaCounter;
}

export class Runtime {
  readonly #store: PolicyStore;
  readonly #opts: RuntimeOptions;
  readonly #results = new ResultStore();
  readonly #obs: Observer;
  readonly #quotas: QuotaCounter;
  readonly #listCache = new WeakMap<Catalog, WeakMap<ReadonlySet<string>, Record<string, object[]>>>();

  /** A server passes its policy store; a bare catalog (tests, the code API without a server) gets a store of its own. */
  constructor(policy: PolicyStore | Catalog, opts: RuntimeOptions) {
    this.#store = policy instanceof PolicyStore ? policy : new PolicyStore({ catalog: policy, profile: { scopes: [] } }, opts.logger);
    this.#opts = opts;
    this.#quotas = opts.quotas ?? new InProcessQuotas();
    this.#obs = opts.observer ?? Observer.NONE;
  }

  /** The app's audit log, metrics and tracing (the MCP endpoint reports its session-cap refusals here too). */
  get observer(): Observer {
    return this.#obs;
  }

  /** The catalog of the store's current snapshot, or its view through the endpoint named `endpoint`. */
  current(endpoint?: string): Catalog {
    const cat = this.#store.current().catalog;
    return endpoint ? viewOf(cat, endpoint) : cat;
  }

  /** Replace only the catalog (through the store: one assignment); returns what changed and tells listeners. */
  swap(next: Catalog): ChangeSet {
    return this.#store.swap({ ...this.#store.current(), catalog: next });
  }

  onChange(fn: (c: ChangeSet) => void): () => void {
    return this.#store.onChange(fn);
  }

  /**
   * Whether change set `c` may have changed what reading `uri` gives: the resource lists changed (a resource
   * added, removed or redefined), or the contents of the resource `uri` is read from (its revision) in `cat`.
   */
  updatedBy(c: ChangeSet, uri: string, cat: Catalog = this.current()): boolean {
    if (c.resources) return true;
    if (!c.updated.size) return false;
    const found = findResource(cat, uri);
    return found !== undefined && c.updated.has(resourceKey(found.entry.def));
  }

  /**
   * One tools/call: admitted once (see the header), then run — or, when the admission says it runs as
   * a task, handed to `startTask` with its AdmittedTool (the quota taken; the task's run releases it).
   * Without `startTask` the call asks nothing of a task: a task-required tool refuses it TASK_REQUIRED,
   * which the MCP eras encode their own way.
   */
  callTool(name: string, args: unknown, ctx: CallContext, ask?: CallAsk): Promise<ToolResult>;
  callTool<T>(name: string, args: unknown, ctx: CallContext, ask: TaskCallAsk<T>): Promise<ToolResult | T>;
  callTool<T>(name: string, args: unknown, ctx: CallContext, ask: CallAsk | TaskCallAsk<T> = {}): Promise<ToolResult | T> {
    const cat = ask.catalog ?? this.current();
    if (!this.#obs.timed()) return this.#callTool(name, args, ctx, cat, ask);
    return this.#obs.call('tools/call', 'tool', cat.tools.has(name) ? name : UNKNOWN, ctx, (cs) => this.#callTool(name, args, ctx, cat, ask, cs));
  }

  async #callTool<T>(name: string, args: unknown, ctx: CallContext, cat: Catalog, ask: CallAsk | TaskCallAsk<T>, cs?: CallSpan): Promise<ToolResult | T> {
    const startTask = 'startTask' in ask ? ask.startTask : undefined;
    const v = admit({ purpose: 'call', catalog: cat, kind: 'tool', key: name, principal: ctx.principal, args, apps: ask.apps, answers: ctx.transport !== 'svc', task: startTask ? (ask as TaskCallAsk<T>).task : 'plain' });
    if (!v.ok) throw this.refusal(v, 'tool', name, ctx);
    this.#obs.allowed(ctx.principal, ctx.transport, 'tool', name, v.entry.required, ctx.scope);
    const release = v.quotas.length ? await this.#take(v.quotas, 'tool', name) : undefined;
    const call = new AdmittedTool(v.entry, v.input, release);
    if (!v.task) return this.#run(call, ctx, cs);
    try {
      return await startTask!(call, ctx);
    } catch (e) {
      release?.(); // no task took the call
      throw e;
    }
  }

  /** Runs an admitted call (a task's, see callTool) and shapes its result; its quota is released when it ends. */
  run(call: AdmittedTool, ctx: CallContext): Promise<ToolResult> {
    return this.#run(call, ctx);
  }

  /**
   * A tools/call admitted earlier, followed up now (its task read, listed, cancelled or answered): the tool
   * must still be served and the caller's scopes, tenant patterns and bindings must still allow `args`, the
   * arguments it was admitted with. Answers the refusal, or undefined; logs nothing.
   */
  refollow(tool: string, args: Record<string, unknown>, p: Principal, cat: Catalog = this.current()): Refusal | undefined {
    const v = admit({ purpose: 'follow', catalog: cat, kind: 'tool', key: tool, principal: p, args });
    return v.ok ? undefined : v;
  }

  /** A refusal of the admission list as the SvcError the transports send (an access denial is logged and audited). */
  refusal(r: Refusal, kind: Kind, name: string, ctx: Follower): SvcError {
    if (r.denial) return denial(ctx.log, ctx.principal, ctx.transport, kind, name, r.denial, this.#obs, ctx.scope);
    return new SvcError(r.code, r.message, r.data && { data: r.data });
  }

  /**
   * Whether a task's status change may still reach `ctx.principal` on a stream it opened earlier (a 2025 session's
   * notifications/tasks/status, a 2026 subscriptions/listen): that credential must still be current — not expired,
   * and for a static token not changed or removed by a reload since — and the follow-up admission must allow the
   * task's arguments under the current policy. A withheld delivery is logged.
   */
  mayDeliver(tool: string, args: Record<string, unknown>, ctx: Follower): boolean {
    const snap = this.#store.current();
    const p = ctx.principal;
    if (lapsed(p, snap)) {
      ctx.log.info({ event: 'task.notification_withheld', sub: p.sub, transport: ctx.transport, tool }, `a status change of ${tool} was not sent to ${p.sub}: the credential that opened the stream is no longer current`);
      return false;
    }
    const r = this.refollow(tool, args, p, viewOf(snap.catalog, ctx.endpoint));
    if (r) this.refusal(r, 'tool', tool, ctx); // logged (and audited) as a denial; nothing is thrown
    return !r;
  }

  /**
   * Whether a change of the resource `uri` may still reach `p` on a stream it opened earlier (a resources/subscribe,
   * a subscriptions/listen): its credential still current, as for mayDeliver, and mayRead under the current policy
   * (through the endpoint named `endpoint`, when the stream was opened on one).
   */
  mayStillRead(uri: string, p: Principal, endpoint?: string): boolean {
    const snap = this.#store.current();
    return !lapsed(p, snap) && this.mayRead(uri, p, viewOf(snap.catalog, endpoint));
  }

  /** Whether `p` may read the resource `uri` (a filter: subscriptions/listen; nothing is logged). */
  mayRead(uri: string, p: Principal, cat: Catalog = this.current()): boolean {
    if (uri.startsWith(RESULTS_PREFIX)) return this.#heldResult(uri, p, cat).ok;
    return admit({ purpose: 'follow', catalog: cat, kind: 'resource', key: uri, principal: p }).ok;
  }

  /** The follow-up admission for subscribing to `uri` (2025 resources/subscribe): NOT_FOUND, or the denial (logged). */
  authorizeRead(uri: string, ctx: Follower, cat: Catalog = this.current()): void {
    if (uri.startsWith(RESULTS_PREFIX)) {
      const held = this.#heldResult(uri, ctx.principal, cat);
      if (!held.ok) throw this.refusal(held, 'resource', uri, ctx);
      return;
    }
    const v = admit({ purpose: 'follow', catalog: cat, kind: 'resource', key: uri, principal: ctx.principal });
    if (!v.ok) throw this.refusal(v, 'resource', uri, ctx);
  }

  async #run(call: AdmittedTool, ctx: CallContext, cs?: CallSpan): Promise<ToolResult> {
    const { entry, input } = call;
    const name = entry.def.name;
    let out: unknown;
    try {
      const run = () => entry.def.timeout_ms === undefined ? entry.def.handler(input, ctx) : withTimeout(entry.def, input, ctx);
      out = await (cs ? inBackendSpan(cs, name, ctx.transport, run) : run());
    } catch (e) {
      if (e instanceof SvcError) throw e;
      // A handler that gave up because the caller went away (an AbortError, say) did not fail: the abort's reason is the answer.
      if (ctx.signal.aborted && ctx.signal.reason instanceof SvcError) throw ctx.signal.reason;
      ctx.log.error({ err: e, tool: name }, 'tool handler threw');
      throw new SvcError('BACKEND_FAILED', `tool ${name} failed: ${(e as Error)?.message ?? String(e)}`);
    } finally {
      call.release?.();
    }
    return this.#shape(call, out, ctx.principal);
  }

  readResource(uri: string, ctx: CallContext, ask: CallAsk = {}): Promise<ResourceContents[]> {
    const cat = ask.catalog ?? this.current();
    if (!this.#obs.timed()) return this.#readResource(uri, ctx, cat, ask);
    const label = uri.startsWith(RESULTS_PREFIX) ? 'results' : findResource(cat, uri)?.entry.def.name ?? UNKNOWN;
    return this.#obs.call('resources/read', 'resource', label, ctx, (cs) => this.#readResource(uri, ctx, cat, ask, cs));
  }

  async #readResource(uri: string, ctx: CallContext, cat: Catalog, ask: CallAsk, cs?: CallSpan): Promise<ResourceContents[]> {
    if (uri.startsWith(RESULTS_PREFIX)) {
      const held = this.#heldResult(uri, ctx.principal, cat);
      if (!held.ok) throw this.refusal(held, 'resource', uri, ctx);
      return [held.contents];
    }
    const v = admit({ purpose: 'call', catalog: cat, kind: 'resource', key: uri, principal: ctx.principal, apps: ask.apps });
    if (!v.ok) throw this.refusal(v, 'resource', uri, ctx);
    this.#obs.allowed(ctx.principal, ctx.transport, 'resource', uri, v.entry.required, ctx.scope);
    const release = v.quotas.length ? await this.#take(v.quotas, 'resource', v.entry.def.uri ?? v.entry.def.uri_template!) : undefined;
    try {
      const read = () => v.entry.def.read(uri, v.input as Record<string, string>, ctx);
      return await (cs ? inBackendSpan(cs, v.entry.def.name, ctx.transport, read) : read());
    } finally {
      release?.();
    }
  }

  getPrompt(name: string, args: unknown, ctx: CallContext, ask: CallAsk = {}): Promise<{ description?: string; messages: PromptMessage[] }> {
    const cat = ask.catalog ?? this.current();
    if (!this.#obs.timed()) return this.#getPrompt(name, args, ctx, cat, ask);
    return this.#obs.call('prompts/get', 'prompt', cat.prompts.has(name) ? name : UNKNOWN, ctx, (cs) => this.#getPrompt(name, args, ctx, cat, ask, cs));
  }

  async #getPrompt(name: string, args: unknown, ctx: CallContext, cat: Catalog, ask: CallAsk, cs?: CallSpan): Promise<{ description?: string; messages: PromptMessage[] }> {
    const v = admit({ purpose: 'call', catalog: cat, kind: 'prompt', key: name, principal: ctx.principal, args, apps: ask.apps });
    if (!v.ok) throw this.refusal(v, 'prompt', name, ctx);
    this.#obs.allowed(ctx.principal, ctx.transport, 'prompt', name, v.entry.required, ctx.scope);
    const release = v.quotas.length ? await this.#take(v.quotas, 'prompt', name) : undefined;
    let messages: PromptMessage[];
    try {
      const get = () => v.entry.def.get(v.input as Record<string, string>, ctx);
      messages = await (cs ? inBackendSpan(cs, name, ctx.transport, get) : get());
    } finally {
      release?.();
    }
    return { ...(v.entry.def.description && { description: v.entry.def.description }), messages };
  }

  /**
   * The tools `p` is shown (the admission list for a listing). `apps`: the client declares MCP Apps
   * (io.modelcontextprotocol/ui), so a tool with a view is listed with its _meta.ui and app-only tools are
   * there; without it they are not. `answers` false: the caller cannot answer what a tool asks its caller (a
   * /svc caller), so tools that ask (`asks`) are not there.
   */
  listTools(p: Principal, cat: Catalog = this.current(), apps = false, answers = true): object[] {
    return this.#list(cat, p, `tools${apps ? '+apps' : ''}${answers ? '' : '-asks'}`, () => [...cat.tools.values()]
      .filter((e) => admit({ purpose: 'list', catalog: cat, kind: 'tool', key: e.def.name, principal: p, apps, answers }, e).ok)
      .map((e) => (apps ? e.appsWire ?? e.wire : e.wire)));
  }

  /** The resources `p` is shown; `apps` as for listTools: a view is listed with its _meta.ui. */
  listResources(p: Principal, cat: Catalog = this.current(), apps = false): object[] {
    return this.#list(cat, p, apps ? 'resources+apps' : 'resources', () => [...cat.resources.values()]
      .filter((e) => admit({ purpose: 'list', catalog: cat, kind: 'resource', key: e.def.uri!, principal: p, apps }, e).ok)
      .map((e) => (apps ? e.appsWire ?? e.wire : e.wire)));
  }

  listResourceTemplates(p: Principal, cat: Catalog = this.current()): object[] {
    return this.#list(cat, p, 'templates', () => cat.templates
      .filter((e) => admit({ purpose: 'list', catalog: cat, kind: 'resource', key: e.def.uri_template!, principal: p }, e).ok)
      .map((e) => e.wire));
  }

  listPrompts(p: Principal, cat: Catalog = this.current()): object[] {
    return this.#list(cat, p, 'prompts', () => [...cat.prompts.values()]
      .filter((e) => admit({ purpose: 'list', catalog: cat, kind: 'prompt', key: e.def.name, principal: p }, e).ok)
      .map((e) => e.wire));
  }

  /**
   * Completion of a prompt argument or a resource template's variable, for a caller who is shown it (the
   * admission list for a listing): the capability's own completer (an upstream's, which is asked) or else a
   * prompt argument's declared `values` filtered by prefix; nothing for anything else. At most 100 values.
   */
  async complete(ref: { type: string; name?: string; uri?: string }, argName: string, value: string, ctx: CallContext, context?: Record<string, string>, cat: Catalog = this.current()): Promise<Completion> {
    const none = { values: [] };
    const prompt = ref.type === 'ref/prompt' && ref.name ? cat.prompts.get(ref.name) : undefined;
    const resource = ref.type === 'ref/resource' && ref.uri ? cat.resources.get(ref.uri) ?? cat.templates.find((t) => t.def.uri_template === ref.uri) : undefined;
    const shown = prompt ? admit({ purpose: 'list', catalog: cat, kind: 'prompt', key: ref.name!, principal: ctx.principal }, prompt).ok
      : resource ? admit({ purpose: 'list', catalog: cat, kind: 'resource', key: ref.uri!, principal: ctx.principal }, resource).ok : false;
    const entry = prompt ?? resource;
    if (!entry || !shown) return none;
    if (entry.def.complete) {
      const out = await entry.def.complete(argName, value, context, ctx);
      return { ...out, values: out.values.slice(0, 100) };
    }
    const arg = 'arguments' in entry.def ? entry.def.arguments?.find((a) => a.name === argName) : undefined;
    const values = (arg?.values ?? []).filter((v) => v.startsWith(value)).slice(0, 100);
    return { values, total: values.length, hasMore: false };
  }

  /**
   * Watches the resource `uri` where its source reports changes (an upstream's): `onUpdated` on each, until
   * the returned unwatch; a resource that reports none (or no resource) watches nothing. Whether the watcher
   * may still read it is for the caller to check at each delivery (mayRead).
   */
  watchResource(uri: string, onUpdated: () => void, cat: Catalog = this.current()): () => void {
    const found = findResource(cat, uri);
    return found?.entry.def.watch?.(uri, onUpdated) ?? (() => undefined);
  }

  /** A listing, built once per catalog and scope set (the admission of a listing reads nothing else of the caller's that changes). */
  #list(cat: Catalog, p: Principal, key: string, build: () => object[]): object[] {
    let perCat = this.#listCache.get(cat);
    if (!perCat) this.#listCache.set(cat, (perCat = new WeakMap()));
    let lists = perCat.get(p.scopes);
    if (!lists) perCat.set(p.scopes, (lists = {}));
    return (lists[key] ??= build());
  }

  /** A kept large result for `p`: its contents, once the tool that produced it admits `p` again with the arguments it ran with. */
  #heldResult(uri: string, p: Principal, cat: Catalog): { ok: true; contents: ResourceContents } | Refusal {
    const held = this.#results.get(principalKey(p), uri);
    if (!held) return { ok: false, step: 'served', code: 'NOT_FOUND', message: `no resource ${uri}`, why: 'no such result for this caller (or it expired)', data: { uri } };
    const again = this.refollow(held.tool, held.args, p, cat);
    return again ?? { ok: true, contents: held.contents };
  }

  /** Takes this call's quotas; returns the release, or throws RATE_LIMITED. */
  async #take(items: readonly QuotaItem[], kind: Kind, key: string): Promise<() => void> {
    const a = await this.#quotas.acquire(items, Date.now());
    if (!a.ok) throw rateLimited(kind, key, a.retryAfterMs, a.label);
    return a.release;
  }

  #shape(call: AdmittedTool, out: unknown, p: Principal): ToolResult {
    if (isToolResult(out)) return out;
    const entry = call.entry;
    let text: string;
    let structured: Record<string, unknown> | undefined;
    const json = out instanceof JsonReply || entry.outputMode === 'json';
    if (json) {
      let value = out instanceof JsonReply ? out.value : out;
      if (typeof out === 'string') {
        try {
          value = JSON.parse(out);
        } catch {
          throw new SvcError('BACKEND_FAILED', `tool ${entry.def.name} declared output_mode json but its output is not JSON`);
        }
      }
      structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
      text = JSON.stringify(value);
    } else {
      text = typeof out === 'string' ? out : out instanceof Uint8Array ? Buffer.from(out).toString('utf8') : out === undefined ? '' : JSON.stringify(out);
    }
    if (!entry.inlineOk && Buffer.byteLength(text) > this.#opts.inlineLimit) {
      const mimeType = json ? 'application/json' : 'text/plain';
      const uri = this.#results.put(principalKey(p), entry.def.name, call.input, text, mimeType);
      return { content: [{ type: 'resource_link', uri, name: `${entry.def.name} result`, mimeType, description: `${Buffer.byteLength(text)} bytes; readable for 15 minutes` }] };
    }
    return structured ? { content: [{ type: 'text', text }], structuredContent: structured } : { content: [{ type: 'text', text }] };
  }
}

/**
 * A failed call of tool `name` as an MCP tool result: the model sees the error, the protocol call succeeds.
 * The text says what was wrong; structuredContent is {error} exactly as /svc answers it (code, message, and for
 * INVALID_INPUT the `errors` list) — unless the tool declares an outputSchema, which clients check structuredContent
 * against even on an error (the MCP SDK does): then the text alone. The same on a plain call and a task's result.
 */
export function toolErrorResult(err: SvcError, cat: Catalog, name: string): ToolResult {
  const content: ToolResult['content'] = [{ type: 'text', text: `${err.code}: ${err.message}` }];
  return cat.tools.get(name)?.wire.outputSchema ? { content, isError: true } : { content, structuredContent: { error: err.toJSON() }, isError: true };
}

/** Runs a handler with a deadline: its signal aborts and the call fails with BACKEND_TIMEOUT. */
async function withTimeout(def: ToolDef, input: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
  const ms = def.timeout_ms!;
  const controller = new AbortController();
  const outer = ctx.signal;
  const onAbort = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new SvcError('BACKEND_TIMEOUT', `tool ${def.name} did not finish within ${ms} ms`);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  const inner = new Context(ctx.principal, ctx.log, ctx.transport, ctx.channel, controller, ctx.meta, ctx.scope);
  try {
    return await Promise.race([Promise.resolve(def.handler(input, inner)), timeout]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
  }
}

/** A credential no longer current: expired, or a static token changed or removed by a reload since. */
function lapsed(p: Principal, snap: PolicySnapshot): boolean {
  return (p.expiresAt !== undefined && p.expiresAt * 1000 <= Date.now()) || (p.kind === 'static' && !snap.tokens?.stillValid(p));
}

function isToolResult(v: unknown): v is ToolResult {
  return v !== null && typeof v === 'object' && Array.isArray((v as ToolResult).content);
}
