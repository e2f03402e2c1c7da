// OpenTelemetry spans through @opentelemetry/api only: a SERVER span per capability call
// and an INTERNAL span per backend run under it. Guarantees: off unless the operator
// registered an SDK tracer provider (tracingOn() is one property read and a type check,
// so the off path creates no span and no context); the parent is the MCP request's
// `_meta.traceparent` (as MCP 2026-07-28 documents), else the `traceparent` header of the
// HTTP request (or the WebSocket's upgrade), else the active context; the backend runs
// inside its span's context, so the http backend's propagation.inject() sends it on.
// Spans go to the provider registered now: a provider registered after trace.disable()
// (an SDK shut down and set up again) gets them, not the one it replaced.

import { context, propagation, ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { RequestScope } from '../core/request-scope.js';

// A ProxyTracer binds itself to the provider of its first span for good, so the tracer is kept per provider.
let current: { provider: TracerProvider; tracer: Tracer } | undefined;
function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (current?.provider !== provider) current = { provider, tracer: provider.getTracer('fastsvc') };
  return current.tracer;
}
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate().constructor;

/** Whether an SDK registered a tracer provider. */
export function tracingOn(): boolean {
  const p = trace.getTracerProvider();
  return !(p instanceof ProxyTracerProvider) || !(p.getDelegate() instanceof NOOP_PROVIDER);
}

const getter: TextMapGetter<Record<string, unknown>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => (typeof c[k] === 'string' ? (c[k] as string) : undefined),
};

/** The context a call's span is started under. */
export function parentContext(meta: Record<string, unknown> | undefined, scope: RequestScope | undefined): Context {
  const base = context.active();
  if (meta && typeof meta.traceparent === 'string') return propagation.extract(base, meta, getter);
  if (scope?.traceparent) return propagation.extract(base, scope as Record<string, unknown>, getter);
  return base;
}

export interface CallSpan {
  span: Span;
  ctx: Context;
}

export function startCallSpan(method: string, name: string, kind: string, transport: string, parent: Context): CallSpan {
  const span = tracer().startSpan(`${method} ${name}`, {
    kind: SpanKind.SERVER,
    attributes: { 'fastsvc.capability': name, 'fastsvc.kind': kind, 'fastsvc.transport': transport, 'mcp.method.name': method },
  }, parent);
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Ends a span with its outcome ('ok' or an error code). */
export function endSpan(span: Span, outcome: string): void {
  span.setAttribute('fastsvc.outcome', outcome);
  if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  span.end();
}

/** Runs a backend inside an INTERNAL span, child of the call's span. */
export async function inBackendSpan<T>(call: CallSpan, name: string, transport: string, run: () => T | Promise<T>): Promise<T> {
  const span = tracer().startSpan(`backend ${name}`, {
    kind: SpanKind.INTERNAL,
    attributes: { 'fastsvc.capability': name, 'fastsvc.transport': transport },
  }, call.ctx);
  try {
    const out = await context.with(trace.setSpan(call.ctx, span), run);
    endSpan(span, 'ok');
    return out;
  } catch (e) {
    endSpan(span, outcomeOf(e));
    throw e;
  }
}

/** The trace id a decision belongs to: the active span's when tracing, else the caller's traceparent's. */
export function traceIdOf(scope: RequestScope | undefined): string | undefined {
  if (tracingOn()) {
    const active = trace.getSpan(context.active())?.spanContext();
    if (active && trace.isSpanContextValid(active)) return active.traceId;
  }
  const m = scope?.traceparent && /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(scope.traceparent.trim());
  return m && m[1] !== '0'.repeat(32) ? m[1] : undefined;
}

export function outcomeOf(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : 'INTERNAL';
}
