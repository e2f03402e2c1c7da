// Who sent the request a call belongs to, for the audit log and tracing: the caller's
// address and the W3C trace context headers, carried through the call with
// AsyncLocalStorage so the MCP protocol layers need not pass them along. Guarantees: a
// scope is entered only while the audit log or tracing is on (otherwise nothing is
// stored and getScope() is undefined); no credential is ever kept here.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';

export interface RequestScope {
  /** The caller's address as server.trust_proxy resolves it. */
  readonly ip?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

const als = new AsyncLocalStorage<RequestScope>();

export function getScope(): RequestScope | undefined {
  return als.getStore();
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

export function runInScope<T>(scope: RequestScope, fn: () => T): T {
  return als.run(scope, fn);
}
