// The discovery meta-tools a progressive endpoint lists instead of its tools, and their answers: search_tools
// (a query → the best matches: name, one line, the arguments in brief, why it matched), describe_tools (names →
// full definitions and how to call them), call_tool (name + arguments → the real call; src/mcp/progressive.ts
// rewrites it into the real tools/call) and, in a 2025 session, load_tools (names → added to the session's
// tools/list).
// Guarantees: pure — the caller passes what the caller may see (`Visible`: the policy filter, asked before
// anything is ranked or described), so an answer names nothing else and says the same "not found" for a name
// that does not exist and one the caller may not see; answers are compact JSON text (no schema in a search
// answer, a definition only in describe's), a search answer of 5 matches well under 1,500 o200k tokens
// (test/unit/meta-tools.test.ts measures it on GitHub's catalog); arguments are checked here and refused with
// INVALID_INPUT, as a tool's invalid arguments are.

import { EMPTY_SCHEMA, type Catalog, type PromptEntry, type ResourceEntry, type ToolEntry } from '../core/catalog.js';
import { toolListing } from '../core/list-entry.js';
import type { ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import { searchIndex, type SearchKind, type SearchMatch } from './search-index.js';

/** The meta-tools' names: read well to a model, and unlike the dotted `area.action` names manifests use. */
export const META_TOOL = Object.freeze({ search: 'search_tools', describe: 'describe_tools', call: 'call_tool', load: 'load_tools' });

/** The policy filter per kind: what this caller may see (and so call, read or get) through this endpoint. */
export interface Visible {
  tool(e: ToolEntry): boolean;
  prompt(e: PromptEntry): boolean;
  resource(e: ResourceEntry): boolean;
}

export const SEARCH_LIMIT = Object.freeze({ default: 5, max: 20 });
/** Most names one describe_tools or load_tools takes. */
export const NAMES_MAX = 10;

const names = (what: string) => ({
  type: 'array', minItems: 1, maxItems: NAMES_MAX, uniqueItems: true,
  items: { type: 'string', minLength: 1 },
  description: `Tool names, as search_tools gives them (${what}).`,
});

const SEARCH = Object.freeze({
  name: META_TOOL.search,
  title: 'Search tools',
  description: 'Finds this server\'s tools for a task: say what you want to do in a few words. Each match gives the tool\'s name, one line, its arguments in brief (`?`: optional) and why it matched. Then describe_tools gives a full definition and call_tool runs it. kind "prompt" or "resource" searches prompts or resources instead.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 500, description: 'What you want to do, in your own words (e.g. "open an issue").' },
      kind: { enum: ['tool', 'prompt', 'resource'], default: 'tool', description: 'What to search.' },
      limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT.max, default: SEARCH_LIMIT.default, description: 'At most this many matches.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { title: 'Search tools', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});

const DESCRIBE = Object.freeze({
  name: META_TOOL.describe,
  title: 'Describe tools',
  description: 'The full definitions of tools by name: description, input and output schemas, annotations, and how to call each.',
  inputSchema: { type: 'object', properties: { names: names('at most 10') }, required: ['names'], additionalProperties: false },
  annotations: { title: 'Describe tools', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});

const CALL = Object.freeze({
  name: META_TOOL.call,
  title: 'Call a tool',
  description: 'Runs one of this server\'s tools by name with its arguments, exactly as calling it directly would: the answer is that tool\'s.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, description: 'The tool\'s name.' },
      arguments: { type: 'object', description: 'The tool\'s arguments, as its input schema (describe_tools) says.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
  execution: { taskSupport: 'optional' },
});

const LOAD = Object.freeze({
  name: META_TOOL.load,
  title: 'Load tools',
  description: 'Adds tools to this session\'s tools list (the list changes; you are notified), so they can be called directly by name.',
  inputSchema: { type: 'object', properties: { names: names('at most 10 per call') }, required: ['names'], additionalProperties: false },
  annotations: { title: 'Load tools', readOnlyHint: false, idempotentHint: true, openWorldHint: false },
});

const LISTED = Object.freeze([SEARCH, DESCRIBE, CALL]);
const LISTED_SESSION = Object.freeze([SEARCH, DESCRIBE, CALL, LOAD]);

/** What a progressive endpoint's tools/list starts with: the meta-tools (load_tools only where there is a session). */
export function metaToolListing(session: boolean): readonly Readonly<Record<string, unknown>>[] {
  return session ? LISTED_SESSION : LISTED;
}

/** Whether `name` is a meta-tool here (load_tools only in a session): the meta-tool wins over a real tool of that name. */
export function isMetaTool(name: string, session: boolean): boolean {
  return name === META_TOOL.search || name === META_TOOL.describe || name === META_TOOL.call || (session && name === META_TOOL.load);
}

/** The real tools of `cat` that a meta-tool hides (the same name); still reachable through call_tool. */
export function shadowedTools(cat: Catalog): string[] {
  return Object.values(META_TOOL).filter((n) => cat.tools.has(n));
}

/** search_tools: the best matches the caller may see. */
export function searchAnswer(cat: Catalog, args: Record<string, unknown>, visible: Visible, session: boolean): ToolResult {
  const query = args.query;
  if (typeof query !== 'string' || !query.trim()) throw invalid('query must be a non-empty string');
  const kind = (args.kind ?? 'tool') as SearchKind;
  if (kind !== 'tool' && kind !== 'prompt' && kind !== 'resource') throw invalid('kind must be tool, prompt or resource');
  const limit = args.limit ?? SEARCH_LIMIT.default;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT.max) throw invalid(`limit must be an integer from 1 to ${SEARCH_LIMIT.max}`);
  const ix = searchIndex(cat);
  const found = kind === 'tool' ? ix.tools.search(query, { limit, filter: visible.tool })
    : kind === 'prompt' ? ix.prompts.search(query, { limit, filter: visible.prompt })
      : ix.resources.search(query, { limit, filter: visible.resource });
  return json({
    matches: found.matches.map(match),
    total: found.total,
    next: found.matches.length === 0 ? 'nothing matched: try other words' : NEXT[kind](session),
  });
}

const NEXT: Record<SearchKind, (session: boolean) => string> = {
  tool: (session) => `describe_tools {names} for full definitions; call_tool {name, arguments} to run one${session ? '; load_tools {names} to list them in this session' : ''}`,
  prompt: () => 'prompts/get {name, arguments} gets one',
  resource: () => 'resources/read {uri} reads one (a template: fill in its {variables})',
};

/** A match as the answer shows it: no score (it compares within one search only), `why` in one short line (`term~word: fields`). */
function match(m: SearchMatch): Record<string, unknown> {
  // Argument fields (arg:body.title, …) as one word: which arguments matched is in the full definition.
  const why = m.why.map((w) => `${w.term}${w.via ? `~${w.via}` : ''}: ${[...new Set(w.fields.map((f) => (f.startsWith('arg:') ? 'args' : f)))].join(',')}`).join('; ');
  return { name: m.name, ...(m.title && m.title !== m.summary && { title: m.title }), summary: m.summary, args: m.args, why };
}

/** describe_tools: each named tool's whole definition (not the listing shortened to fit a page), and how to call it. */
export function describeAnswer(cat: Catalog, args: Record<string, unknown>, visible: Visible, session: boolean): ToolResult {
  const wanted = nameList(args);
  const tools: Record<string, unknown>[] = [];
  const notFound: string[] = [];
  for (const name of wanted) {
    const e = cat.tools.get(name);
    if (e && visible.tool(e)) tools.push({ ...toolListing(e.def, e.def.input_schema ?? EMPTY_SCHEMA), ...(e.def.ui && { _meta: { ui: e.def.ui } }) });
    else notFound.push(name);
  }
  if (!tools.length) return notFoundResult(notFound);
  return json({
    tools,
    ...(notFound.length && { not_found: notFound }),
    how: `call_tool {"name": "<name>", "arguments": {…}} runs a tool${session ? '; load_tools {"names": […]} lists them in this session, to call directly' : ''}`,
  });
}

/** load_tools: the names the caller may see, or every name not found. */
export function loadable(cat: Catalog, args: Record<string, unknown>, visible: Visible): { found: string[]; notFound: string[] } {
  const found: string[] = [];
  const notFound: string[] = [];
  for (const name of nameList(args)) {
    const e = cat.tools.get(name);
    (e && visible.tool(e) ? found : notFound).push(name);
  }
  return { found, notFound };
}

/** The answer for names none of which the caller may see: the words a direct call of an unknown tool gets. */
export function notFoundResult(names: readonly string[]): ToolResult {
  const e = new SvcError('NOT_FOUND', names.map((n) => `no tool named ${n}`).join('; '));
  return { content: [{ type: 'text', text: `${e.code}: ${e.message}` }], structuredContent: { error: e.toJSON() }, isError: true };
}

/** call_tool's arguments: the real tool's name and arguments. */
export function callTarget(args: Record<string, unknown>): { name: string; arguments: unknown } {
  if (typeof args.name !== 'string' || !args.name) throw invalid('name must be a non-empty string');
  const extra = Object.keys(args).filter((k) => k !== 'name' && k !== 'arguments');
  if (extra.length) throw invalid(`unknown argument ${extra[0]}: call_tool takes name and arguments`);
  if (args.arguments !== undefined && (args.arguments === null || typeof args.arguments !== 'object' || Array.isArray(args.arguments))) throw invalid('arguments must be an object');
  return { name: args.name, arguments: args.arguments ?? {} };
}

export function json(value: unknown): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

function nameList(args: Record<string, unknown>): string[] {
  const n = args.names;
  if (!Array.isArray(n) || n.length === 0 || n.length > NAMES_MAX || !n.every((x) => typeof x === 'string' && x)) {
    throw invalid(`names must be a list of 1 to ${NAMES_MAX} tool names`);
  }
  return [...new Set(n as string[])];
}

function invalid(message: string): SvcError {
  return new SvcError('INVALID_INPUT', message);
}
