// Prometheus metrics: fastsvc's own counts in plain numbers from start-up, exposed through a
// prom-client Registry made at the first scrape. Guarantees: calls by kind, capability,
// transport and outcome; latency histograms per capability; auth failures by reason; tokens
// issued/refreshed/revoked; reloads by result and the current config hash as the label of an
// info gauge; open sessions and sockets, calls in flight, running tasks; and prom-client's
// default process metrics (event-loop lag included), collected from the first scrape on —
// a server nobody scrapes never loads prom-client. The hot path reuses series cached per
// (transport, kind, capability), so a call allocates no label set and hashes nothing: the
// counters are counter-family.ts and the latency histogram call-histogram.ts, read at scrape
// time; capability labels come from the manifest only (an unknown name is counted as
// "_unknown"), so callers cannot grow the series. Upstreams (the gateway): each one's state as a
// state set, its calls in flight, restarts and refused questions, read from the connections at
// scrape time, and every call fastsvc makes to it counted and timed by method and outcome — the
// upstream label is the manifest's name, the method one of the few proxied, so these stay bounded
// too.

import type * as Prom from 'prom-client';
import type { Registry } from 'prom-client';
import { lazyRequire } from '../util/lazy-require.js';
import { CallHistogram } from './call-histogram.js';
import { CounterFamily, type CounterSeries } from './counter-family.js';

/** prom-client is loaded at the first scrape. */
const loadProm = lazyRequire<typeof Prom>('prom-client');

type Observe = { observe(v: number): void };

interface Bound {
  readonly duration: Observe;
  /** The common outcome, without a map lookup. */
  readonly ok: CounterSeries;
  readonly outcomes: Map<string, CounterSeries>;
  readonly labels: { kind: string; capability: string; transport: string };
}

export interface MetricsSources {
  sessions: (transport: 'mcp' | 'ws') => number;
  /** Tasks not yet finished (the task engine's count). */
  tasks: () => number;
  /** Each upstream's status by name (the gateway's connections), when there are upstreams. */
  upstreams?: () => Record<string, UpstreamGauges>;
}

/** What the scrape reads of one upstream. */
export interface UpstreamGauges {
  state: string;
  in_flight: number;
  restarts: number;
  questions_refused: number;
}

const UPSTREAM_STATES = ['starting', 'ready', 'restarting', 'closed'] as const;
type UpstreamBound = Omit<Bound, 'labels'> & { readonly labels: { upstream: string; method: string } };

type TokenEvent = 'issued' | 'refreshed' | 'revoked';
type ReloadResult = 'applied' | 'rejected' | 'restart_required' | 'unchanged';

export class Metrics {
  #registry: Registry | undefined;
  readonly #calls = new CounterFamily('fastsvc_calls_total', 'Capability calls by kind, capability, transport and outcome (ok or the error code).');
  readonly #duration = new CallHistogram('fastsvc_call_duration_seconds', 'Capability call latency, seconds.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  readonly #authFailures = new CounterFamily('fastsvc_auth_failures_total', 'Requests refused at authentication or authorization, by reason.');
  readonly #byReason = new Map<string, CounterSeries>();
  readonly #tokens = new CounterFamily('fastsvc_oauth_tokens_total', 'OAuth tokens issued, refreshed and revoked.');
  readonly #byEvent: Record<TokenEvent, CounterSeries>;
  // Every worker of server.workers prepares and settles every reload (all or none): each counts each one, so the
  // workers' counts are alike and /metrics takes their highest (a sum would count one reload N times; the highest,
  // unlike one chosen worker's, survives that worker being replaced).
  readonly #reloads = new CounterFamily('fastsvc_reloads_total', 'Manifest reloads by result (applied, rejected, restart_required, unchanged).', 'max');
  readonly #byResult: Record<ReloadResult, CounterSeries>;
  #configHash: string;
  /** Calls running now: a plain number on the hot path, read into its gauge at scrape time. */
  #running = 0;
  readonly #bound = new Map<string, Map<string, Map<string, Bound>>>();
  readonly #durations = new Map<string, Observe>();
  readonly #upCalls = new CounterFamily('fastsvc_upstream_calls_total', 'Calls fastsvc made to each upstream, by method and outcome (ok or the error code).');
  readonly #upDuration = new CallHistogram('fastsvc_upstream_call_duration_seconds', 'Latency of calls fastsvc made to each upstream, by method, seconds.',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);
  readonly #upBound = new Map<string, UpstreamBound>();

  readonly #src: MetricsSources;

  constructor(src: MetricsSources, configHash: string | undefined) {
    this.#src = src;
    const tokens = this.#tokens;
    this.#byEvent = { issued: tokens.series({ event: 'issued' }), refreshed: tokens.series({ event: 'refreshed' }), revoked: tokens.series({ event: 'revoked' }) };
    const reloads = this.#reloads;
    this.#byResult = {
      applied: reloads.series({ result: 'applied' }), rejected: reloads.series({ result: 'rejected' }),
      restart_required: reloads.series({ result: 'restart_required' }), unchanged: reloads.series({ result: 'unchanged' }),
    };
    this.#configHash = configHash ?? 'none';
  }

  /** The cached series of one capability on one transport. */
  bind(kind: string, capability: string, transport: string): Bound {
    let byKind = this.#bound.get(transport);
    if (!byKind) this.#bound.set(transport, (byKind = new Map()));
    let byName = byKind.get(kind);
    if (!byName) byKind.set(kind, (byName = new Map()));
    let b = byName.get(capability);
    if (!b) {
      const labels = { kind, capability, transport };
      byName.set(capability, (b = { duration: this.#series(kind, capability), ok: this.#calls.series({ ...labels, outcome: 'ok' }), outcomes: new Map(), labels }));
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
    if (!t) b.outcomes.set(outcome, (t = this.#calls.series({ ...b.labels, outcome })));
    t.n++;
  }

  /** One finished call to an upstream: seconds it took and its outcome ('ok' or an error code). */
  upstreamCall(upstream: string, method: string, seconds: number, outcome: string): void {
    const key = `${upstream}\0${method}`;
    let b = this.#upBound.get(key);
    if (!b) {
      const labels = { upstream, method };
      this.#upBound.set(key, (b = { duration: this.#upDuration.series(labels), ok: this.#upCalls.series({ ...labels, outcome: 'ok' }), outcomes: new Map(), labels }));
    }
    b.duration.observe(seconds);
    if (outcome === 'ok') {
      b.ok.n++;
      return;
    }
    let t = b.outcomes.get(outcome);
    if (!t) b.outcomes.set(outcome, (t = this.#upCalls.series({ ...b.labels, outcome })));
    t.n++;
  }

  authFailure(reason: string): void {
    let s = this.#byReason.get(reason);
    if (!s) this.#byReason.set(reason, (s = this.#authFailures.series({ reason })));
    s.n++;
  }

  token(event: TokenEvent): void {
    this.#byEvent[event].n++;
  }

  reload(result: ReloadResult, hash?: string): void {
    this.#byResult[result].n++;
    if ((result === 'applied' || result === 'restart_required') && hash) this.#configHash = hash;
  }

  async text(): Promise<{ body: string; contentType: string }> {
    const registry = (this.#registry ??= this.#makeRegistry());
    return { body: await registry.metrics(), contentType: registry.contentType };
  }

  /** The same metrics as prom-client's JSON (getMetricsAsJSON), which AggregatorRegistry.aggregate sums across workers (workers.ts). */
  async json(): Promise<unknown[]> {
    const registry = (this.#registry ??= this.#makeRegistry());
    return registry.getMetricsAsJSON();
  }

  /** The Registry, at the first scrape: prom-client's default metrics start collecting then. */
  #makeRegistry(): Registry {
    const { Gauge, Registry, collectDefaultMetrics } = loadProm();
    const registry = new Registry();
    const registers = [registry];
    collectDefaultMetrics({ register: registry });
    for (const m of [this.#calls, this.#duration, this.#authFailures, this.#tokens, this.#reloads, this.#upCalls, this.#upDuration]) registry.registerMetric(m as never);
    const self = this;
    const src = this.#src;
    new Gauge({ name: 'fastsvc_config_info', help: 'The manifest being served: 1, labelled with its sha256.', labelNames: ['config_hash'], registers, aggregator: 'max', collect() { this.reset(); this.set({ config_hash: self.#configHash }, 1); } });
    new Gauge({ name: 'fastsvc_calls_in_flight', help: 'Capability calls running now.', registers, collect() { this.set(self.#running); } });
    new Gauge({
      name: 'fastsvc_open_sessions', help: 'Open MCP sessions: transport="mcp" (Streamable HTTP sessions) and transport="ws" (WebSocket sockets).', labelNames: ['transport'], registers,
      collect() {
        this.set({ transport: 'mcp' }, src.sessions('mcp'));
        this.set({ transport: 'ws' }, src.sessions('ws'));
      },
    });
    new Gauge({ name: 'fastsvc_running_tasks', help: 'Tasks started and not yet finished (completed, failed or cancelled).', registers, collect() { this.set(src.tasks()); } });
    if (src.upstreams) this.#upstreamGauges(registry, src.upstreams);
    return registry;
  }

  /** The upstreams' gauges, read from their connections at each scrape. */
  #upstreamGauges(registry: Registry, read: () => Record<string, UpstreamGauges>): void {
    const { Counter, Gauge } = loadProm();
    const registers = [registry];
    const each = (fn: (name: string, u: UpstreamGauges) => void) => {
      for (const [name, u] of Object.entries(read())) fn(name, u);
    };
    new Gauge({
      name: 'fastsvc_upstream_state', help: 'Each upstream\'s connection state: 1 for the state it is in (starting, ready, restarting, closed), 0 for the others.', labelNames: ['upstream', 'state'], registers,
      collect() {
        this.reset(); // an upstream removed on reload leaves no series behind
        each((upstream, u) => { for (const state of UPSTREAM_STATES) this.set({ upstream, state }, u.state === state ? 1 : 0); });
      },
    });
    new Gauge({ name: 'fastsvc_upstream_calls_in_flight', help: 'Calls to each upstream running now.', labelNames: ['upstream'], registers, collect() { this.reset(); each((upstream, u) => this.set({ upstream }, u.in_flight)); } });
    for (const [name, help, key] of [
      ['fastsvc_upstream_restarts_total', 'Times each upstream\'s connection was lost and made again.', 'restarts'],
      ['fastsvc_upstream_questions_refused_total', 'Questions (elicitation, sampling) of each upstream refused because fastsvc could not tell whose call they belong to.', 'questions_refused'],
    ] as const) {
      new Counter({ name, help, labelNames: ['upstream'], registers, collect() { this.reset(); each((upstream, u) => this.inc({ upstream }, u[key])); } });
    }
  }
}
