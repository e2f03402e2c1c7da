// An endpoint's view of a catalog: a Catalog holding only the capabilities the endpoint selects
// (the same entry objects, so listings, calls, reads, completions, subscriptions, tasks and explain
// run unchanged on it), named and instructed as the endpoint. Guarantees: built once per catalog
// object and endpoint (memoised in a WeakMap on the catalog, so a reload or an upstream's list
// change, which build a new catalog, get new views and the old ones are collected with it); a
// capability outside the selection is absent from every map and list of the view, withheld ones
// included, so it does not exist there; the view keeps the catalog's version, caching hint,
// quotas and list page (lists are paged over the view's own entries), and has the endpoint's own
// `discovery` (catalog/discovery.ts), not the default endpoint's; the default endpoint
// (no name) is the catalog itself, at the cost of one comparison; a name the catalog does not
// declare gets an empty view (what a request already under way on an endpoint a reload removed finds;
// the sessions bound to it are ended: transports/endpoint-door.ts guardSessions).

import { createHash } from 'node:crypto';
import type { Catalog, PromptEntry, ResourceEntry, ToolEntry, Withheld } from '../core/catalog.js';
import { selects, type EndpointDef } from '../core/endpoint.js';
import type { DiscoverySettings } from '../core/types.js';

const views = new WeakMap<Catalog, Map<string, Catalog>>();

/** The view of `cat` through the endpoint named `name`; undefined or '' → the catalog itself (the default endpoint). */
export function viewOf(cat: Catalog, name: string | undefined): Catalog {
  if (!name) return cat;
  let byName = views.get(cat);
  if (!byName) views.set(cat, (byName = new Map()));
  let v = byName.get(name);
  if (!v) byName.set(name, (v = build(cat, cat.endpoints?.get(name) ?? { name, requiredScopes: [], select: NOTHING })));
  return v;
}

/** The view of `cat` through `endpoint` (one of cat.endpoints). */
export function endpointCatalog(cat: Catalog, endpoint: EndpointDef): Catalog {
  return viewOf(cat, endpoint.name);
}

/** A selection no capability passes: an endpoint that is not (or no longer) declared. */
const NOTHING = Object.freeze({ sources: Object.freeze(new Set<string>()) });

function build(cat: Catalog, ep: EndpointDef): Catalog {
  const sel = ep.select;
  const tools = new Map<string, ToolEntry>();
  for (const [name, e] of cat.tools) if (selects(sel, name, e.def.source, e.def.tags)) tools.set(name, e);
  const resources = new Map<string, ResourceEntry>();
  for (const [uri, e] of cat.resources) if (selects(sel, uri, e.def.source, undefined)) resources.set(uri, e);
  const templates = cat.templates.filter((e) => selects(sel, e.def.uri_template!, e.def.source, undefined));
  const prompts = new Map<string, PromptEntry>();
  for (const [name, e] of cat.prompts) if (selects(sel, name, e.def.source, undefined)) prompts.set(name, e);
  // A withheld capability comes from an upstream: selected by its key's name and that upstream.
  // cat.withheldTemplates are the matchers of its template: keys, in the same order (core/catalog.ts).
  const withheld = new Map<string, Withheld>();
  const withheldTemplates: NonNullable<Catalog['withheldTemplates']>[number][] = [];
  let t = 0;
  for (const [key, w] of cat.withheld ?? []) {
    const template = key.startsWith('template:');
    const matcher = template ? cat.withheldTemplates![t++]! : undefined;
    if (!selects(sel, key.slice(key.indexOf(':') + 1), { kind: 'upstream', name: w.upstream }, undefined)) continue;
    withheld.set(key, w);
    if (matcher) withheldTemplates.push(matcher);
  }
  return Object.freeze({
    name: ep.serverName ?? `${cat.name}/${ep.name}`,
    version: cat.version,
    description: cat.description,
    ...(ep.instructions !== undefined && { instructions: ep.instructions }),
    // The endpoint's own discovery (absent: direct), never the default endpoint's.
    ...(ep.discovery?.mode !== undefined && ep.discovery.mode !== 'direct' && { discovery: ep.discovery as DiscoverySettings }),
    ...(cat.cache && { cache: cat.cache }),
    ...(cat.limits && { limits: cat.limits }),
    tools, resources, templates: Object.freeze(templates), prompts,
    hash: createHash('sha256').update(`${cat.hash}\n${ep.name}`).digest('hex'),
    ...(cat.listPage && { listPage: cat.listPage }),
    ...(withheld.size && { withheld }),
    ...(withheldTemplates.length && { withheldTemplates: Object.freeze(withheldTemplates) }),
    endpoint: ep,
  });
}
