// One app's observability: the audit log, the metrics (when /metrics is served) and
// tracing (when an OpenTelemetry SDK is registered), behind the few calls the runtime,
// the front door, the OAuth server and the reloader make. Guarantees: with all three off
// a call costs two property reads and one type check (no allocation, no request scope);
// the request's scope (address, trace headers) arrives explicitly, on the CallContext or as
// an argument, and transports build one only while scoped() is true;
// a call's outcome is 'ok', 'TOOL_ERROR' for an isError tool result, or the error code.

import { context } from '@opentelemetry/api';
import type { CallContext, Principal } from '../core/types.js';
import { NO_AUDIT, type Audit, type AuditEvent } from './audit.js';
import type { Metrics } from './metrics.js';
import type { RequestScope } from '../core/request-scope.js';
import { endSpan, outcomeOf, parentContext, startCallSpan, tracingOn, type CallSpan } from './tracing.js';

/** The capability label of a name the catalog does not know (so callers cannot grow the series). */
export const UNKNOWN = '_unknown';

export type ReloadResult = 'applied' | 'rejected' | 'restart_required' | 'unchanged';

/** Capability labels kept per kind before the cache starts over. */
const MAX_CAPABILITY_LABELS = 100_000;

export class Observer {
  static readonly NONE = new Observer(NO_AUDIT, undefined);
  readonly #capabilities = new Map<string, Map<string, string>>();

  constructor(readonly audit: Audit, readonly metrics: Metrics | undefined) {}

  /** Whether calls are timed or traced (else the runtime skips call()). */
  timed(): boolean {
    return this.metrics !== undefined || tracingOn();
  }

  /** Whether a request's scope (address, trace headers) is wanted: the audit log or tracing is on. */
  scoped(): boolean {
    return this.audit.enabled || tracingOn();
  }

  /** One capability call: a span (tracing on), latency and outcome (metrics on). */
  call<T>(method: string, kind: string, label: string, ctx: CallContext, run: (span?: CallSpan) => Promise<T>): Promise<T> {
    if (tracingOn()) return this.#traced(method, kind, label, ctx, run);
    // Metrics only: no async frame of its own, the outcome read off the promise.
    const m = this.metrics;
    if (!m) return run();
    const bound = m.bind(kind, label, ctx.transport);
    m.started();
    const t0 = performance.now();
    return run().then((r) => {
      m.finished(bound, (performance.now() - t0) / 1000, (r as { isError?: unknown }).isError === true ? 'TOOL_ERROR' : 'ok');
      return r;
    }, (e: unknown) => {
      m.finished(bound, (performance.now() - t0) / 1000, outcomeOf(e));
      throw e;
    });
  }

  async #traced<T>(method: string, kind: string, label: string, ctx: CallContext, run: (span?: CallSpan) => Promise<T>): Promise<T> {
    const m = this.metrics;
    const bound = m?.bind(kind, label, ctx.transport);
    const cs = startCallSpan(method, label, kind, ctx.transport, parentContext(ctx.meta, ctx.scope));
    m?.started();
    const t0 = performance.now();
    let outcome = 'ok';
    try {
      const r = await context.with(cs.ctx, run, undefined, cs);
      if ((r as { isError?: unknown }).isError === true) outcome = 'TOOL_ERROR';
      return r;
    } catch (e) {
      outcome = outcomeOf(e);
      throw e;
    } finally {
      if (bound) m!.finished(bound, (performance.now() - t0) / 1000, outcome);
      endSpan(cs.span, outcome);
    }
  }

  /** A call the scope check let through (recorded when audit.allow). */
  allowed(p: Principal, transport: string, kind: string, name: string, required: readonly string[], scope?: RequestScope): void {
    if (this.audit.allows) this.audit.record({ decision: 'allow', reason: 'scopes_ok', principal: p, capability: this.#capability(kind, name), transport, scopes_required: required, scope });
  }

  /** A call refused for missing scopes (403). */
  denied(p: Principal, transport: string, kind: string, name: string, required: readonly string[], scope?: RequestScope): void {
    this.metrics?.authFailure('insufficient_scope');
    this.audit.record({ decision: 'deny', reason: 'insufficient_scope', principal: p, capability: this.#capability(kind, name), transport, scopes_required: required, scope });
  }

  /** A request refused before any capability: 401 (reason missing_token, invalid_token, …) or a front-door refusal. */
  refused(reason: string, route: string, ip: string | undefined, decision: 'deny' | 'refuse' = 'deny'): void {
    this.metrics?.authFailure(reason);
    this.audit.record({ decision, reason, capability: route, ip });
  }

  /**
   * A request refused by a limit once its caller is known (the /mcp session cap,
   * ws_max_in_flight, a task cap, sign-in attempts): one `refuse` event and an auth-failure count.
   */
  limited(reason: string, capability: string, transport: string, p?: Principal, ip?: string, scope?: RequestScope): void {
    this.metrics?.authFailure(reason);
    this.audit.record({ decision: 'refuse', reason, principal: p, capability, transport, ip, scope });
  }

  /** A task decision: started, cancelled (by whom), expired, or another principal's task refused as not found. */
  task(e: AuditEvent): void {
    this.audit.record(e);
  }

  /** OAuth server events (issue, refresh, revoke, register, a refused grant). */
  oauth(e: AuditEvent): void {
    if (e.decision === 'issue') this.metrics?.token('issued');
    else if (e.decision === 'refresh') this.metrics?.token('refreshed');
    else if (e.decision === 'revoke') this.metrics?.token('revoked');
    else if (e.decision === 'deny' || e.decision === 'refuse') this.metrics?.authFailure(e.reason);
    this.audit.record(e);
  }

  /** A reload's outcome: counted, and (unless `audit` is false: another worker of server.workers records it) an audit event. */
  reloaded(result: ReloadResult, detail: Record<string, unknown>, hash?: string, audit = true): void {
    this.metrics?.reload(result, hash);
    if (result === 'unchanged' || !audit) return;
    const decision = result === 'applied' ? 'reload_applied' : result === 'rejected' ? 'reload_rejected' : 'restart_required';
    this.audit.record({ decision, reason: String(detail.reason ?? result), detail });
  }

  close(): void {
    this.audit.close();
  }

  /** `kind:name`, the same string each time (the audit log caches a capability's fields by it); names come from the catalog. */
  #capability(kind: string, name: string): string {
    let byName = this.#capabilities.get(kind);
    if (!byName) this.#capabilities.set(kind, (byName = new Map()));
    let s = byName.get(name);
    if (s === undefined) {
      if (byName.size >= MAX_CAPABILITY_LABELS) byName.clear(); // reloads renamed many capabilities
      byName.set(name, (s = `${kind}:${name}`));
    }
    return s;
  }
}
