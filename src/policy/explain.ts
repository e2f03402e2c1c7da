// Why a caller sees or may call each capability. Guarantees: every verdict comes from the
// functions that enforce access — canSee() for lists, the runtime's own tools/call decision
// (decision.ts: access, task mode, input) or decideCall() for resources and prompts,
// quotaItems() for quotas — so `svc explain` and GET /svc/explain
// say exactly what the runtime does; a reason names the scope (concrete when it can be),
// the binding, the quota or the public route involved; nothing here reads a credential.

import type { Catalog, Guarded } from '../core/catalog.js';
import type { CredentialKind } from '../core/credential-kind.js';
import type { Principal } from '../core/types.js';
import { summarize } from './input-errors.js';
import { canSee, decideCall, principalValue, render, type Denial } from './scopes.js';
import { quotaItems } from './quotas.js';
import { entries } from './diff.js';
import { decideTool, taskMode } from './decision.js';
import { CALL_ROUTES } from '../core/config.js';

export interface Verdict {
  /** tool:NAME, resource:URI (or URI template), prompt:NAME */
  id: string;
  visible: boolean;
  /** yes; no; `for some arguments` (a tenant-bound scope the caller holds for some values only); `as a task` (task: required). */
  callable: 'yes' | 'no' | 'for some arguments' | 'as a task';
  reasons: string[];
  /** The kind of credential a call sends its backend (an http backend's or an upstream's `auth`); never the credential. */
  credential?: CredentialKind;
  /** A tool's MCP Apps view: the ui:// resource that renders its results. */
  view?: string;
}

export interface Explanation {
  principal: { sub: string; kind: Principal['kind']; issuer?: string; scopes: string[]; claims?: Record<string, unknown> };
  capabilities: Verdict[];
}

export interface CallVerdict {
  id: string;
  allowed: boolean;
  reasons: string[];
  /** The arguments the call would run with (bound values filled in), when allowed. */
  args?: Record<string, unknown>;
}

/** The scope-needing capabilities are hidden from everyone on these routes (callers there are anonymous). */
export interface ExplainContext {
  publicRoutes: readonly string[];
}

/** The scope that lets a caller ask GET /svc/explain?as=TOKEN about another token's view (declare it in profile.scopes to use it). */
export const EXPLAIN_ANY_SCOPE = 'svc.explain';

export function explainView(cat: Catalog, p: Principal, ctx: ExplainContext): Explanation {
  return {
    principal: { sub: p.sub, kind: p.kind, ...(p.issuer && { issuer: p.issuer }), scopes: [...p.scopes].sort(), ...(p.claims && { claims: { ...p.claims } }) },
    capabilities: entries(cat).map(([id, g]) => {
      const view = id.startsWith('tool:') ? cat.tools.get(id.slice(5))?.def.ui?.resourceUri : undefined;
      return { ...verdict(cat, id, g, p, ctx), ...(g.def.credential && { credential: g.def.credential }), ...(view && { view }) };
    }),
  };
}

function verdict(cat: Catalog, id: string, g: Guarded, p: Principal, ctx: ExplainContext): Verdict {
  const reasons: string[] = [];
  const seen = canSee(g, p);
  const needsScope = g.required.length > 0 || !!g.patterns;
  if (!seen.ok) {
    if (seen.reason === 'bound_argument') reasons.push(`tenant binding: ${seen.detail}`);
    else reasons.push(...seen.missing.map((s) => `missing scope ${s}`));
  } else if (!needsScope) reasons.push('needs no scope: open to every authenticated caller');
  else {
    const bound = (g.patterns ?? []).filter((pat) => pat.args.every((a) => g.bind?.some(([arg]) => arg === a)))
      .map((pat) => render(pat, (a) => principalValue(p, g.bind!.find(([arg]) => arg === a)![1])));
    const held = [...g.required, ...bound].filter((s): s is string => !!s);
    if (held.length) reasons.push(`holds ${held.join(' ')}`);
  }
  let partial = false;
  if (seen.ok) {
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
  const tool = id.startsWith('tool:') ? cat.tools.get(id.slice(5)) : undefined;
  const plain = tool && taskMode(tool.task, 'plain');
  if (plain === 'refused') reasons.push(taskRequired(id.slice(5)));
  reasons.push(...appsReasons(cat, id, p));
  if (needsScope) {
    const open = CALL_ROUTES.filter((r) => ctx.publicRoutes.includes(r));
    if (open.length) reasons.push(`route ${open.join(', ')} is public: callers there are anonymous and hold no scope, so it is hidden there`);
  }
  return { id, visible: seen.ok, callable: !seen.ok ? 'no' : partial ? 'for some arguments' : plain === 'refused' ? 'as a task' : 'yes', reasons };
}

/** What MCP Apps changes for a tool with a view or an app-only tool, and for a view resource (who reads it). */
function appsReasons(cat: Catalog, id: string, p: Principal): string[] {
  const tool = id.startsWith('tool:') ? cat.tools.get(id.slice(5)) : undefined;
  const out: string[] = [];
  const uri = tool?.def.ui?.resourceUri;
  if (uri) {
    const view = cat.resources.get(uri);
    const readable = view && canSee(view, p).ok;
    out.push(`MCP Apps view ${uri}${view && !readable ? ` (not readable: missing scope ${canSeeMissing(view, p)})` : ''}`);
  }
  if (tool?.appOnly) out.push('app-only (ui.visibility [app]): only MCP clients that declare io.modelcontextprotocol/ui see and call it');
  const res = id.startsWith('resource:') ? cat.resources.get(id.slice(9)) : undefined;
  if (res?.def.ui) out.push(res.def.description!);
  return out;
}

function canSeeMissing(g: Guarded, p: Principal): string {
  const s = canSee(g, p);
  return s.ok || s.reason === 'bound_argument' ? '' : s.missing.join(' ');
}

function taskRequired(name: string): string {
  return `task required: a plain tools/call is refused (TASK_REQUIRED on MCP 2025-11-25, MISSING_CLIENT_CAPABILITY on 2026-07-28); `
    + `the tool accepts a task-augmented call (params.task, or the tasks extension; POST /svc/tools/${name} starts the task and answers 202)`;
}

/**
 * One call explained: for a tool, the runtime's own decision (decideTool: binding and scopes, the task
 * mode, the arguments, in its order); for a resource or prompt, its access decision. `task`: explain a
 * task-augmented call rather than a plain MCP one.
 */
export function explainCall(cat: Catalog, p: Principal, id: string, args: unknown, task = false): CallVerdict | undefined {
  const [kind, ...rest] = id.includes(':') ? id.split(':') : ['tool', id];
  const key = id.includes(':') ? rest.join(':') : id;
  const g: Guarded | undefined = kind === 'tool' ? cat.tools.get(key) : kind === 'prompt' ? cat.prompts.get(key) : kind === 'resource' ? cat.resources.get(key) ?? cat.templates.find((t) => t.def.uri_template === key) : undefined;
  if (!g) return undefined;
  const full = `${kind}:${key}`;
  const tool = kind === 'tool' ? cat.tools.get(key) : undefined;
  const reasons: string[] = [];
  let input: unknown;
  if (tool) {
    const v = decideTool(tool, p, args, task ? 'asked' : 'plain');
    if (!v.ok) {
      const why = 'denial' in v ? denied(v.denial) : 'taskRequired' in v ? `TASK_REQUIRED: ${taskRequired(key)}`
        : `INVALID_INPUT: ${v.invalid === 'not_object' ? 'arguments must be a JSON object' : summarize(v.invalid)}`;
      return { id: full, allowed: false, reasons: [why] };
    }
    input = v.input;
    reasons.push(v.input !== (args ?? v.input) ? 'bound arguments filled in from the credential' : 'allowed');
    if (v.task) reasons.push('runs as a task');
  } else {
    const d = decideCall(g, p, args);
    if (!d.ok) return { id: full, allowed: false, reasons: [denied(d)] };
    input = d.args ?? (args ?? {});
    reasons.push(d.args ? 'bound arguments filled in from the credential' : 'allowed');
  }
  for (const it of quotaItems(p, full, g.limits, cat.limits)) reasons.push(`counts against quota ${it.label}`);
  return { id: full, allowed: true, reasons, args: input as Record<string, unknown> };
}

function denied(d: Denial): string {
  return d.reason === 'bound_argument' ? `ARGUMENT_BOUND: ${d.detail}` : `INSUFFICIENT_SCOPE: missing ${d.missing.join(' ')}`;
}

/** The view as text: one header line, then one line per capability. */
export function formatView(e: Explanation): string {
  const pr = e.principal;
  const claims = pr.claims ? ` · claims ${Object.entries(pr.claims).map(([k, v]) => `${k}=${v}`).join(' ')}` : '';
  const head = `principal ${pr.sub} (${pr.kind}${pr.issuer ? ` ${pr.issuer}` : ''}) · scopes ${pr.scopes.join(' ') || '(none)'}${claims}`;
  const w = Math.max(...e.capabilities.map((c) => c.id.length), 10);
  const lines = e.capabilities.map((c) => `${c.id.padEnd(w)}  ${(c.visible ? 'visible' : 'hidden').padEnd(7)}  ${('callable: ' + c.callable).padEnd(28)}  ${[...c.reasons, ...(c.credential ? [`credential to its backend: ${c.credential}`] : [])].join('; ')}`);
  return [head, ...lines].join('\n');
}
