// A named endpoint (manifest `endpoints:`), compiled: its name, what it tells a client it is,
// the scopes its door asks for, and its selection of the catalog with the globs already made
// RegExps. Guarantees: compileEndpoint is pure and makes every RegExp once (the selection is
// then a few Set/RegExp tests per capability); a name on RESERVED_ENDPOINT_NAMES or off the
// name pattern is refused (ENDPOINT_CONFIG); selects() is OR within a key and AND across keys,
// an absent key matches everything, an empty list nothing; the compiled endpoint is frozen.

import { SvcError } from '../errors.js';
import type { Discovery, Endpoint } from './manifest-types.gen.js';
import type { CapabilitySource } from './types.js';

/** An endpoint's name: the path segment of /mcp/NAME, /ws/NAME and /svc/NAME. */
export const ENDPOINT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Names an endpoint may not take: /svc's own first path segments (so /svc/NAME/… never shadows
 * /svc/tools/X and the rest) and `default`, explain's name for the default endpoint.
 */
export const RESERVED_ENDPOINT_NAMES: ReadonlySet<string> = new Set(['tools', 'resources', 'prompts', 'tasks', 'explain', 'default']);

/** The source name of the manifest's own capabilities in a `select.sources` list. */
export const MANIFEST_SOURCE = 'manifest';

/** A compiled selection: absent keys match everything. */
export interface Selection {
  /** One RegExp for all the `names` globs. */
  readonly names?: RegExp;
  readonly sources?: ReadonlySet<string>;
  readonly tags?: ReadonlySet<string>;
}

export interface EndpointDef {
  readonly name: string;
  /** serverInfo.name (default: the app's name + "/" + the endpoint's). */
  readonly serverName?: string;
  readonly instructions?: string;
  /** A caller must hold all of these to use the endpoint at all (checked at the door). */
  readonly requiredScopes: readonly string[];
  /** Absent: the whole catalog. */
  readonly select?: Selection;
  /** As the manifest gives it; what it does is discovery's (the progressive endpoint's layer). */
  readonly discovery?: Discovery;
}

/** An endpoint as the manifest (or the code API) writes it, compiled. Throws ENDPOINT_CONFIG for a name it may not take. */
export function compileEndpoint(name: string, spec: Endpoint = {}): EndpointDef {
  const bad = endpointNameProblem(name);
  if (bad) throw new SvcError('ENDPOINT_CONFIG', bad, { path: `/endpoints/${name}` });
  const s = spec.select;
  const select: Selection | undefined = s && Object.freeze({
    ...(s.names && { names: globs(s.names) }),
    ...(s.sources && { sources: Object.freeze(new Set(s.sources)) }),
    ...(s.tags && { tags: Object.freeze(new Set(s.tags)) }),
  });
  return Object.freeze({
    name,
    ...(spec.server_name !== undefined && { serverName: spec.server_name }),
    ...(spec.instructions !== undefined && { instructions: spec.instructions }),
    requiredScopes: Object.freeze([...spec.required_scopes ?? []]),
    ...(select && { select }),
    ...(spec.discovery && { discovery: Object.freeze({ ...spec.discovery }) }),
  });
}

/** Why `name` cannot name an endpoint, or undefined. */
export function endpointNameProblem(name: string): string | undefined {
  if (!ENDPOINT_NAME.test(name)) return `endpoint name ${JSON.stringify(name)} must match ${ENDPOINT_NAME.source} (it is a path segment: /mcp/NAME)`;
  if (RESERVED_ENDPOINT_NAMES.has(name)) return `endpoint name ${name} is reserved (${[...RESERVED_ENDPOINT_NAMES].join(', ')}: /svc's own paths, and explain's name for the default endpoint)`;
  return undefined;
}

/**
 * Whether the selection takes a capability named `name` (a tool or prompt name, a resource URI or URI
 * template) from `source` (absent: the manifest's own) with `tags`.
 */
export function selects(sel: Selection | undefined, name: string, source: CapabilitySource | undefined, tags: readonly string[] | undefined): boolean {
  if (!sel) return true;
  if (sel.names && !sel.names.test(name)) return false;
  if (sel.sources && !sel.sources.has(source?.name ?? MANIFEST_SOURCE)) return false;
  if (sel.tags && !tags?.some((t) => sel.tags!.has(t))) return false;
  return true;
}

/** Globs (`*` any run of characters, `?` one) as one anchored RegExp; no glob: one that matches nothing. */
export function globs(list: readonly string[]): RegExp {
  if (!list.length) return /(?!)/;
  const one = (g: string) => g.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^(?:${list.map(one).join('|')})$`, 's');
}
