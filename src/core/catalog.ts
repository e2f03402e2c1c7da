// Catalog: a FastSvc compiled for serving — frozen, with every input schema checked
// and the MCP wire listings rendered once (each within one list page: list-entry.ts); each input validator is compiled on a
// tool's first call and shared by tools with identical schemas (input-schemas.ts), so
// a catalog of thousands of tools builds fast and small. Guarantees: building a
// catalog either succeeds whole or throws (an invalid input schema throws
// INPUT_SCHEMA_INVALID here, not at the first call); nothing a caller can see about
// a catalog changes after it is built (hot reload builds a new one and swaps the
// reference); lookups on the hot path are Map gets.

import { createHash } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { SvcError } from '../errors.js';
import type { ClassLimits, FastSvc } from './fast-svc.js';
import type { CacheHint, DiscoverySettings, JsonSchemaObject, Limit, PromptDef, ResourceDef, TaskSupport, ToolDef } from './types.js';
import { checkInputSchema, InputValidators } from './input-schemas.js';
import { compileGuard, type Guard } from './guard.js';
import { fitListing, promptListing, resourceListing, toolListing } from './list-entry.js';
import type { EndpointDef } from './endpoint.js';

/** A capability's access rule (required scopes, tenant-bound patterns, bound arguments) and its quota. */
export interface Guarded extends Guard {
  readonly limits?: Limit;
}

export interface ToolEntry extends Guarded {
  readonly def: ToolDef;
  /** The input validator, compiled on first use (shared with every tool of the catalog whose schema has the same text). */
  readonly validate: ValidateFunction;
  readonly outputMode: 'scalar' | 'json';
  readonly inlineOk: boolean;
  readonly task: TaskSupport;
  readonly askBeforeTask: boolean;
  readonly wire: Readonly<Record<string, unknown>>;
  /** The listing for a client that declares MCP Apps (io.modelcontextprotocol/ui): `wire` with _meta.ui; absent for a tool without ui. */
  readonly appsWire?: Readonly<Record<string, unknown>>;
  /** MCP Apps visibility without `model`: listed only to clients that declare the extension. */
  readonly appOnly: boolean;
}

export interface ResourceEntry extends Guarded {
  readonly def: ResourceDef;
  readonly wire: Readonly<Record<string, unknown>>;
  /** An MCP Apps view's listing for a client that declares the extension: `wire` with _meta.ui. */
  readonly appsWire?: Readonly<Record<string, unknown>>;
  /** For uri_template resources: the matcher and variable names. */
  readonly match?: { regex: RegExp; vars: readonly string[] };
}

export interface PromptEntry extends Guarded {
  readonly def: PromptDef;
  readonly wire: Readonly<Record<string, unknown>>;
}

/** A variable of a resource URI template: `{name}`, or `{+name}` (reserved expansion: may hold slashes). */
export const URI_TEMPLATE_VAR = /\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Any capability's entry. */
export type CapabilityEntry = ToolEntry | ResourceEntry | PromptEntry;

/** How long a list page may be: items, and characters of their JSON. */
export interface ListPage {
  readonly size: number;
  readonly bytes: number;
}

export interface Catalog {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly instructions?: string;
  /** Caching hint of discover and the lists (MCP 2026-07-28). */
  readonly cache?: CacheHint;
  /** Quotas per principal class (manifest `limits`). */
  readonly limits?: ClassLimits;
  /** How MCP clients are shown its tools (catalog/discovery.ts decides what auto means for this catalog); absent: direct. */
  readonly discovery?: DiscoverySettings;
  readonly tools: ReadonlyMap<string, ToolEntry>;
  readonly resources: ReadonlyMap<string, ResourceEntry>;
  readonly templates: readonly ResourceEntry[];
  readonly prompts: ReadonlyMap<string, PromptEntry>;
  /** sha256 of the source (the manifest file's bytes, or the catalog's own listing for code-built apps). */
  readonly hash: string;
  /** Most items (server.list_page_size) and characters of JSON (server.list_page_bytes) per list page; undefined (a catalog built without server settings): one page. */
  readonly listPage?: ListPage;
  /**
   * Capabilities a pinned upstream lists that are not served until the operator accepts them
   * (upstreams/pin/admit-listing.ts), keyed tool:NAME / prompt:NAME / resource:URI / template:URI_TEMPLATE: a call
   * names them CAPABILITY_WITHHELD (withheldOf()).
   */
  readonly withheld?: ReadonlyMap<string, Withheld>;
  /** The withheld templates' matchers, so that a read of a URI one of them matches is told it is withheld. */
  readonly withheldTemplates?: readonly (Withheld & { readonly regex: RegExp })[];
  /** The named endpoints (manifest `endpoints`), by name; each is served as a view of this catalog (catalog/endpoint-view.ts). */
  readonly endpoints?: ReadonlyMap<string, EndpointDef>;
  /** Set on an endpoint's view only: the endpoint it is the view of. The default endpoint's view is the catalog itself. */
  readonly endpoint?: EndpointDef;
}

export interface Withheld {
  readonly upstream: string;
  readonly reason: string;
}

export const EMPTY_SCHEMA: JsonSchemaObject = Object.freeze({ type: 'object', properties: {} }) as JsonSchemaObject;

export { newInputAjv, type InputCompiler } from './input-schemas.js';

export function buildCatalog(svc: FastSvc, opts: { hash?: string; listPage?: ListPage; withheld?: ReadonlyMap<string, Withheld> } = {}): Catalog {
  const validators = new InputValidators();
  /** A listing as it is listed: within one page of list_page_bytes (list-entry.ts). */
  const freeze = opts.listPage ? (w: Record<string, unknown>) => Object.freeze(fitListing(w, opts.listPage!.bytes).listing) : (w: Record<string, unknown>) => Object.freeze(w);
  const tools = new Map<string, ToolEntry>();
  for (const def of svc.tools.values()) {
    const schema = def.input_schema ?? EMPTY_SCHEMA;
    try {
      checkInputSchema(schema);
    } catch (e) {
      throw new SvcError('INPUT_SCHEMA_INVALID', `tool ${def.name}: ${(e as Error).message}`, { path: `tools/${def.name}/input_schema` });
    }
    let validate: ValidateFunction | undefined;
    const wire = freeze(toolListing(def, schema));
    tools.set(def.name, Object.freeze({
      def,
      ...guarded(def.required_scopes, def.limits, def.bind),
      get validate() {
        return (validate ??= validators.get(schema, def.name));
      },
      outputMode: def.output_mode ?? 'scalar',
      inlineOk: def.inline_ok ?? true,
      task: def.task ?? 'forbidden',
      askBeforeTask: def.ask_before_task === true,
      wire,
      ...(def.ui && { appsWire: freeze({ ...wire, _meta: { ui: def.ui } }) }),
      appOnly: def.ui?.visibility !== undefined && !def.ui.visibility.includes('model'),
    }));
  }

  const resources = new Map<string, ResourceEntry>();
  const templates: ResourceEntry[] = [];
  for (const def of svc.resources.values()) {
    const guard = guarded(def.required_scopes, def.limits);
    const wire = freeze(resourceListing(def));
    if (def.uri !== undefined) {
      resources.set(def.uri, Object.freeze({ def, ...guard, wire, ...(def.ui && { appsWire: freeze({ ...wire, _meta: { ui: def.ui } }) }) }));
    } else {
      templates.push(Object.freeze({ def, ...guard, wire, match: compileUriTemplate(def.uri_template!) }));
    }
  }

  const prompts = new Map<string, PromptEntry>();
  for (const def of svc.prompts.values()) {
    const wire = freeze(promptListing(def));
    prompts.set(def.name, Object.freeze({ def, ...guarded(def.required_scopes, def.limits), wire }));
  }

  const withheldTemplates = [...opts.withheld ?? []].flatMap(([key, w]) => (key.startsWith('template:')
    ? [Object.freeze({ ...w, regex: compileUriTemplate(key.slice('template:'.length)).regex })]
    : []));

  const hash = opts.hash ?? createHash('sha256').update(JSON.stringify({
    t: [...tools.values()].map((t) => [t.appsWire ?? t.wire, t.def.required_scopes ?? [], t.def.bind ?? {}]),
    r: [...resources.values(), ...templates].map((r) => [r.appsWire ?? r.wire, r.def.required_scopes ?? []]),
    p: [...prompts.values()].map((p) => [p.wire, p.def.required_scopes ?? []]),
  })).digest('hex');

  return Object.freeze({
    name: svc.name,
    version: svc.version,
    description: svc.description,
    instructions: svc.instructions,
    cache: svc.cache,
    ...(svc.discovery && svc.discovery.mode !== 'direct' && { discovery: svc.discovery }),
    limits: svc.limits && (svc.limits.shared || classLimits(svc.limits).some((l) => l.requests !== undefined || l.concurrent !== undefined)) ? svc.limits : undefined,
    tools, resources, templates: Object.freeze(templates), prompts, hash,
    ...(opts.listPage !== undefined && { listPage: opts.listPage }),
    ...(opts.withheld?.size && { withheld: opts.withheld }),
    ...(withheldTemplates.length && { withheldTemplates: Object.freeze(withheldTemplates) }),
    ...(svc.endpoints.size && { endpoints: new Map(svc.endpoints) as ReadonlyMap<string, EndpointDef> }),
  });
}

/** Why the capability `key` (tool:NAME, prompt:NAME, resource:URI) is withheld, or undefined when it is not; a URI also through a withheld template that matches it. */
export function withheldOf(cat: Catalog, key: string): Withheld | undefined {
  const exact = cat.withheld?.get(key);
  if (exact || !cat.withheldTemplates || !key.startsWith('resource:')) return exact;
  const uri = key.slice('resource:'.length);
  return cat.withheldTemplates.find((t) => t.regex.test(uri));
}

/** RFC 6570 `{var}` (level 1) matches one path segment; `{+var}` (reserved expansion, level 2) also spans slashes. */
export function compileUriTemplate(template: string): { regex: RegExp; vars: string[] } {
  const vars: string[] = [];
  let src = '^';
  let last = 0;
  for (const m of template.matchAll(URI_TEMPLATE_VAR)) {
    src += escapeRe(template.slice(last, m.index)) + (m[1] === '+' ? '([^?#]+)' : '([^/?#]+)');
    vars.push(m[2]!);
    last = m.index! + m[0].length;
  }
  src += escapeRe(template.slice(last)) + '$';
  return { regex: new RegExp(src), vars };
}

export function findResource(cat: Catalog, uri: string): { entry: ResourceEntry; vars: Record<string, string> } | undefined {
  const fixed = cat.resources.get(uri);
  if (fixed) return { entry: fixed, vars: {} };
  for (const entry of cat.templates) {
    const m = entry.match!.regex.exec(uri);
    if (!m) continue;
    const vars: Record<string, string> = {};
    entry.match!.vars.forEach((v, i) => { vars[v] = safeDecode(m[i + 1]!); });
    return { entry, vars };
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function guarded(requiredScopes: readonly string[] | undefined, limits: Limit | undefined, bind?: Readonly<Record<string, string>>): Guarded {
  return { ...compileGuard(requiredScopes, bind), ...(limits && (limits.requests !== undefined || limits.concurrent !== undefined) && { limits: Object.freeze({ ...limits }) }) };
}

/** Every class limit set: token, user, oauth_client and each external issuer's. */
function classLimits(c: ClassLimits): Limit[] {
  return [c.token, c.user, c.oauth_client, ...Object.values(c.external ?? {})].filter((l): l is Limit => !!l);
}
