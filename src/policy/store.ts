// The policy store: the one place the live policy lives. Guarantees: current()
// returns a frozen snapshot {catalog, profile, tokens} — everything a reload or a
// token-file rotation can change while the server runs; swap(next) replaces it in
// one assignment, so a reader that took a snapshot keeps a consistent one however
// long it holds it, and no reader ever sees parts of two policies; swap returns the
// change set — which capability lists changed, and which resources' contents (their
// revision: what the manifest makes them from) — and tells each listener once, only when
// something did (MCP sessions send list_changed and resources/updated from it). Restart-only settings stay
// in the start-up config; reload status (last_reload, restart_required) is not
// policy and lives with the server status. changesFor(c, endpoint) narrows a change set to what an
// endpoint's view shows (worked out once per change set and endpoint, however many sessions ask),
// so an endpoint whose view did not change is told nothing.

import type { Catalog, Guarded } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import type { ResolvedConfig } from '../core/config.js';
import type { Logger } from '../log.js';
import { viewOf } from '../catalog/endpoint-view.js';

/** The static bearer tokens of a snapshot, as the server asks about them (auth/bearer.ts's TokenTable). */
export interface StaticTokens {
  /** The principal for a presented token, or undefined (constant time in the token's value). */
  match(token: string): Principal | undefined;
  /** The principal of the token named `name`, if it has a value. */
  principalNamed(name: string): Principal | undefined;
  /** Whether `p` is still the principal of a token of this table (a reload that changed the token makes it not). */
  stillValid(p: Principal): boolean;
  /** The token files this table read. */
  files(): string[];
  /** The same table built again from its files: this one when no token value changed. */
  reread(log: Logger): StaticTokens;
  /** The main token, when it was generated at start-up. */
  readonly generated?: string;
}

export interface PolicySnapshot {
  readonly catalog: Catalog;
  /** The manifest's profile (scopes and their descriptions, issuer URLs) as /docs and /metadata show it. */
  readonly profile: ResolvedConfig['profile'];
  /** The static bearer tokens; absent when bearer auth is off (a restart-only choice). */
  readonly tokens?: StaticTokens;
}

/** Which capability lists differ between two snapshots (what list_changed notifications need), and whose contents. */
export interface ChangeSet {
  tools: boolean;
  resources: boolean;
  prompts: boolean;
  /** The resources (by URI, or URI template) in both snapshots whose contents changed: their subscribers are told. */
  updated: ReadonlySet<string>;
  /** The catalogs compared (absent: a change set made by hand): changesFor() compares an endpoint's views of them. */
  before?: Catalog;
  after?: Catalog;
}

const NONE: ReadonlySet<string> = new Set();

export class PolicyStore {
  #current: PolicySnapshot;
  readonly #listeners = new Set<(c: ChangeSet) => void>();
  readonly #log?: Logger;

  constructor(initial: PolicySnapshot, log?: Logger) {
    this.#current = Object.freeze({ ...initial });
    this.#log = log;
  }

  current(): PolicySnapshot {
    return this.#current;
  }

  /** Replace the snapshot in one assignment; returns what changed in the lists and tells listeners once. */
  swap(next: PolicySnapshot): ChangeSet {
    const prev = this.#current;
    this.#current = Object.freeze({ ...next });
    const changes = diffLists(prev.catalog, next.catalog);
    // An endpoint's selection may change while the catalog's capabilities do not: its listeners then compare views.
    if (changes.tools || changes.resources || changes.prompts || changes.updated.size || endpointsDiffer(prev.catalog, next.catalog)) {
      for (const fn of this.#listeners) {
        try {
          fn(changes);
        } catch (e) {
          this.#log?.error({ err: e }, 'change listener failed');
        }
      }
    }
    return changes;
  }

  onChange(fn: (c: ChangeSet) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}

const perEndpoint = new WeakMap<ChangeSet, Map<string, ChangeSet>>();

/** What change set `c` changed in the view of the endpoint named `endpoint` (undefined: the default endpoint, `c` itself). */
export function changesFor(c: ChangeSet, endpoint: string | undefined): ChangeSet {
  if (!endpoint || !c.before || !c.after) return c;
  let byName = perEndpoint.get(c);
  if (!byName) perEndpoint.set(c, (byName = new Map()));
  let out = byName.get(endpoint);
  if (!out) byName.set(endpoint, (out = diffLists(viewOf(c.before, endpoint), viewOf(c.after, endpoint))));
  return out;
}

function diffLists(a: Catalog, b: Catalog): ChangeSet {
  if (a === b) return { tools: false, resources: false, prompts: false, updated: NONE, before: a, after: b };
  const sig = (entries: Iterable<Guarded & { wire: object }>) => JSON.stringify([...entries].map((e) => [e.wire, e.required, e.patterns?.map((x) => x.source), e.bind]));
  return {
    // A change of how the tools are shown (discovery) changes what tools/list answers.
    tools: sig(a.tools.values()) !== sig(b.tools.values()) || JSON.stringify(a.discovery) !== JSON.stringify(b.discovery),
    resources: sig([...a.resources.values(), ...a.templates]) !== sig([...b.resources.values(), ...b.templates]),
    prompts: sig(a.prompts.values()) !== sig(b.prompts.values()),
    updated: revised(a, b),
    before: a,
    after: b,
  };
}

/** Whether two catalogs declare different endpoints (names, selections, scopes, what they say they are). */
function endpointsDiffer(a: Catalog, b: Catalog): boolean {
  if (a.endpoints === b.endpoints) return false;
  const sig = (c: Catalog) => JSON.stringify([...c.endpoints?.values() ?? []].map((e) => [e, e.select?.names?.source, [...e.select?.sources ?? []], [...e.select?.tags ?? []]]));
  return sig(a) !== sig(b);
}

/** The resources of both catalogs whose revision differs, keyed as resourceKey() keys them. */
function revised(a: Catalog, b: Catalog): ReadonlySet<string> {
  const before = new Map([...a.resources.values(), ...a.templates].map((e) => [resourceKey(e.def), e.def.revision]));
  const out = new Set<string>();
  for (const e of [...b.resources.values(), ...b.templates]) {
    const key = resourceKey(e.def);
    if (before.has(key) && before.get(key) !== e.def.revision) out.add(key);
  }
  return out.size ? out : NONE;
}

/** A resource's key in a change set: its URI, or its URI template. */
export function resourceKey(def: { uri?: string; uri_template?: string }): string {
  return def.uri ?? def.uri_template!;
}
