// Prometheus metrics through prom-client, one Registry per app. Guarantees: calls by
// kind, capability, transport and outcome; latency histograms per capability; auth
// failures by reason; tokens issued/refreshed/revoked; reloads by result and the current
// config hash as the label of an info gauge; open sessions and sockets, calls in flight,
// running tasks;
// prom-client's default process metrics (event-loop lag included). The hot path reuses
// label children cached per (transport, kind, capability), so a call allocates no label
// set of its own, and counts calls in plain numbers that the calls counter reads at
// scrape time (prom-client's inc() hashes its labels on every call); the latency histogram
// is call-histogram.ts, whose observe() allocates nothing; capability labels come from the manifest only
// (an unknown name is counted as "_unknown"), so callers cannot grow the series.

import type * as Prom from 'prom-client';
import type { Counter, Gauge, Registry } from 'prom-client';
import { lazyRequire } from '../util/lazy-require.js';
import { CallHistogram } from './call-histogram.js';

/** prom-client is loaded when the first Metrics is built (only when /metrics is routed). */
const loadProm = lazyRequire<typeof Prom>('prom-client');

type Inc = { inc(v?: number): void };
type Observe = { observe(v: number): void };

/** Calls of one capability with one outcome: counted on the hot path, added to the counter at scrape time. */
interface Tally {
  n: number;
  sent: number;
  readonly child: Inc;
}

interface Bound {
  readonly duration: Observe;
  /** The common outcome, without a map lookup. */
  readonly ok: Tally;
  readonly outcomes: Map<string, Tally>;
  readonly labels: readonly [string, string, string];
}

export interface MetricsSources {
  sessions: (transport: 'mcp' | 'ws') => number;
  /** Tasks not yet finished (the task engine's count). */
  tasks: () => number;
}

export class Metrics {
  readonly registry: Registry;
  readonly #calls: Counter<'kind' | 'capability' | 'transport' | 'outcome'>;
  readonly #duration: CallHistogram;
  readonly #authFailures: Counter<'reason'>;
  readonly #tokens: Counter<'event'>;
  readonly #reloads: Counter<'result'>;
  readonly #config: Gauge<'config_hash'>;
  /** Calls running now: a plain number on the hot path, read into its gauge at scrape time. */
  #running = 0;
  readonly #bound = new Map<string, Map<string, Map<string, Bound>>>();
  readonly #tallies: Tally[] = [];
  readonly #durations = new Map<string, Observe>();

  constructor(src: MetricsSources, configHash: string | undefined) {
    const { Counter, Gauge, Registry, collectDefaultMetrics } = loadProm();
    this.registry = new Registry();
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const tallies = this.#tallies;
    this.#calls = new Counter({
      name: 'fastsvc_calls_total', help: 'Capability calls by kind, capability, transport and outcome (ok or the error code).', labelNames: ['kind', 'capability', 'transport', 'outcome'], registers,
      collect() {
        for (const t of tallies) {
          if (t.n === t.sent) continue;
          t.child.inc(t.n - t.sent);
          t.sent = t.n;
        }
      },
    });
    this.#duration = new CallHistogram('fastsvc_call_duration_seconds', 'Capability call latency, seconds.',
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers);
    this.#authFailures = new Counter({ name: 'fastsvc_auth_failures_total', help: 'Requests refused at authentication or authorization, by reason.', labelNames: ['reason'], registers });
    this.#tokens = new Counter({ name: 'fastsvc_oauth_tokens_total', help: 'OAuth tokens issued, refreshed and revoked.', labelNames: ['event'], registers });
    this.#reloads = new Counter({ name: 'fastsvc_reloads_total', help: 'Manifest reloads by result (applied, rejected, restart_required, unchanged).', labelNames: ['result'], registers });
    this.#config = new Gauge({ name: 'fastsvc_config_info', help: 'The manifest being served: 1, labelled with its sha256.', labelNames: ['config_hash'], registers });
    const running = () => this.#running;
    new Gauge({ name: 'fastsvc_calls_in_flight', help: 'Capability calls running now.', registers, collect() { this.set(running()); } });
    new Gauge({
      name: 'fastsvc_open_sessions', help: 'Open MCP sessions: transport="mcp" (Streamable HTTP sessions) and transport="ws" (WebSocket sockets).', labelNames: ['transport'], registers,
      collect() {
        this.set({ transport: 'mcp' }, src.sessions('mcp'));
        this.set({ transport: 'ws' }, src.sessions('ws'));
      },
    });
    new Gauge({ name: 'fastsvc_running_tasks', help: 'Tasks started and not yet finished (completed, failed or cancelled).', registers, collect() { this.set(src.tasks()); } });
    for (const e of ['issued', 'refreshed', 'revoked']) this.#tokens.labels(e);
    for (const r of ['applied', 'rejected', 'restart_required', 'unchanged']) this.#reloads.labels(r);
    this.setConfig(configHash);
  }

  /** The cached label children of one capability on one transport. */
  bind(kind: string, capability: string, transport: string): Bound {
    let byKind = this.#bound.get(transport);
    if (!byKind) this.#bound.set(transport, (byKind = new Map()));
    let byName = byKind.get(kind);
    if (!byName) byKind.set(kind, (byName = new Map()));
    let b = byName.get(capability);
    if (!b) {
      const labels = [kind, capability, transport] as const;
      byName.set(capability, (b = { duration: this.#series(kind, capability), ok: this.#tally(labels, 'ok'), outcomes: new Map(), labels }));
    }
    return b;
  }

  /** The latency series of a capability, shared by every transport (the histogram is labelled by kind and capability only). */
  #series(kind: string, capability: string): Observe {
    const key = `${kind}\0${capability}`;
    let s = this.#durations.get(key);
    if (!s) this.#durations.set(key, (s = this.#duration.series({ kind, capability })));
    return s;
  }

  #tally(labels: readonly [string, string, string], outcome: string): Tally {
    const t = { n: 0, sent: 0, child: this.#calls.labels(labels[0], labels[1], labels[2], outcome) };
    this.#tallies.push(t);
    return t;
  }

  started(): void {
    this.#running++;
  }

  /** One finished call: seconds it took and its outcome ('ok' or an error code). */
  finished(b: Bound, seconds: number, outcome: string): void {
    this.#running--;
    b.duration.observe(seconds);
    if (outcome === 'ok') {
      b.ok.n++;
      return;
    }
    let t = b.outcomes.get(outcome);
    if (!t) b.outcomes.set(outcome, (t = this.#tally(b.labels, outcome)));
    t.n++;
  }

  authFailure(reason: string): void {
    this.#authFailures.labels(reason).inc();
  }

  token(event: 'issued' | 'refreshed' | 'revoked'): void {
    this.#tokens.labels(event).inc();
  }

  reload(result: 'applied' | 'rejected' | 'restart_required' | 'unchanged', hash?: string): void {
    this.#reloads.labels(result).inc();
    if ((result === 'applied' || result === 'restart_required') && hash) this.setConfig(hash);
  }

  setConfig(hash: string | undefined): void {
    this.#config.reset();
    this.#config.set({ config_hash: hash ?? 'none' }, 1);
  }

  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
