// The admission list: the steps that admit a call, written once, in order, as data. The runtime runs
// it for every call, read, prompt, listing and re-read (runtime.ts), `explain` prints it (explain.ts),
// so what explain says and what the server does cannot drift. Guarantees:
// - the steps run in the order of STEPS and the first refusal decides:
//   served → visible → access → task → input → quota;
// - a step reads only the Ask: the catalog (one policy snapshot), the capability, the caller, the
//   arguments, whether the client declares MCP Apps, how the call asked about tasks — nothing else;
// - a refusal is a value: the step, the error code every transport encodes its own way, the message
//   the caller gets and one line saying why (what explain prints); an access refusal carries its
//   Denial (required and missing scopes, or the binding) for the log, the audit event and the challenge;
// - a `call` runs every step that applies to its kind; a `list` (what a caller is shown) runs served,
//   visible and access without arguments (canSee); a `follow` (a task or a stored result read later,
//   a task's status change or a resource update delivered, a subscription) runs served and access
//   with the arguments the call was admitted with (a resource: its URI's), so a reload that took a
//   scope away ends access to what the call produced;
// - the quota step names the quotas that apply and takes nothing: only the runtime takes them, and
//   only the runtime makes the value that says a call was admitted (runtime.ts `Admitted`);
// - the allowed path of a capability without tenant patterns, bindings or limits allocates the
//   state object and nothing else.

import { findResource, withheldOf, type CapabilityEntry, type Catalog, type Guarded, type PromptEntry, type ResourceEntry, type ToolEntry } from '../core/catalog.js';
import type { Guard } from '../core/guard.js';
import type { Principal } from '../core/types.js';
import type { ErrorCode } from '../errors.js';
import { inputProblems, summarize } from './input-errors.js';
import { quotaItems, type QuotaItem } from './quotas.js';
import { canSee, decideCall, type CallDecision, type Denial } from './scopes.js';

export type Kind = 'tool' | 'resource' | 'prompt';

/**
 * How a call asked about running as a task: `asked` (params.task, the 2026 tasks extension,
 * `Prefer: respond-async`), `plain` (an MCP call that asked nothing: a task-required tool refuses
 * it), `auto` (/svc: a task exactly when the tool requires one).
 */
export type TaskAsk = 'asked' | 'plain' | 'auto';

/** call: a new call; list: whether a caller is shown the capability; follow: what a call produced or a caller follows, read or delivered later (a task, a stored result, a status change, a resource update). */
export type Purpose = 'call' | 'list' | 'follow';

export type StepName = 'served' | 'visible' | 'access' | 'task' | 'input' | 'quota';

/** Everything the steps read. */
export interface Ask {
  readonly purpose: Purpose;
  readonly catalog: Catalog;
  readonly kind: Kind;
  /** A tool or prompt name, or a resource URI (explain also takes a resource template's URI template). */
  readonly key: string;
  readonly principal: Principal;
  /** A tool's or prompt's arguments; for `follow`, the arguments the call was admitted with. */
  readonly args?: unknown;
  /** The client declares MCP Apps (io.modelcontextprotocol/ui): app-only tools exist for it. */
  readonly apps?: boolean;
  /** false: the caller cannot answer what a tool asks its caller (a /svc caller): tools that ask (`asks`) do not exist for it. */
  readonly answers?: boolean;
  /** How a tools/call asked about tasks (default plain). */
  readonly task?: TaskAsk;
}

/** A refusal: the step that refused, what the caller is told, and why in one line. */
export interface Refusal {
  readonly ok: false;
  readonly step: StepName;
  readonly code: ErrorCode;
  /** The error's message (the wire's). */
  readonly message: string;
  /** Why, for an operator (explain prints `CODE: why`). */
  readonly why: string;
  readonly data?: Record<string, unknown>;
  /** The access step's denial (required and missing scopes, or the binding): logged and audited by the runtime. */
  readonly denial?: Denial;
}

type Entry = CapabilityEntry;

/** Every step passed: the entry, the arguments it runs with (bound values filled in), whether it runs as a task, the quotas that apply. */
export interface Cleared<E extends Entry = Entry> {
  readonly ok: true;
  readonly entry: E;
  readonly input: Record<string, unknown>;
  /** A bound argument was filled in from the credential. */
  readonly bound: boolean;
  readonly task: boolean;
  readonly quotas: readonly QuotaItem[];
}

export type Verdict<E extends Entry = Entry> = Cleared<E> | Refusal;

/** One step: its name, what it checks in words, the purposes and kinds it runs for, and the check. */
export interface Step {
  readonly name: StepName;
  readonly says: string;
  readonly on: readonly Purpose[];
  readonly kinds: readonly Kind[];
  run(s: State): Refusal | undefined;
}

/** What the steps found so far. */
interface State {
  readonly ask: Ask;
  entry: Entry | undefined;
  input: Record<string, unknown>;
  bound: boolean;
  task: boolean;
  quotas: readonly QuotaItem[];
}

const ALL: readonly Kind[] = ['tool', 'resource', 'prompt'];
const NO_QUOTAS: readonly QuotaItem[] = Object.freeze([]);
const NO_ARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** The admission list. */
export const STEPS: readonly Step[] = Object.freeze([
  step({
    name: 'served',
    says: 'the capability exists and is served (a pinned upstream\'s capability the operator has not accepted is withheld)',
    on: ['call', 'list', 'follow'],
    kinds: ALL,
    run: served,
  }),
  step({
    name: 'visible',
    says: 'it is there for this caller (an app-only tool, MCP Apps visibility [app], only for a client that declares io.modelcontextprotocol/ui; a tool that asks its caller, `asks`, only for a caller that can answer: not on /svc)',
    on: ['call', 'list'],
    kinds: ['tool'],
    run: (s) => {
      const e = s.entry as ToolEntry;
      if (e.appOnly && !s.ask.apps) {
        return refuse('visible', 'NOT_FOUND', `no tool named ${s.ask.key}`,
          'app-only (ui.visibility [app]): only MCP clients that declare io.modelcontextprotocol/ui see and call it');
      }
      if (s.ask.answers === false && e.def.asks?.length) {
        return refuse('visible', 'NOT_FOUND', `no tool named ${s.ask.key} here: it asks its caller for ${e.def.asks.join(', ')}, which only an MCP client (/mcp, /ws) can answer`,
          `asks its caller for ${e.def.asks.join(', ')} (asks): only a caller that can answer, over /mcp or /ws, sees and calls it`);
      }
      return undefined;
    },
  }),
  step({
    name: 'access',
    says: 'the caller holds its scopes (fixed, and tenant-bound ones filled from the arguments) and its bound arguments match the credential',
    on: ['call', 'list', 'follow'],
    kinds: ALL,
    run: access,
  }),
  step({
    name: 'task',
    says: 'it may run the way the call asked (a task-required tool refuses a plain MCP call; /svc makes it a task)',
    on: ['call'],
    kinds: ['tool'],
    run: (s) => {
      const e = s.entry as ToolEntry;
      const t = taskMode(e.task, s.ask.task ?? 'plain');
      if (t !== 'refused') {
        s.task = t;
        return undefined;
      }
      return refuse('task', 'TASK_REQUIRED', `Task augmentation required for tools/call requests: tool ${e.def.name} runs only as a task`, taskRequired(e.def.name));
    },
  }),
  step({
    name: 'input',
    says: 'the arguments match its input schema (a prompt: its declared string arguments)',
    on: ['call'],
    kinds: ['tool', 'prompt'],
    run: (s) => (s.ask.kind === 'tool' ? toolInput(s) : promptInput(s)),
  }),
  step({
    name: 'quota',
    says: 'its quotas have room (counted per caller; taken when the call starts, given back when it or its task ends)',
    on: ['call'],
    kinds: ALL,
    run: (s) => {
      const e = s.entry!;
      const cat = s.ask.catalog;
      if (e.limits || cat.limits) s.quotas = quotaItems(s.ask.principal, `${s.ask.kind}:${quotaKey(e, s.ask.kind)}`, e.limits, cat.limits);
      return undefined;
    },
  }),
]);

/** The steps each purpose runs for each kind, in order: resolved once. */
const PLAN: Readonly<Record<Purpose, Readonly<Record<Kind, readonly Step[]>>>> = plan();

/** Runs the admission list for `ask`; `entry` skips the lookup where the caller walks the catalog itself (lists). */
export function admit(ask: Ask & { kind: 'tool' }, entry?: ToolEntry): Verdict<ToolEntry>;
export function admit(ask: Ask & { kind: 'resource' }, entry?: ResourceEntry): Verdict<ResourceEntry>;
export function admit(ask: Ask & { kind: 'prompt' }, entry?: PromptEntry): Verdict<PromptEntry>;
export function admit(ask: Ask, entry?: Entry): Verdict;
export function admit(ask: Ask, entry?: Entry): Verdict {
  const s: State = { ask, entry, input: NO_ARGS, bound: false, task: false, quotas: NO_QUOTAS };
  const steps = PLAN[ask.purpose][ask.kind];
  for (let i = 0; i < steps.length; i++) {
    const r = steps[i]!.run(s);
    if (r) return r;
  }
  return { ok: true, entry: s.entry!, input: s.input, bound: s.bound, task: s.task, quotas: s.quotas };
}

/** The steps a purpose runs for a kind, in order (explain prints them). */
export function stepsFor(purpose: Purpose, kind: Kind): readonly Step[] {
  return PLAN[purpose][kind];
}

/**
 * The access step alone, for a guard that is no capability of the catalog: a route's own scope (GET
 * /svc/explain?as=), an upstream rule's scopes (explain and diff of a gateway). The same decision.
 */
export function admitAccess(g: Guard, p: Principal, args?: unknown): CallDecision {
  return decideCall(g, p, args);
}

/** Whether the call runs as a task, or is refused because the tool runs only as one. */
export function taskMode(support: ToolEntry['task'], ask: TaskAsk): boolean | 'refused' {
  if (support === 'forbidden') return false;
  if (ask === 'asked') return true;
  if (support === 'required') return ask === 'auto' ? true : 'refused';
  return false;
}

/** Why a task-required tool refuses a plain call, and how to call it. */
export function taskRequired(name: string): string {
  return `task required: a plain tools/call is refused (TASK_REQUIRED on MCP 2025-11-25, MISSING_CLIENT_CAPABILITY on 2026-07-28); `
    + `the tool accepts a task-augmented call (params.task, or the tasks extension; POST /svc/tools/${name} starts the task and answers 202)`;
}

function served(s: State): Refusal | undefined {
  if (s.entry) return undefined;
  const { catalog: cat, kind, key } = s.ask;
  if (kind === 'tool') s.entry = cat.tools.get(key);
  else if (kind === 'prompt') s.entry = cat.prompts.get(key);
  else if (key.includes('{') && (s.entry = cat.templates.find((t) => t.def.uri_template === key))) {
    // explain names a resource template by its URI template, its variables given as arguments
    const given = s.ask.args;
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) s.input = given as Record<string, unknown>;
  } else {
    const found = findResource(cat, key);
    s.entry = found?.entry;
    if (found) s.input = found.vars;
  }
  if (s.entry) return undefined;
  if (s.ask.purpose === 'follow' && kind === 'tool') return refuse('served', 'NOT_FOUND', `tool ${key} is no longer served`, `tool ${key} is no longer served`);
  const id = `${kind}:${key}`;
  const w = withheldOf(cat, id);
  if (w) {
    const how = w.reason === 'changed' ? 'changed since it was accepted' : w.reason === 'new' || w.reason === 'unpinned' ? 'but it was never accepted' : 'in a form that cannot be pinned';
    const message = `${id} is withheld: upstream ${w.upstream} lists it ${how}; the operator reviews it with fastsvc upstreams accept ${w.upstream}`;
    return refuse('served', 'CAPABILITY_WITHHELD', message, message, { ...(kind === 'resource' && { uri: key }), upstream: w.upstream, reason: w.reason });
  }
  const message = kind === 'resource' ? `no resource ${key}` : `no ${kind} named ${key}`;
  // Through a named endpoint (the catalog is its view), a capability outside its selection does not exist: the caller is told
  // what an unknown name gets, the operator why.
  const why = cat.endpoint ? `${message} through endpoint ${cat.endpoint.name} (its select does not take it, or it does not exist)` : message;
  return refuse('served', 'NOT_FOUND', message, why, kind === 'resource' ? { uri: key } : undefined);
}

function access(s: State): Refusal | undefined {
  const { principal: p, purpose, kind, key } = s.ask;
  const g: Guarded = s.entry!;
  if (purpose === 'list') {
    const d = canSee(g, p);
    return d.ok ? undefined : denied(kind, key, d);
  }
  // A resource is decided on its URI's variables, a tool or prompt on its arguments.
  const args = kind === 'resource' ? s.input : s.ask.args;
  const d = decideCall(g, p, args);
  if (!d.ok) return denied(kind, key, d);
  if (d.args) {
    s.input = d.args;
    s.bound = true;
  }
  return undefined;
}

function denied(kind: Kind, key: string, d: Denial): Refusal {
  if (d.reason === 'bound_argument') {
    const why = d.detail ?? 'a bound argument differs';
    return { ok: false, step: 'access', code: 'ARGUMENT_BOUND', message: `${kind} ${key}: ${why}`, why, data: { reason: d.detail }, denial: d };
  }
  return {
    ok: false, step: 'access', code: 'INSUFFICIENT_SCOPE', message: `${kind} ${key} requires scope ${d.missing.join(' ')}`,
    why: `missing ${d.missing.join(' ')}`, data: { required: d.required, missing: d.missing }, denial: d,
  };
}

function toolInput(s: State): Refusal | undefined {
  const e = s.entry as ToolEntry;
  const input = s.bound ? s.input : s.ask.args === undefined || s.ask.args === null ? NO_ARGS : s.ask.args;
  if (typeof input !== 'object' || Array.isArray(input)) {
    return refuse('input', 'INVALID_INPUT', 'arguments must be a JSON object', 'arguments must be a JSON object', { errors: [{ path: '', message: 'must be object' }] });
  }
  // The validator fills schema defaults in: a fresh object, so that no caller's (or the frozen empty) object is changed.
  const own = input === NO_ARGS ? {} : (input as Record<string, unknown>);
  if (!e.validate(own)) {
    const problems = inputProblems(e.validate.errors);
    const why = summarize(problems);
    return refuse('input', 'INVALID_INPUT', `invalid arguments for ${e.def.name}: ${why}`, why, {
      errors: problems.errors, ...(problems.omitted > 0 && { omitted: problems.omitted }),
    });
  }
  s.input = own;
  return undefined;
}

function promptInput(s: State): Refusal | undefined {
  const e = s.entry as PromptEntry;
  const given = s.ask.args ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    return refuse('input', 'INVALID_INPUT', 'arguments must be an object of strings', 'arguments must be an object of strings');
  }
  const args = given as Record<string, unknown>;
  const declared = e.def.arguments ?? [];
  const errors: { path: string; message: string }[] = [];
  for (const a of declared) {
    if (a.required && (args[a.name] === undefined || args[a.name] === '')) errors.push({ path: `/${a.name}`, message: 'is required' });
  }
  for (const [k, v] of Object.entries(args)) {
    if (!declared.some((a) => a.name === k)) errors.push({ path: `/${k}`, message: 'is not a declared argument' });
    else if (typeof v !== 'string') errors.push({ path: `/${k}`, message: 'must be string' });
  }
  if (errors.length) {
    return refuse('input', 'INVALID_INPUT', `invalid arguments for prompt ${e.def.name}`, errors.map((x) => `${x.path} ${x.message}`).join('; '), { errors });
  }
  s.input = args;
  return undefined;
}

/** The key a capability's own quota counts under: a resource template's, not each URI's. */
function quotaKey(e: Entry, kind: Kind): string {
  if (kind === 'resource') {
    const d = (e as ResourceEntry).def;
    return d.uri ?? d.uri_template!;
  }
  return (e as ToolEntry | PromptEntry).def.name;
}

function step(s: Step): Step {
  return Object.freeze(s);
}

function refuse(step: StepName, code: ErrorCode, message: string, why: string, data?: Record<string, unknown>): Refusal {
  return { ok: false, step, code, message, why, ...(data && { data }) };
}

function plan(): Record<Purpose, Record<Kind, readonly Step[]>> {
  const out = {} as Record<Purpose, Record<Kind, readonly Step[]>>;
  for (const purpose of ['call', 'list', 'follow'] as const) {
    out[purpose] = {} as Record<Kind, readonly Step[]>;
    for (const kind of ALL) out[purpose][kind] = Object.freeze(STEPS.filter((st) => st.on.includes(purpose) && st.kinds.includes(kind)));
  }
  return Object.freeze(out);
}
