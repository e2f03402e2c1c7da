// The decision audit log (manifest `audit`). Guarantees: one JSON line per authorization
// decision — allow, deny, refuse (a quota or rate limit), issue, refresh, revoke,
// register, reload_applied / reload_rejected / restart_required, task_start / task_cancel /
// task_expire — with time, decision,
// reason code, principal (subject, client id, token kind, token_id: a hash of the
// credential id, never a token), capability, transport, scopes required and held, the
// caller's address and the trace id; written to its own sink (stderr, or a file appended
// to, fsynced per event when `fsync: always`), never to the debug log. Without an `audit`
// section every method is a no-op.

import { createHash } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Principal } from '../core/types.js';
import type { AuditConfig } from '../manifest/types.gen.js';
import { getScope } from './request-scope.js';
import { traceIdOf } from './tracing.js';

export type AuditDecision = 'allow' | 'deny' | 'refuse' | 'issue' | 'refresh' | 'revoke' | 'register'
  | 'reload_applied' | 'reload_rejected' | 'restart_required' | 'task_start' | 'task_cancel' | 'task_expire';

export interface AuditEvent {
  decision: AuditDecision;
  /** A stable reason code: scopes_ok, insufficient_scope, invalid_token, rate_limited, … */
  reason: string;
  principal?: Principal;
  /** kind:name, e.g. tool:notes.search, or the route for a request refused before any capability. */
  capability?: string;
  transport?: string;
  scopes_required?: readonly string[];
  /** The caller's address; default: the request scope's. */
  ip?: string;
  /** Anything else the decision needs (client_id of a registration, problems of a reload, …); never a secret. */
  detail?: Record<string, unknown>;
}

export interface Audit {
  readonly enabled: boolean;
  /** Whether allowed calls are recorded too (audit.allow). */
  readonly allows: boolean;
  record(e: AuditEvent): void;
  close(): void;
}

export const NO_AUDIT: Audit = Object.freeze({ enabled: false, allows: false, record() {}, close() {} });

const tokenIds = new WeakMap<Principal, string>();

/** A stable, non-reversible name for a credential: sha256 of its id, 16 hex characters. */
export function tokenIdHash(p: Principal): string | undefined {
  if (!p.credentialId) return undefined;
  let h = tokenIds.get(p);
  if (h === undefined) tokenIds.set(p, (h = hashId(p.credentialId)));
  return h;
}

export function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 16);
}

export function createAudit(cfg: AuditConfig | undefined): Audit {
  if (!cfg) return NO_AUDIT;
  const file = typeof cfg.to === 'object' ? cfg.to.file : undefined;
  const always = cfg.fsync === 'always';
  const dest = file
    ? pino.destination({ dest: file, append: true, mkdir: true, sync: always, fsync: always })
    : pino.destination({ fd: 2, sync: false });
  const out: Logger = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, messageKey: 'msg' }, dest);
  return {
    enabled: true,
    allows: cfg.allow !== false,
    record(e) {
      const scope = getScope();
      const p = e.principal;
      out.info({
        audit: true,
        decision: e.decision,
        reason: e.reason,
        ...(p && { sub: p.sub, client_id: p.clientId, token_kind: p.kind, token_id: tokenIdHash(p), scopes_held: [...p.scopes] }),
        capability: e.capability,
        transport: e.transport,
        scopes_required: e.scopes_required,
        ip: e.ip ?? scope?.ip,
        trace_id: traceIdOf(scope),
        ...e.detail,
      });
    },
    close() {
      out.flush();
    },
  };
}
