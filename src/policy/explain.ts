// Why a caller sees or may call each capability. Guarantees: every verdict comes from the
// admission list the runtime runs (admission.ts) — a listing's admission for what a caller is
// shown, a call's for one call explained (the same steps, in the same order, with the same
// inputs: the arguments, whether the client declares MCP Apps, how it asks about tasks) — so
// `svc explain` and GET /svc/explain say exactly what the runtime does, and a refusal names the
// step and the error code the call would get; a reason names the scope (concrete when it can be),
// the binding, the quota or the public route involved; nothing here reads a credential. A view also
// says what the tools the caller is shown cost a model (catalog/listing-cost.ts: the tools/list it is
// sent, in bytes and o200k tokens), counted once per catalog and set of tools shown.

import type { CapabilityEntry, Catalog } from '../core/catalog.js';
import type { CredentialKind } from '../core/credential-kind.js';
import type { Principal } from '../core/types.js';
import type { ErrorCode } from '../errors.js';
import { admit, stepsFor, taskMode, taskRequired, type Kind, type StepName } from './admission.js';
import { principalValue, render } from './scopes.js';
import { quotaItems } from './quotas.js';
import { entries } from './diff.js';
import { CALL_ROUTES } from '../core/config.js';
import { listingTotal, type ListingTotal } from '../catalog/listing-cost.js';

export interface Verdict {
  /** tool:NAME, resource:URI (or URI template), prompt:NAME */
  id: string;
  visible: boolean;
  /** yes; no; `for some arguments` (a tenant-bound scope the caller holds for some values only); `as a task` (task: required). */
  callable: 'yes' | 'no' | 'for some arguments' | 'as a task';
  reasons: string[];
  /** Hidden: the step of the admission list that leaves it out, and the error a call gets (NOT_FOUND for an app-only tool without MCP Apps, else the denial). */
  refused?: { step: StepName; code: ErrorCode };
  /** The kind of credential a call sends its backend (an http backend's or an upstream's `auth`); never the credential. */
  credential?: CredentialKind;
  /** A tool's MCP Apps view: the ui:// resource that renders its results. */
  view?: string;
}

export interface Explanation {
  principal: { sub: string; kind: Principal['kind']; issuer?: string; scopes: string[]; claims?: Record<string, unknown> };
  /** The caller is taken to be an MCP client that declares MCP Apps (app-only tools are there for it). */
  apps?: true;
  capabilities: Verdict[];
  /** What the tools this caller is shown (its tools/list) cost a model: tools, bytes of JSON, o200k tokens. */
  listing: ListingTotal;
}

/** One step of the admission list as explain prints it: passed, refused, or not reached (a step before it refused). */
export interface StepOutcome {
  step: StepName;
  outcome: 'passed' | 'refused' | 'not reached';
  says: string;
}

export interface CallVerdict {
  id: string;
  allowed: boolean;
  /** Refused: the error the call gets, and the step that refused it. */
  code?: ErrorCode;
  step?: StepName;
  reasons: string[];
  /** The arguments the call would run with (bound values filled in, schema defaults applied), when allowed. */
  args?: Record<string, unknown>;
  /** The admission list for this call, in order. */
  steps: StepOutcome[];
}

/** The scope-needing capabilities are hidden from everyone on these routes (callers there are anonymous). */
export interface ExplainContext {
  publicRoutes: readonly string[];
  /** Explain for an MCP client that declares MCP Apps (default: a caller that does not, as on /svc). */
  apps?: boolean;
}

/** How one call is asked: as a task (params.task) and/or by a client that declares MCP Apps. */
export interface CallAskOptions {
  task?: boolean;
  apps?: boolean;
}

/** The scope that lets a caller ask GET /svc/explain?as=TOKEN about another token's view (declare it in profile.scopes to use it). */
export const EXPLAIN_ANY_SCOPE = 'svc.explain';

export function explainView(cat: Catalog, p: Principal, ctx: ExplainContext): Explanation {
  const capabilities = entries(cat).map(([id, g]): Verdict => {
    const view = id.startsWith('tool:') ? cat.tools.get(id.slice(5))?.def.ui?.resourceUri : undefined;
    return { ...verdict(cat, id, g, p, ctx), ...(g.def.credential && { credential: g.def.credential }), ...(view && { view }) };
  });
  const shown = new Set(capabilities.filter((c) => c.visible && c.id.startsWith('tool:')).map((c) => c.id.slice(5)));
  return {
    principal: { sub: p.sub, kind: p.kind, ...(p.issuer && { issuer: p.issuer }), scopes: [...p.scopes].sort(), ...(p.claims && { claims: { ...p.claims } }) },
    ...(ctx.apps && { apps: true as const }),
    capabilities,
    listing: listingTotal(cat, { shown: (e) => shown.has(e.def.name), apps: ctx.apps === true }),
  };
}

function verdict(cat: Catalog, id: string, g: CapabilityEntry, p: Principal, ctx: ExplainContext): Verdict {
  const reasons: string[] = [];
  const { kind, key } = split(id);
  const shown = admit({ purpose: 'list', catalog: cat, kind, key, principal: p, apps: ctx.apps }, g);
  const needsScope = g.required.length > 0 || !!g.patterns;
  if (!shown.ok) {
    const d = shown.denial;
    if (!d) reasons.push(shown.why + (shown.step === 'visible' ? ' (explain with --apps, or ?apps=1, for such a client)' : ''));
    else if (d.reason === 'bound_argument') reasons.push(`tenant binding: ${d.detail}`);
    else reasons.push(...d.missing.map((s) => `missing scope ${s}`));
  } else if (!needsScope) reasons.push('needs no scope: open to every authenticated caller');
  else {
    const bound = (g.patterns ?? []).filter((pat) => pat.args.every((a) => g.bind?.some(([arg]) => arg === a)))
      .map((pat) => render(pat, (a) => principalValue(p, g.bind!.find(([arg]) => arg === a)![1])));
    const held = [...g.required, ...bound].filter((s): s is string => !!s);
    if (held.length) reasons.push(`holds ${held.join(' ')}`);
  }
  let partial = false;
  if (shown.ok) {
    for (const pat of g.patterns ?? []) {
      const boundArgs = pat.args.filter((a) => g.bind?.some(([arg]) => arg === a));
      if (boundArgs.length === pat.args.length) continue;
      partial = true;
      const held = [...p.scopes].filter((s) => pat.regex.test(s)).sort();
      reasons.push(`tenant-bound: ${pat.source} is filled from the call's ${pat.args.join(', ')}; holds ${held.join(' ')}`);
    }
  }
  for (const [arg, from] of g.bind ?? []) {
    const v = principalValue(p, from);
    if (v !== undefined) reasons.push(`argument ${arg} is bound to ${from} = ${v}; another value is refused`);
  }
  for (const it of quotaItems(p, id, g.limits, cat.limits)) {
    const l = it.limit;
    const requests = l.requests !== undefined && `${l.requests} requests per ${l.window_ms ?? 60000} ms ${cat.limits?.shared ? 'shared by all replicas' : 'per replica'}`;
    reasons.push(`quota ${it.label}: ${[requests, l.concurrent !== undefined && `${l.concurrent} at once per replica`].filter(Boolean).join(', ')}`);
  }
  const tool = kind === 'tool' ? cat.tools.get(key) : undefined;
  const plain = tool && taskMode(tool.task, 'plain');
  if (plain === 'refused') reasons.push(taskRequired(key));
  reasons.push(...appsReasons(cat, id, p, ctx.apps === true));
  if (needsScope) {
    const open = CALL_ROUTES.filter((r) => ctx.publicRoutes.includes(r));
    if (open.length) reasons.push(`route ${open.join(', ')} is public: callers there are anonymous and hold no scope, so it is hidden there`);
  }
  return {
    id, visible: shown.ok, callable: !shown.ok ? 'no' : partial ? 'for some arguments' : plain === 'refused' ? 'as a task' : 'yes', reasons,
    ...(!shown.ok && { refused: { step: shown.step, code: shown.code } }),
  };
}

/** What MCP Apps changes for a tool with a view or an app-only tool shown to this caller, and for a view resource (who reads it). */
function appsReasons(cat: Catalog, id: string, p: Principal, apps: boolean): string[] {
  const tool = id.startsWith('tool:') ? cat.tools.get(id.slice(5)) : undefined;
  const out: string[] = [];
  const uri = tool?.def.ui?.resourceUri;
  if (uri) {
    const view = cat.resources.get(uri);
    const read = view && admit({ purpose: 'list', catalog: cat, kind: 'resource', key: uri, principal: p }, view);
    const missing = read && !read.ok && read.denial && read.denial.reason !== 'bound_argument' ? read.denial.missing.join(' ') : '';
    out.push(`MCP Apps view ${uri}${read && !read.ok ? ` (not readable: missing scope ${missing})` : ''}`);
  }
  if (tool?.appOnly && apps) out.push('app-only (ui.visibility [app]): only MCP clients that declare io.modelcontextprotocol/ui see and call it');
  const res = id.startsWith('resource:') ? cat.resources.get(id.slice(9)) : undefined;
  if (res?.def.ui) out.push(res.def.description!);
  return out;
}

/**
 * One call explained: the admission list the runtime runs for it (served, visible, access, task, input,
 * quota, in that order), with the same inputs — the arguments, whether the call asks for a task and
 * whether the client declares MCP Apps. Undefined for a capability that does not exist at all (not even withheld).
 */
export function explainCall(cat: Catalog, p: Principal, id: string, args: unknown, ask: CallAskOptions = {}): CallVerdict | undefined {
  const { kind, key } = split(id);
  const full = `${kind}:${key}`;
  const v = admit({ purpose: 'call', catalog: cat, kind, key, principal: p, args, apps: ask.apps, task: ask.task ? 'asked' : 'plain' });
  if (!v.ok && v.step === 'served' && v.code === 'NOT_FOUND') return undefined;
  const list = stepsFor('call', kind);
  const at = v.ok ? list.length : list.findIndex((st) => st.name === v.step);
  const steps = list.map((st, i): StepOutcome => ({ step: st.name, outcome: i < at ? 'passed' : i === at ? 'refused' : 'not reached', says: st.says }));
  if (!v.ok) return { id: full, allowed: false, code: v.code, step: v.step, reasons: [`${v.code}: ${v.why}`], steps };
  const reasons = [v.bound ? 'bound arguments filled in from the credential' : 'allowed'];
  if (v.task) reasons.push('runs as a task');
  for (const it of v.quotas) reasons.push(`counts against quota ${it.label}`);
  return { id: full, allowed: true, reasons, args: v.input, steps };
}

/** `tool:NAME`, `prompt:NAME`, `resource:URI`; a bare name is a tool's. */
function split(id: string): { kind: Kind; key: string } {
  const i = id.indexOf(':');
  const kind = id.slice(0, i);
  return i > 0 && (kind === 'tool' || kind === 'prompt' || kind === 'resource') ? { kind, key: id.slice(i + 1) } : { kind: 'tool', key: id };
}

export function formatView(e: Explanation): string {
  const pr = e.principal;
  const claims = pr.claims ? ` · claims ${Object.entries(pr.claims).map(([k, v]) => `${k}=${v}`).join(' ')}` : '';
  const head = `principal ${pr.sub} (${pr.kind}${pr.issuer ? ` ${pr.issuer}` : ''}) · scopes ${pr.scopes.join(' ') || '(none)'}${claims}`;
  const w = Math.max(...e.capabilities.map((c) => c.id.length), 10);
  const l = e.listing;
  const cost = `tools/list shows it ${l.tools.toLocaleString('en')} tool${l.tools === 1 ? '' : 's'}: ${l.bytes.toLocaleString('en')} bytes, ~${l.tokens.toLocaleString('en')} tokens (o200k)`;
  const lines = e.capabilities.map((c) => `${c.id.padEnd(w)}  ${(c.visible ? 'visible' : 'hidden').padEnd(7)}  ${('callable: ' + c.callable).padEnd(28)}  ${[...c.reasons, ...(c.credential ? [`credential to its backend: ${c.credential}`] : [])].join('; ')}`);
  return [head, cost, ...lines].join('\n');
}

/** One call explained as text: the verdict line, then the admission list step by step. */
export function formatCall(v: CallVerdict): string {
  const w = Math.max(...v.steps.map((st) => st.step.length));
  const steps = v.steps.map((st) => `  ${st.step.padEnd(w)}  ${st.outcome.padEnd(11)}  ${st.says}`);
  return [`${v.id}: ${v.allowed ? 'allowed' : 'refused'} — ${v.reasons.join('; ')}`, ...steps].join('\n');
}
