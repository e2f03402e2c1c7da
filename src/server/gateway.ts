// The catalog of a server with upstreams: the manifest's capabilities plus the imported ones,
// kept current through the policy store's one swap. Guarantees: build() is what start-up and
// every reload use (the generation's FastSvc and its `upstreams` entries), and it remembers them and keeps
// the connections they name (UpstreamSet.retain: an upstream removed is disconnected);
// when an upstream's listing changes, the catalog is built again from the remembered generation
// and applied with PolicyStore.swap — the same atomic swap a reload makes, so MCP sessions get
// list_changed — keeping the snapshot's profile and tokens; each such change logs one line
// `upstreams.catalog_changed` naming what was added, removed and changed; a rebuild that fails
// changes nothing and is logged; what an import left out is logged once per distinct list.
// Pinning: every build judges `pin: true` upstreams against the current lock; setLock() (the lock
// file changed: `fastsvc upstreams accept`) rebuilds and swaps the same way a listing change does;
// each definition newly withheld is audited once (upstreams/pin/pin-report.ts) and status() adds each
// pinned upstream's report (served, withheld with reasons, removed) to its connection state.

import { buildCatalog, type Catalog, type ListPage } from '../core/catalog.js';
import type { FastSvc } from '../core/fast-svc.js';
import type { Logger } from '../log.js';
import type { PolicyStore } from '../policy/store.js';
import type { Audit } from '../observe/audit.js';
import type { UpstreamSet, UpstreamStatus } from '../upstreams/upstream-set.js';
import type { UpstreamSpec } from '../upstreams/spec.js';
import type { Lock } from '../upstreams/pin/lock-file.js';
import { createWithholdAudit, type UpstreamPinReport } from '../upstreams/pin/pin-report.js';

/** An upstream's state on /readyz: its connection's, and with `pin: true` what the lock lets through. */
export type GatewayUpstreamStatus = UpstreamStatus & { pin?: UpstreamPinReport };

export class GatewayCatalog {
  readonly #upstreams: UpstreamSet;
  readonly #log: Logger;
  readonly #listPage: ListPage | undefined;
  #base?: { svc: FastSvc; specs: readonly UpstreamSpec[]; hash: string | undefined };
  #skipped = '';
  #lock: Lock | undefined;
  #pins: Record<string, UpstreamPinReport> = {};
  /** Per upstream, the withheld list last logged (logged again only when it changes). */
  readonly #logged = new Map<string, string>();
  readonly #audit: (upstream: string, withheld: UpstreamPinReport['withheld']) => void;
  #rebuild?: () => void;

  /** lock: the pin lock read at start (undefined: none yet); audit: where withheld definitions are recorded. */
  constructor(upstreams: UpstreamSet, log: Logger, listPage: ListPage | undefined, pinning: { lock: Lock | undefined; audit: Audit }) {
    this.#upstreams = upstreams;
    this.#log = log.child({ module: 'upstreams' });
    this.#listPage = listPage;
    this.#lock = pinning.lock;
    this.#audit = createWithholdAudit(pinning.audit);
  }

  /** The lock file changed: judge every pinned upstream again, and swap the result in (once attached). */
  setLock(lock: Lock): void {
    this.#lock = lock;
    this.#rebuild?.();
  }

  /** Each upstream's connection state, with its pin report when it is pinned and has listed. */
  status(): Record<string, GatewayUpstreamStatus> {
    return Object.fromEntries(Object.entries(this.#upstreams.status()).map(([name, st]) => [name, this.#pins[name] ? { ...st, pin: this.#pins[name] } : st]));
  }

  build(svc: FastSvc, specs: readonly UpstreamSpec[], hash: string | undefined): Catalog {
    const composed = this.#upstreams.compose(svc, specs, this.#lock);
    const catalog = buildCatalog(composed.svc, { hash, listPage: this.#listPage, withheld: composed.withheld });
    this.#base = { svc, specs, hash };
    this.#pins = composed.pins;
    for (const [name, report] of Object.entries(composed.pins)) {
      this.#audit(name, report.withheld);
      const text = JSON.stringify(report.withheld);
      if (text === (this.#logged.get(name) ?? '[]')) continue;
      this.#logged.set(name, text);
      if (report.withheld.length) this.#log.warn({ event: 'upstreams.withheld', upstream: name, withheld: report.withheld }, `upstream ${name}: ${report.withheld.length} definition(s) withheld until accepted (fastsvc upstreams status)`);
    }
    const skipped = composed.skipped.join('\n');
    if (skipped && skipped !== this.#skipped) {
      for (const line of composed.skipped) this.#log.warn({ event: 'upstreams.skipped', detail: line }, line);
    }
    this.#skipped = skipped;
    this.#upstreams.retain(specs);
    return catalog;
  }

  /** Applies every listing change to `store` from now on; returns the detach. */
  attach(store: PolicyStore): () => void {
    const rebuild = (): void => {
      const base = this.#base;
      if (!base) return;
      const prev = store.current();
      let catalog: Catalog;
      try {
        catalog = this.build(base.svc, base.specs, base.hash);
      } catch (e) {
        this.#log.error({ event: 'upstreams.rebuild_failed', err: (e as Error)?.message }, 'an upstream changed, and the catalog could not be built with it; still serving the last one');
        return;
      }
      const changes = {
        tools: diff(prev.catalog.tools, catalog.tools),
        resources: diff(new Map([...prev.catalog.resources, ...prev.catalog.templates.map((t) => [t.def.uri_template!, t] as const)]), new Map([...catalog.resources, ...catalog.templates.map((t) => [t.def.uri_template!, t] as const)])),
        prompts: diff(prev.catalog.prompts, catalog.prompts),
      };
      store.swap({ ...prev, catalog });
      const words = Object.entries(changes).flatMap(([kind, d]) => {
        const bits = [...d.added.map((n) => `+${n}`), ...d.removed.map((n) => `-${n}`), ...d.changed.map((n) => `~${n}`)];
        return bits.length ? [`${kind} ${bits.join(' ')}`] : [];
      });
      if (words.length) this.#log.info({ event: 'upstreams.catalog_changed', changes }, `upstream catalog changed: ${words.join('; ')}`);
    };
    this.#rebuild = rebuild;
    const detach = this.#upstreams.onChange(rebuild);
    return () => {
      detach();
      this.#rebuild = undefined;
    };
  }
}

function diff(a: ReadonlyMap<string, { wire: object }>, b: ReadonlyMap<string, { wire: object }>): { added: string[]; removed: string[]; changed: string[] } {
  const text = (e: { wire: object }) => JSON.stringify(e.wire);
  return {
    added: [...b.keys()].filter((k) => !a.has(k)).sort(),
    removed: [...a.keys()].filter((k) => !b.has(k)).sort(),
    changed: [...b.keys()].filter((k) => a.has(k) && text(a.get(k)!) !== text(b.get(k)!)).sort(),
  };
}
