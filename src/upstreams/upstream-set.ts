// Every upstream of a server, and the FastSvc they make together with the manifest's own
// capabilities. Guarantees: start() connects them all at once and resolves when each is
// connected or its connect_timeout_ms has passed (start-up waits that long at most, then
// serves without the late ones, whose capabilities appear when they connect); compose() is
// the manifest's FastSvc plus what each upstream's listing imports under the given generation's
// `expose` rules — a manifest capability wins over an imported one of the same name or URI (and
// the first upstream over a later one), the loser is named in `skipped`; onChange() hears of
// every listing that changed; observe() hears of every call made to an upstream (for metrics);
// retain() keeps the connections a generation names (an upstream removed on reload is retired: its
// connection ends once its calls in flight have, at most graceMs later; one put back connects again, as
// it was at start-up; one the process did not start with waits for a restart, restart_required);
// close() ends every connection (stdio children included). Credentials:
// each connection builds its `auth` once; each generation's expose.auth and overrides' auth are built
// on its first compose and kept with that generation (credentials.ts), so a listing change reuses them.
// Pinning: compose() judges each `pin: true` upstream's listing against the lock it is given, and
// returns per upstream what was served and withheld (pins) and every withheld capability by the
// name fastsvc would serve it under (withheld), for /readyz, the audit log and the runtime.

import { FastSvc } from '../core/fast-svc.js';
import type { Logger } from '../log.js';
import { UpstreamConnection, type UpstreamStatus } from './connection.js';
import { callCredentials } from './credentials.js';
import { importListing } from './import.js';
import type { Lock } from './pin/lock-file.js';
import { pinReport, type UpstreamPinReport } from './pin/pin-report.js';
import type { UpstreamSpec } from './spec.js';

export type { UpstreamStatus };

export interface Composed {
  svc: FastSvc;
  skipped: string[];
  /** Per `pin: true` upstream that has listed: served, withheld, removed. */
  pins: Record<string, UpstreamPinReport>;
  /** Withheld capabilities, tool:NAME / prompt:NAME / resource:URI → upstream and reason. */
  withheld: Map<string, { upstream: string; reason: string }>;
}

/** One ended call to an upstream: its name, the method, seconds and outcome ('ok' or the error code). */
export type UpstreamCallObserver = (upstream: string, method: string, seconds: number, outcome: string) => void;

export class UpstreamSet {
  readonly #conns = new Map<string, UpstreamConnection>();
  readonly #listeners = new Set<() => void>();
  #observer?: UpstreamCallObserver;
  readonly #baseDir: string;
  readonly #log: Logger;
  /** The specs the process started with, by name: what a connection is made from, now and when put back. */
  readonly #startup = new Map<string, UpstreamSpec>();
  readonly #graceMs: number;
  /** Connections retired and not yet closed (close() closes them at once). */
  readonly #retiring = new Set<UpstreamConnection>();

  /** baseDir: the manifest's folder (credentials' *_file paths resolve against it); graceMs: how long a retired connection's calls may run on. */
  constructor(specs: readonly UpstreamSpec[], log: Logger, baseDir: string, graceMs: number) {
    this.#baseDir = baseDir;
    this.#log = log;
    this.#graceMs = graceMs;
    for (const spec of specs) {
      this.#startup.set(spec.name, spec);
      this.#conns.set(spec.name, this.#connection(spec));
    }
  }

  #connection(spec: UpstreamSpec): UpstreamConnection {
    const onCall = (method: string, seconds: number, outcome: string) => this.#observer?.(spec.name, method, seconds, outcome);
    return new UpstreamConnection(spec, { log: this.#log, baseDir: this.#baseDir, onListing: () => this.#changed(), onCall });
  }

  /** The connections `specs` (a generation's) name, by name: the others retired, a start-up one put back connected again. */
  retain(specs: readonly UpstreamSpec[]): void {
    const names = new Set(specs.map((s) => s.name));
    for (const [name, conn] of this.#conns) {
      if (names.has(name)) continue;
      this.#conns.delete(name);
      this.#log.info({ event: 'upstream.removed', upstream: name }, `upstream ${name} is no longer in the manifest: its connection ends`);
      this.#retiring.add(conn);
      void conn.retire(this.#graceMs).finally(() => this.#retiring.delete(conn));
    }
    for (const name of names) {
      const spec = this.#startup.get(name);
      if (this.#conns.has(name) || !spec) continue;
      const conn = this.#connection(spec);
      this.#conns.set(name, conn);
      this.#log.info({ event: 'upstream.restored', upstream: name }, `upstream ${name} is back in the manifest: connecting`);
      void conn.start();
    }
  }

  /** Every call made to an upstream from now on is reported to `fn` (one observer: the app's metrics). */
  observe(fn: UpstreamCallObserver): void {
    this.#observer = fn;
  }

  async start(): Promise<void> {
    await Promise.all([...this.#conns.values()].map((c) => c.start()));
  }

  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  status(): Record<string, UpstreamStatus> {
    return Object.fromEntries([...this.#conns].map(([name, c]) => [name, c.status()]));
  }

  /** The manifest's capabilities plus the imported ones; `specs` (this generation's) decide expose, matched to connections by name. */
  compose(svc: FastSvc, specs: readonly UpstreamSpec[], lock?: Lock): Composed {
    const out = new FastSvc({ name: svc.name, version: svc.version, description: svc.description, instructions: svc.instructions, cache: svc.cache, limits: svc.limits, discovery: svc.discovery });
    for (const t of svc.tools.values()) out.tool(t);
    for (const r of svc.resources.values()) out.resource(r);
    for (const p of svc.prompts.values()) out.prompt(p);
    for (const e of svc.endpoints.values()) out.endpoint(e);
    const skipped: string[] = [];
    const pins: Record<string, UpstreamPinReport> = {};
    const withheld = new Map<string, { upstream: string; reason: string }>();
    for (const spec of specs) {
      const conn = this.#conns.get(spec.name);
      const listing = conn?.listing();
      if (!conn || !listing) continue;
      const imported = importListing(spec, listing, conn, callCredentials(spec, this.#baseDir), lock);
      skipped.push(...imported.skipped.map((s) => `upstream ${spec.name}: ${s}`));
      if (imported.pin) pins[spec.name] = pinReport(true, imported.pin);
      for (const [key, w] of imported.withheld) if (!withheld.has(key)) withheld.set(key, w);
      const taken = (kind: string, key: string) => skipped.push(`upstream ${spec.name}: ${kind} ${key} is already served; the first one is kept`);
      for (const t of imported.tools) out.tools.has(t.name) ? taken('tool', t.name) : out.tool(t);
      for (const r of imported.resources) {
        const key = r.uri ?? r.uri_template!;
        if (out.resources.has(key)) taken('resource', key);
        else out.resource(r);
      }
      for (const p of imported.prompts) out.prompts.has(p.name) ? taken('prompt', p.name) : out.prompt(p);
    }
    return { svc: out, skipped, pins, withheld };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#conns.values(), ...this.#retiring].map((c) => c.close()));
  }

  #changed(): void {
    for (const fn of this.#listeners) fn();
  }
}
