// A scope denial, the same whatever transport or step noticed it: one `access.denied`
// warning (caller, capability, required and missing scopes — never a credential) and
// the INSUFFICIENT_SCOPE error each transport encodes its own way (/svc 403 JSON,
// /mcp 403 step-up or a JSON-RPC error, /ws a JSON-RPC error); with an Observer, also one
// `deny` audit event and an auth-failure count.

import { SvcError } from '../errors.js';
import type { Principal } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Decision } from '../policy/scopes.js';
import type { Observer } from '../observe/observer.js';

export function denial(log: Logger, p: Principal, transport: string, kind: string, name: string, d: Extract<Decision, { ok: false }>, obs?: Observer): SvcError {
  obs?.denied(p, transport, kind, name, d.required);
  log.warn({
    event: 'access.denied', sub: p.sub, client_id: p.clientId, transport, kind, name, required: d.required, missing: d.missing,
  }, `denied ${kind} ${name} to ${p.sub} on ${transport}: missing ${d.missing.join(' ')}`);
  return new SvcError('INSUFFICIENT_SCOPE', `${kind} ${name} requires scope ${d.missing.join(' ')}`, {
    data: { required: d.required, missing: d.missing },
  });
}
