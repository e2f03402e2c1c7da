// The request a call or a decision belongs to, for the audit log and tracing: the
// caller's address and the W3C trace context headers. Carried explicitly — on the
// CallContext (ctx.scope) and on audit events — never through AsyncLocalStorage: on
// Node 20 one AsyncLocalStorage.run() turns promise hooks on for the whole process, which
// cost about a quarter of a /svc call's throughput (bench, issue 17). Guarantees: a
// transport builds a scope only while the audit log or tracing is on (Observer.scoped());
// no credential is ever kept here.

import type { IncomingMessage } from 'node:http';

export interface RequestScope {
  /** The caller's address as server.trust_proxy resolves it. */
  readonly ip?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** The scope of an HTTP request (or a WebSocket's upgrade request). */
export function scopeOf(req: IncomingMessage, ip: string | undefined): RequestScope {
  const tp = req.headers.traceparent;
  const ts = req.headers.tracestate;
  return {
    ip,
    ...(typeof tp === 'string' && { traceparent: tp }),
    ...(typeof ts === 'string' && { tracestate: ts }),
  };
}
