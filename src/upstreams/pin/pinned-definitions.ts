// What a pin covers of an upstream's definitions. Guarantees: each kind of MCP definition is
// reduced to the members that reach a model or change what a call means — a tool's name, title,
// description, input and output schemas and annotations; a resource's uri, name, title,
// description and mimeType (uriTemplate for a template); a prompt's name, title, description and
// arguments — and to nothing else (`_meta`, icons, sizes and other members that vary without
// changing meaning are left out, so they never withhold a definition); each definition is
// known by its key (name, or uri / uriTemplate) within its kind; the tables below are the only
// place that says so.

import { digest } from './canonical-json.js';

/** A definition as the upstream lists it (MCP wire shape: camelCase members). */
export type WireDefinition = Readonly<Record<string, unknown>>;

/** The four lists an upstream may serve (templates: resources/templates/list), as the connection reads them. */
export interface Listing {
  readonly tools?: readonly WireDefinition[];
  readonly resources?: readonly WireDefinition[];
  readonly templates?: readonly WireDefinition[];
  readonly prompts?: readonly WireDefinition[];
}

export type ListName = keyof Listing;
export type PinKind = 'tool' | 'resource' | 'resource_template' | 'prompt';

export interface KindRule {
  readonly kind: PinKind;
  readonly list: ListName;
  /** The member that names a definition within its kind. */
  readonly key: string;
  /** The members pinned, in the order a reader meets them. */
  readonly fields: readonly string[];
}

export const KINDS: readonly KindRule[] = [
  { kind: 'tool', list: 'tools', key: 'name', fields: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] },
  { kind: 'resource', list: 'resources', key: 'uri', fields: ['uri', 'name', 'title', 'description', 'mimeType'] },
  { kind: 'resource_template', list: 'templates', key: 'uriTemplate', fields: ['uriTemplate', 'name', 'title', 'description', 'mimeType'] },
  { kind: 'prompt', list: 'prompts', key: 'name', fields: ['name', 'title', 'description', 'arguments'] },
];

/** A definition reduced to what is pinned, and the digest of its canonical JSON. */
export interface Pinned {
  readonly digest: string;
  readonly definition: Readonly<Record<string, unknown>>;
}

/** The pinned members of a definition of this kind (absent members stay absent). */
export function pinnedContent(rule: KindRule, def: WireDefinition): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of rule.fields) if (def[f] !== undefined) out[f] = def[f];
  return out;
}

/** The definition's key within its kind, or undefined when it has none usable. */
export function keyOf(rule: KindRule, def: WireDefinition): string | undefined {
  const k = def[rule.key];
  return typeof k === 'string' && k.length > 0 ? k : undefined;
}

/** Pins one definition; throws a TypeError when it cannot be put in canonical form (canonical-json.ts). */
export function pinDefinition(rule: KindRule, def: WireDefinition): Pinned {
  const definition = pinnedContent(rule, def);
  return { digest: digest(definition), definition };
}
