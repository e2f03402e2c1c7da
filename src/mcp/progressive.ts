// A progressive endpoint at the MCP method layer (catalog/discovery.ts decides which catalogs are): tools/list
// answers the meta-tools (catalog/meta-tools.ts) and, in a 2025 session, the tools it loaded; a tools/call of a
// meta-tool is answered here — search_tools and describe_tools from the caller's own listing, load_tools into the
// session, and call_tool rewritten into the real tools/call on the same catalog.
// Guarantees: search, describe and load see exactly what the caller's tools/list would list on a direct endpoint
// (the runtime's listing: the admission list's `list` purpose, MCP Apps and all), so they reveal nothing the
// caller may not call here, and a name it may not see gets the words an unknown one gets; call_tool is the real
// tools/call — the runtime admits, audits, meters, takes quotas for and starts tasks of the real tool, never
// the meta-tool — and answers what a direct call of it answers, refusals included; a session's loaded tools are
// listed only while the caller's listing still holds them (a reload that removes or hides one drops it from the
// session at its next listing), at most LOADED_MAX of them; invalid meta-tool arguments are INVALID_INPUT,
// an isError result where invalid tool arguments are (2025-11-25 and later).

import type { PromptEntry, ResourceEntry, ToolEntry } from '../core/catalog.js';
import type { ToolResult } from '../core/types.js';
import { isSvcError, SvcError } from '../errors.js';
import {
  callTarget, describeAnswer, isMetaTool, json, loadable, META_TOOL, metaToolListing, notFoundResult, searchAnswer, type Visible,
} from '../catalog/meta-tools.js';
import type { MethodEnv } from './methods.js';

/** A 2025 session's side of load_tools. */
export interface SessionTools {
  /** The tool names this session loaded, in the order it loaded them. */
  readonly loaded: Set<string>;
  /** Sends notifications/tools/list_changed on the session's channel. */
  changed(): void;
}

/** Most tools one session may load: a model chooses well among a few dozen. */
export const LOADED_MAX = 40;

/** tools/list of a progressive endpoint: the meta-tools, then the session's loaded tools the caller may still see. */
export function progressiveListing(env: MethodEnv): readonly object[] {
  const meta = metaToolListing(env.session !== undefined);
  const loaded = env.session?.loaded;
  if (!loaded?.size) return meta;
  const kept = (env.runtime.listTools(env.principal, env.catalog, env.apps) as { name: string }[])
    .filter((w) => loaded.has(w.name) && !isMetaTool(w.name, true));
  if (kept.length !== loaded.size) {
    const still = new Set(kept.map((w) => w.name));
    for (const n of loaded) if (!still.has(n)) loaded.delete(n);
  }
  return [...meta, ...kept];
}

/** Whether this tools/call names a meta-tool of this (progressive) endpoint. */
export function callsMetaTool(name: string, env: MethodEnv): boolean {
  return isMetaTool(name, env.session !== undefined);
}

/** Answers a meta-tool's tools/call; call_tool runs `callReal` (the real tools/call: its answer, or its refusal thrown). */
export async function metaToolCall(name: string, p: Record<string, unknown>, env: MethodEnv, callReal: (name: string, args: unknown) => Promise<unknown>): Promise<unknown> {
  let target: { name: string; arguments: unknown };
  try {
    const args = metaArgs(p.arguments);
    const session = env.session !== undefined;
    switch (name) {
      case META_TOOL.search: return searchAnswer(env.catalog, args, visibleTo(env), session);
      case META_TOOL.describe: return describeAnswer(env.catalog, args, visibleTo(env), session);
      case META_TOOL.load: return load(args, env);
      default: target = callTarget(args);
    }
  } catch (e) {
    if (isSvcError(e) && e.code === 'INVALID_INPUT' && env.inputErrorsAsToolResults) return invalidResult(e);
    throw e;
  }
  return callReal(target.name, target.arguments);
}

function load(args: Record<string, unknown>, env: MethodEnv): ToolResult {
  const s = env.session!;
  const { found, notFound } = loadable(env.catalog, args, visibleTo(env));
  if (!found.length) return notFoundResult(notFound);
  const fresh = found.filter((n) => !s.loaded.has(n) && !isMetaTool(n, true));
  if (s.loaded.size + fresh.length > LOADED_MAX) throw new SvcError('INVALID_INPUT', `a session lists at most ${LOADED_MAX} loaded tools (${s.loaded.size} loaded)`);
  for (const n of fresh) s.loaded.add(n);
  if (fresh.length) s.changed();
  return json({ loaded: found, ...(notFound.length && { not_found: notFound }), listed: s.loaded.size, how: 'tools/list now lists them: call them by name' });
}

function metaArgs(a: unknown): Record<string, unknown> {
  if (a === undefined) return {};
  if (a === null || typeof a !== 'object' || Array.isArray(a)) throw new SvcError('INVALID_INPUT', 'params.arguments must be an object');
  return a as Record<string, unknown>;
}

function invalidResult(e: SvcError): ToolResult {
  return { content: [{ type: 'text', text: `${e.code}: ${e.message}` }], structuredContent: { error: e.toJSON() }, isError: true };
}

type Named = { name?: string; uri?: string; uriTemplate?: string };
type Filter = (e: ToolEntry | PromptEntry | ResourceEntry) => boolean;
const filters = new WeakMap<readonly object[], Filter>();

/**
 * The caller's policy as search filters: an entry is visible exactly when the runtime's listing for this caller (cached per
 * catalog and scope set) holds it. One filter function per listing, so the search index keeps its verdicts.
 */
function visibleTo(env: MethodEnv): Visible {
  const { runtime: rt, principal: p, catalog: cat, apps } = env;
  return {
    get tool() {
      return filterOf(rt.listTools(p, cat, apps), false);
    },
    get prompt() {
      return filterOf(rt.listPrompts(p, cat), false);
    },
    get resource() {
      return filterOf(rt.listResources(p, cat, apps), true, rt.listResourceTemplates(p, cat));
    },
  };
}

/** A filter admitting the entries `listing` (and `templates`) lists: by name, or (resources) by URI or URI template. */
function filterOf(listing: readonly object[], resources: boolean, templates: readonly object[] = []): Filter {
  let f = filters.get(listing);
  if (!f) {
    const keys = new Set([...listing, ...templates].map((w) => (resources ? (w as Named).uri ?? (w as Named).uriTemplate : (w as Named).name)));
    f = resources ? (e) => keys.has((e as ResourceEntry).def.uri ?? (e as ResourceEntry).def.uri_template) : (e) => keys.has(e.def.name);
    filters.set(listing, f);
  }
  return f;
}
