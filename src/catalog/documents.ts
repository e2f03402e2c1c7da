// A definition as the search index reads it: the text of each field, and what a match says of it.
// Guarantees: pure; a tool's arguments are its input schema's properties and, one level down, an
// object property's (body.title), in schema order, each with its string enum values; a prompt's are its arguments, a URI template's its
// variables; the one-line summary is the title, else the description's first sentence without
// Markdown links or emphasis, at most 160 characters; the brief of the arguments names at most 12
// (8 inside braces) then `…`, an optional one marked `?`.

import type { PromptEntry, ResourceEntry, ToolEntry } from '../core/catalog.js';

export type SearchKind = 'tool' | 'prompt' | 'resource';

const SUMMARY_CHARS = 160;

export interface Arg {
  path: string;
  description?: string;
  /** A tool argument's string enum values. */
  values?: string[];
}

/** A definition as text fields. */
export interface Doc {
  name: string;
  title?: string;
  description: string;
  args: Arg[];
  tags: readonly string[];
  source?: string;
}

/** The fields of an entry of `kind`. */
export function docOf(e: ToolEntry | PromptEntry | ResourceEntry, kind: SearchKind): Doc {
  if (kind === 'tool') {
    const { def, wire } = e as ToolEntry;
    const args: Arg[] = [];
    collectArgs(wire.inputSchema, '', 0, args);
    return { name: def.name, title: def.title ?? (def.annotations?.title as string | undefined), description: def.description, args, tags: def.tags ?? [], source: def.source?.name };
  }
  if (kind === 'prompt') {
    const { def } = e as PromptEntry;
    return { name: def.name, title: def.title, description: def.description ?? '', args: (def.arguments ?? []).map((a) => ({ path: a.name, description: a.description })), tags: [], source: def.source?.name };
  }
  const { def } = e as ResourceEntry;
  const vars = def.uri_template ? [...def.uri_template.matchAll(/\{\+?([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => ({ path: m[1]! })) : [];
  return { name: def.uri ?? def.uri_template!, title: def.title ?? def.name, description: def.description ?? '', args: vars, tags: [], source: def.source?.name };
}

/** An input schema's properties, and one level down an object property's (body.title), with their string enum values. */
function collectArgs(schema: unknown, prefix: string, depth: number, out: Arg[]): void {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return;
  for (const name in props) {
    const s = (props[name] ?? {}) as { description?: unknown; properties?: unknown; enum?: unknown };
    const values = Array.isArray(s.enum) ? s.enum.filter((v): v is string => typeof v === 'string') : [];
    out.push({ path: prefix + name, description: typeof s.description === 'string' ? s.description : undefined, ...(values.length && { values }) });
    if (depth === 0) collectArgs(s, `${prefix}${name}.`, 1, out);
  }
}

/** The arguments in brief: `owner, repo, body?: {title, state?}`. */
export function briefArgs(e: unknown, kind: SearchKind): string {
  if (kind === 'tool') return briefSchema((e as ToolEntry).wire.inputSchema, 12);
  if (kind === 'prompt') return brief(((e as PromptEntry).def.arguments ?? []).map((a) => `${a.name}${a.required ? '' : '?'}`), 12);
  const t = (e as ResourceEntry).def.uri_template;
  return t ? brief([...t.matchAll(/\{\+?([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!), 12) : '';
}

function briefSchema(schema: unknown, max: number, depth = 0): string {
  const s = (schema ?? {}) as { properties?: Record<string, unknown>; required?: unknown };
  if (!s.properties || typeof s.properties !== 'object') return '';
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  return brief(Object.entries(s.properties).map(([name, p]) => {
    const inner = depth === 0 ? briefSchema(p, 8, 1) : '';
    return `${name}${required.has(name) ? '' : '?'}${inner ? `: {${inner}}` : ''}`;
  }), max);
}

const brief = (names: string[], max: number) => (names.length > max ? [...names.slice(0, max), '…'] : names).join(', ');

/** One line: the title, else the description's first sentence. */
export function summary(d: Doc): string {
  const text = d.title?.trim() || firstSentence(d.description) || d.name;
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS - 1).trimEnd()}…`;
}

function firstSentence(text: string): string {
  const plain = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*_`>#]+/g, '').replace(/\s+/g, ' ').trim();
  const m = /^.*?[.!?](?=\s|$)/.exec(plain);
  return (m ? m[0] : plain).trim();
}
