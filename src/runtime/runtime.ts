// The runtime: the one place a call is decided and run, whatever the transport.
// Guarantees: each call reads the policy store's current catalog once, or uses the
// one the transport passes (so a reload never mixes two policies in one decision); each
// call is decided exactly once, here — the capability exists (one a pinned upstream lists but
// the operator has not accepted is CAPABILITY_WITHHELD, not NOT_FOUND), the caller's access
// (decideCall(): fixed scopes, tenant-bound scopes, bound arguments; lists use canSee()),
// for a tool whether it runs as a task (policy/decision.ts) and its arguments, then its
// quotas, taken only when a limit is set and released when the call (or its task) ends —
// and a refusal is thrown as the SvcError every transport encodes its own way, in one
// place each (INSUFFICIENT_SCOPE / ARGUMENT_BOUND logged as an access denial, RATE_LIMITED
// with its wait); a task is re-authorised later by the same access decision with the
// arguments it was admitted with (authorizeAgain); input is validated by the catalog's
// precompiled validator before any backend runs; results are shaped by output_mode (a backend's JsonReply
// always as JSON) and inline_ok the same way on every transport; every decision and call is reported to the
// app's Observer (audit log, metrics, a span per call and per backend run) when those are
// on, and costs nothing more when they are off.

import { Context } from '../core/call-context.js';
import { SvcError } from '../errors.js';
import { findResource, withheldOf, type Catalog, type Guarded, type ToolEntry } from '../core/catalog.js';
import type { CallContext, Completion, Principal, PromptMessage, ResourceContents, ToolDef, ToolResult } from '../core/types.js';
import { canSee, decideCall } from '../policy/scopes.js';
import { decideTool, type TaskAsk, type ToolVerdict } from '../policy/decision.js';
import { InProcessQuotas, quotaItems, type QuotaCounter } from '../policy/quotas.js';
import { denial, rateLimited } from './denial.js';
import { RESULTS_PREFIX, ResultStore } from './results.js';
import { summarize } from '../policy/input-errors.js';
import type { Logger } from '../log.js';
import { PolicyStore, type ChangeSet, type PolicySnapshot } from '../policy/store.js';
import { Observer, UNKNOWN } from '../observe/observer.js';
import { inBackendSpan, type CallSpan } from '../observe/tracing.js';
import { JsonReply } from './backends/contract.js';

export type { ChangeSet };
export type Kind = 'tool' | 'resource' | 'prompt';
export type { TaskAsk };

/** A tools/call the runtime admitted: the tool, its arguments (bound values filled in), and the release of the quota it took. */
export interface AdmittedTool {
  readonly entry: ToolEntry;
  readonly input: Record<string, unknown>;
  readonly release: (() => void) | undefined;
}

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

  /** The catalog of the store's current snapshot. */
  current(): Catalog {
    return this.#store.current().catalog;
  }

  /** Replace only the catalog (through the store: one assignment); returns what changed and tells listeners. */
  swap(next: Catalog): ChangeSet {
    return this.#store.swap({ ...this.#store.current(), catalog: next });
  }

  onChange(fn: (c: ChangeSet) => void): () => void {
    return this.#store.onChange(fn);
  }

  /**
   * One tools/call: decided once (see the header), then run — or, when the decision says it runs as
   * a task, handed to `startTask` with its admission (the quota taken; the task's run releases it).
   * `ask` says how the call asked about tasks; a call that asked nothing of a task-required tool is
   * refused TASK_REQUIRED, which the MCP eras encode their own way.
   */
  callTool(name: string, args: unknown, ctx: CallContext, cat?: Catalog): Promise<ToolResult>;
  callTool<T>(name: string, args: unknown, ctx: CallContext, cat: Catalog | undefined, ask: TaskAsk, startTask: (call: AdmittedTool, ctx: CallContext) => Promise<T>): Promise<ToolResult | T>;
  callTool<T>(name: string, args: unknown, ctx: CallContext, cat: Catalog = this.current(), ask: TaskAsk = 'plain', startTask?: (call: AdmittedTool, ctx: CallContext) => Promise<T>): Promise<ToolResult | T> {
    if (!this.#obs.timed()) return this.#callTool(name, args, ctx, cat, ask, startTask);
    return this.#obs.call('tools/call', 'tool', cat.tools.has(name) ? name : UNKNOWN, ctx, (cs) => this.#callTool(name, args, ctx, cat, ask, startTask, cs));
  }

  async #callTool<T>(name: string, args: unknown, ctx: CallContext, cat: Catalog, ask: TaskAsk, startTask: ((call: AdmittedTool, ctx: CallContext) => Promise<T>) | undefined, cs?: CallSpan): Promise<ToolResult | T> {
    const entry = cat.tools.get(name);
    // An app-only tool (MCP Apps visibility [app]) is there only for a client that declares the extension; it is listed to no other.
    if (!entry || (entry.appOnly && !ctx.apps)) throw notServed(cat, `tool:${name}`, `no tool named ${name}`);
    const v = decideTool(entry, ctx.principal, args, startTask ? ask : 'plain');
    if (!v.ok) throw this.#refusal(v, entry, ctx);
    this.#obs.allowed(ctx.principal, ctx.transport, 'tool', name, entry.required, ctx.scope);
    const release = entry.limits || cat.limits ? await this.#admit(cat, entry, ctx.principal, 'tool', name) : undefined;
    const call: AdmittedTool = { entry, input: v.input, release };
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
   * The access decision again, for a call admitted earlier (a task, read, listed or followed later): the tool
   * must still be served and the caller's scopes, tenant patterns and bindings must still allow `args`, the
   * arguments it was admitted with. Throws NOT_FOUND, or the denial (logged); with `quiet`, answers false instead
   * and logs nothing (a list leaving the task out).
   */
  authorizeAgain(tool: string, args: Record<string, unknown>, ctx: Pick<CallContext, 'principal' | 'transport' | 'log' | 'scope'>, cat: Catalog = this.current(), quiet = false): boolean {
    const entry = cat.tools.get(tool);
    if (!entry) {
      if (quiet) return false;
      throw new SvcError('NOT_FOUND', `tool ${tool} is no longer served`);
    }
    const d = decideCall(entry, ctx.principal, args);
    if (d.ok) return true;
    if (quiet) return false;
    throw denial(ctx.log, ctx.principal, ctx.transport, 'tool', tool, d, this.#obs, ctx.scope);
  }

  /**
   * Whether a task's status change may still reach `ctx.principal` on a stream it opened earlier (a 2025 session's
   * notifications/tasks/status, a 2026 subscriptions/listen): that credential must still be current — not expired,
   * and for a static token not changed or removed by a reload since — and authorizeAgain must allow the task's
   * arguments under the current policy. A withheld delivery is logged.
   */
  mayDeliver(tool: string, args: Record<string, unknown>, ctx: Pick<CallContext, 'principal' | 'transport' | 'log' | 'scope'>): boolean {
    const snap = this.#store.current();
    const p = ctx.principal;
    if (lapsed(p, snap)) {
      ctx.log.info({ event: 'task.notification_withheld', sub: p.sub, transport: ctx.transport, tool }, `a status change of ${tool} was not sent to ${p.sub}: the credential that opened the stream is no longer current`);
      return false;
    }
    try {
      return this.authorizeAgain(tool, args, ctx, snap.catalog);
    } catch {
      return false; // the denial is logged
    }
  }

  /**
   * Whether a change of the resource `uri` may still reach `p` on a stream it opened earlier (a resources/subscribe,
   * a subscriptions/listen): its credential still current, as for mayDeliver, and mayRead under the current policy.
   */
  mayStillRead(uri: string, p: Principal): boolean {
    const snap = this.#store.current();
    return !lapsed(p, snap) && this.mayRead(uri, p, snap.catalog);
  }

  /** Whether `p` may read the resource `uri` (a filter: subscriptions/listen; nothing is logged). */
  mayRead(uri: string, p: Principal, cat: Catalog = this.current()): boolean {
    if (uri.startsWith(RESULTS_PREFIX)) return true;
    const found = findResource(cat, uri);
    return found !== undefined && decideCall(found.entry, p, found.vars).ok;
  }

  /** The access decision for subscribing to `uri` (2025 resources/subscribe): NOT_FOUND, or the denial (logged). */
  authorizeRead(uri: string, ctx: Pick<CallContext, 'principal' | 'transport' | 'log' | 'scope'>, cat: Catalog = this.current()): void {
    if (uri.startsWith(RESULTS_PREFIX)) return;
    const found = findResource(cat, uri);
    if (!found) throw notServed(cat, `resource:${uri}`, `no resource ${uri}`, { uri });
    this.#authorize(found.entry, ctx, 'resource', uri, found.vars);
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
    return this.#shape(entry, out, ctx.principal);
  }

  /** A refused tools/call as its SvcError (an access denial is logged and audited). */
  #refusal(v: Exclude<ToolVerdict, { ok: true }>, entry: ToolEntry, ctx: CallContext): SvcError {
    const name = entry.def.name;
    if ('denial' in v) return denial(ctx.log, ctx.principal, ctx.transport, 'tool', name, v.denial, this.#obs, ctx.scope);
    if ('taskRequired' in v) return new SvcError('TASK_REQUIRED', `Task augmentation required for tools/call requests: tool ${name} runs only as a task`);
    if (v.invalid === 'not_object') {
      return new SvcError('INVALID_INPUT', 'arguments must be a JSON object', { data: { errors: [{ path: '', message: 'must be object' }] } });
    }
    const problems = v.invalid;
    return new SvcError('INVALID_INPUT', `invalid arguments for ${name}: ${summarize(problems)}`, {
      data: { errors: problems.errors, ...(problems.omitted > 0 && { omitted: problems.omitted }) },
    });
  }

  async readResource(uri: string, ctx: CallContext, cat: Catalog = this.current()): Promise<ResourceContents[]> {
    if (!this.#obs.timed()) return this.#readResource(uri, ctx, cat);
    const label = uri.startsWith(RESULTS_PREFIX) ? 'results' : findResource(cat, uri)?.entry.def.name ?? UNKNOWN;
    return this.#obs.call('resources/read', 'resource', label, ctx, (cs) => this.#readResource(uri, ctx, cat, cs));
  }

  async #readResource(uri: string, ctx: CallContext, cat: Catalog, cs?: CallSpan): Promise<ResourceContents[]> {
    if (uri.startsWith(RESULTS_PREFIX)) {
      const held = this.#results.get(ctx.principal.sub, uri);
      if (!held) throw new SvcError('NOT_FOUND', `no resource ${uri}`, { data: { uri } });
      return [held];
    }
    const found = findResource(cat, uri);
    if (!found) throw notServed(cat, `resource:${uri}`, `no resource ${uri}`, { uri });
    this.#authorize(found.entry, ctx, 'resource', uri, found.vars);
    const key = found.entry.def.uri ?? found.entry.def.uri_template!;
    const release = found.entry.limits || cat.limits ? await this.#admit(cat, found.entry, ctx.principal, 'resource', key) : undefined;
    try {
      const read = () => found.entry.def.read(uri, found.vars, ctx);
      return await (cs ? inBackendSpan(cs, found.entry.def.name, ctx.transport, read) : read());
    } finally {
      release?.();
    }
  }

  getPrompt(name: string, args: unknown, ctx: CallContext, cat: Catalog = this.current()): Promise<{ description?: string; messages: PromptMessage[] }> {
    if (!this.#obs.timed()) return this.#getPrompt(name, args, ctx, cat);
    return this.#obs.call('prompts/get', 'prompt', cat.prompts.has(name) ? name : UNKNOWN, ctx, (cs) => this.#getPrompt(name, args, ctx, cat, cs));
  }

  async #getPrompt(name: string, args: unknown, ctx: CallContext, cat: Catalog, cs?: CallSpan): Promise<{ description?: string; messages: PromptMessage[] }> {
    const entry = cat.prompts.get(name);
    if (!entry) throw notServed(cat, `prompt:${name}`, `no prompt named ${name}`);
    this.#authorize(entry, ctx, 'prompt', name, args);
    const given = (args ?? {}) as Record<string, unknown>;
    if (typeof given !== 'object' || Array.isArray(given)) throw new SvcError('INVALID_INPUT', 'arguments must be an object of strings');
    const declared = entry.def.arguments ?? [];
    const errors: { path: string; message: string }[] = [];
    for (const a of declared) {
      if (a.required && (given[a.name] === undefined || given[a.name] === '')) errors.push({ path: `/${a.name}`, message: 'is required' });
    }
    for (const [k, v] of Object.entries(given)) {
      if (!declared.some((a) => a.name === k)) errors.push({ path: `/${k}`, message: 'is not a declared argument' });
      else if (typeof v !== 'string') errors.push({ path: `/${k}`, message: 'must be string' });
    }
    if (errors.length) throw new SvcError('INVALID_INPUT', `invalid arguments for prompt ${name}`, { data: { errors } });
    const release = entry.limits || cat.limits ? await this.#admit(cat, entry, ctx.principal, 'prompt', name) : undefined;
    let messages: PromptMessage[];
    try {
      const get = () => entry.def.get(given as Record<string, string>, ctx);
      messages = await (cs ? inBackendSpan(cs, name, ctx.transport, get) : get());
    } finally {
      release?.();
    }
    return { ...(entry.def.description && { description: entry.def.description }), messages };
  }

  /**
   * The tools `p` may see. `apps`: the client declares MCP Apps (io.modelcontextprotocol/ui), so a tool with a view is
   * listed with its _meta.ui; without it, app-only tools (ui.visibility without model) are left out.
   */
  listTools(p: Principal, cat: Catalog = this.current(), apps = false): object[] {
    return apps
      ? this.#list(cat, p, 'tools+apps', () => [...cat.tools.values()], (e) => e.appsWire ?? e.wire)
      : this.#list(cat, p, 'tools', () => [...cat.tools.values()].filter((e) => !e.appOnly));
  }

  /** The resources `p` may see; `apps` as for listTools: a view is listed with its _meta.ui. */
  listResources(p: Principal, cat: Catalog = this.current(), apps = false): object[] {
    return apps
      ? this.#list(cat, p, 'resources+apps', () => [...cat.resources.values()], (e) => e.appsWire ?? e.wire)
      : this.#list(cat, p, 'resources', () => [...cat.resources.values()]);
  }

  listResourceTemplates(p: Principal, cat: Catalog = this.current()): object[] {
    return this.#list(cat, p, 'templates', () => [...cat.templates]);
  }

  listPrompts(p: Principal, cat: Catalog = this.current()): object[] {
    return this.#list(cat, p, 'prompts', () => [...cat.prompts.values()]);
  }

  /**
   * Completion of a prompt argument or a resource template's variable, for a caller who may see it: the
   * capability's own completer (an upstream's, which is asked) or else a prompt argument's declared `values`
   * filtered by prefix; nothing for anything else. At most 100 values.
   */
  async complete(ref: { type: string; name?: string; uri?: string }, argName: string, value: string, ctx: CallContext, context?: Record<string, string>, cat: Catalog = this.current()): Promise<Completion> {
    const none = { values: [] };
    const entry = ref.type === 'ref/prompt' && ref.name ? cat.prompts.get(ref.name)
      : ref.type === 'ref/resource' && ref.uri ? cat.resources.get(ref.uri) ?? cat.templates.find((t) => t.def.uri_template === ref.uri)
        : undefined;
    if (!entry || !canSee(entry, ctx.principal).ok) return none;
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

  #list<E extends Guarded & { wire: object }>(cat: Catalog, p: Principal, key: string, all: () => E[], wire: (e: E) => object = (e) => e.wire): object[] {
    let perCat = this.#listCache.get(cat);
    if (!perCat) this.#listCache.set(cat, (perCat = new WeakMap()));
    let lists = perCat.get(p.scopes);
    if (!lists) perCat.set(p.scopes, (lists = {}));
    return (lists[key] ??= all().filter((e) => canSee(e, p).ok).map(wire));
  }

  /** The one decision (scopes, tenant-bound scopes, bound arguments); returns the arguments with bound values filled in when that changed them. */
  #authorize(g: Guarded, ctx: Pick<CallContext, 'principal' | 'transport' | 'log' | 'scope'>, kind: Kind, name: string, args: unknown): Record<string, unknown> | undefined {
    const d = decideCall(g, ctx.principal, args);
    if (!d.ok) throw denial(ctx.log, ctx.principal, ctx.transport, kind, name, d, this.#obs, ctx.scope);
    this.#obs.allowed(ctx.principal, ctx.transport, kind, name, g.required, ctx.scope);
    return d.args;
  }

  /** Takes this call's quotas (called only when some limit is set); returns the release, or throws RATE_LIMITED. */
  async #admit(cat: Catalog, g: Guarded, p: Principal, kind: Kind, key: string): Promise<(() => void) | undefined> {
    const items = quotaItems(p, `${kind}:${key}`, g.limits, cat.limits);
    if (!items.length) return undefined;
    const a = await this.#quotas.acquire(items, Date.now());
    if (!a.ok) throw rateLimited(kind, key, a.retryAfterMs, a.label);
    return a.release;
  }

  #shape(entry: ToolEntry, out: unknown, p: Principal): ToolResult {
    if (isToolResult(out)) return out;
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
      const uri = this.#results.put(p.sub, text, mimeType);
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
  const inner = new Context(ctx.principal, ctx.log, ctx.transport, ctx.channel, controller, ctx.meta, ctx.scope, ctx.apps);
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

/** NOT_FOUND, or CAPABILITY_WITHHELD when a pinned upstream lists the capability (or, for a URI, a template matching it) but the operator has not accepted it as it is. */
function notServed(cat: Catalog, key: string, notFound: string, data?: Record<string, unknown>): SvcError {
  const w = withheldOf(cat, key);
  if (!w) return new SvcError('NOT_FOUND', notFound, data && { data });
  return new SvcError('CAPABILITY_WITHHELD', `${key} is withheld: upstream ${w.upstream} lists it ${w.reason === 'changed' ? 'changed since it was accepted' : w.reason === 'new' || w.reason === 'unpinned' ? 'but it was never accepted' : 'in a form that cannot be pinned'}; the operator reviews it with fastsvc upstreams accept ${w.upstream}`, { data: { ...data, upstream: w.upstream, reason: w.reason } });
}
