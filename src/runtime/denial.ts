// A denial, the same whatever transport or step noticed it: one `access.denied` warning
// (caller, capability, reason, required and missing scopes — never a credential) and the
// error each transport encodes its own way (/svc 403 JSON, /mcp 403 step-up or a JSON-RPC
// error, /ws a JSON-RPC error): INSUFFICIENT_SCOPE naming the concrete scopes missing, or
// ARGUMENT_BOUND when a bound argument differs from the credential's value; with an
// Observer, also one `deny` audit event and an auth-failure count.

import { SvcError } from '../errors.js';
import type { Principal } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Denial } from '../policy/scopes.js';
import type { Observer } from '../observe/observer.js';
import type { RequestScope } from '../core/request-scope.js';

export function denial(log: Logger, p: Principal, transport: string, kind: string, name: string, d: Denial, obs?: Observer, scope?: RequestScope): SvcError {
  obs?.denied(p, transport, kind, name, d.required, scope);
  const bound = d.reason === 'bound_argument';
  const why = bound ? d.detail ?? 'a bound argument differs' : `missing ${d.missing.join(' ')}`;
  log.warn({
    event: 'access.denied', sub: p.sub, client_id: p.clientId, transport, kind, name, reason: d.reason ?? 'missing_scope', required: d.required, missing: d.missing,
  }, `denied ${kind} ${name} to ${p.sub} on ${transport}: ${why}`);
  if (bound) return new SvcError('ARGUMENT_BOUND', `${kind} ${name}: ${why}`, { data: { reason: d.detail } });
  return new SvcError('INSUFFICIENT_SCOPE', `${kind} ${name} requires scope ${d.missing.join(' ')}`, {
    data: { required: d.required, missing: d.missing },
  });
}

/** RATE_LIMITED for a quota refusal: data.retryAfterMs, which /svc and /mcp also send as Retry-After (seconds, rounded up). */
export function rateLimited(kind: string, name: string, retryAfterMs: number, label: string): SvcError {
  return new SvcError('RATE_LIMITED', `${kind} ${name}: quota ${label} exhausted; retry after ${Math.ceil(retryAfterMs / 1000)} s`, { data: { retryAfterMs, limit: label } });
}
