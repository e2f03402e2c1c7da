// The decision audit log (manifest `audit`). Guarantees: one JSON line per authorization
// decision — allow, deny, refuse (a quota or rate limit), issue, refresh, revoke,
// register, reload_applied / reload_rejected / restart_required, task_start / task_cancel /
// task_expire, withhold (an upstream's definition not served: upstreams/pin/pin-report.ts) — with time, decision,
// reason code, principal (subject, client id, token kind, the external issuer of an external
// issuer's principal, token_id: a hash of the credential id, never a token), capability, transport, scopes required and held, the
// caller's address and the trace id; written to its own sink (audit-sink.ts: stderr, or a
// file appended to — batched per event-loop turn, or written and fsynced per event when
// `fsync: always`), never to the debug log. A line is the JSON pino would write (level 30,
// ISO time), built by hand: a principal's fields are serialised once per principal. Without
// an `audit` section every method is a no-op.

import { createHash } from 'node:crypto';
import type { Principal } from '../core/types.js';
import type { AuditConfig } from '../core/manifest-types.gen.js';
import { fileSink, stderrSink, type AuditSink } from './audit-sink.js';
import type { RequestScope } from '../core/request-scope.js';
import { traceIdOf } from './tracing.js';

export type AuditDecision = 'allow' | 'deny' | 'refuse' | 'issue' | 'refresh' | 'revoke' | 'register'
  | 'reload_applied' | 'reload_rejected' | 'restart_required' | 'task_start' | 'task_cancel' | 'task_expire' | 'withhold';

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
  /** The request the decision belongs to (address, trace headers), when the transport knows it. */
  scope?: RequestScope;
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

/** `sink`: where the lines go instead of cfg.to (a worker's: its primary, which writes them to the one sink). */
export function createAudit(cfg: AuditConfig | undefined, to?: AuditSink): Audit {
  if (!cfg) return NO_AUDIT;
  const sink = to ?? auditSinkOf(cfg);
  return {
    enabled: true,
    allows: cfg.allow !== false,
    record(e) {
      const ip = e.ip ?? e.scope?.ip;
      const traceId = traceIdOf(e.scope);
      let rest: string;
      if (e.detail === undefined) {
        rest = `${fixedFields(e)}${ip === undefined ? '' : ipField(ip)}${traceId === undefined ? '' : `,"trace_id":"${traceId}"`}`;
      } else {
        const fields = { capability: e.capability, transport: e.transport, scopes_required: e.scopes_required, ip, trace_id: traceId };
        try {
          rest = jsonFields({ ...fields, ...e.detail });
        } catch {
          rest = jsonFields({ ...fields, detail: 'unserialisable' }); // a circular or BigInt detail must not lose the event
        }
      }
      sink.write(`{"level":30,"time":"${isoNow()}","audit":true${decisionFields(e.decision, e.reason)}${e.principal ? principalFields(e.principal) : ''}${rest}}\n`);
    },
    close() {
      sink.close();
    },
  };
}

/** `,"a":1,"b":2` for {a: 1, b: 2} (undefined fields left out), '' for nothing. */
function jsonFields(o: Record<string, unknown>): string {
  const json = JSON.stringify(o);
  return json === '{}' ? '' : `,${json.slice(1, -1)}`;
}

const decisions = new Map<string, Map<string, string>>();

/** `,"decision":…,"reason":…`, serialised once per pair (reasons are a closed set of codes). */
function decisionFields(decision: string, reason: string): string {
  let byReason = decisions.get(decision);
  if (!byReason) decisions.set(decision, (byReason = new Map()));
  let s = byReason.get(reason);
  if (s === undefined) {
    s = jsonFields({ decision, reason });
    if (byReason.size < 1000) byReason.set(reason, s);
  }
  return s;
}

const fixed = new WeakMap<readonly string[], Map<string, Map<string | undefined, string>>>();

/** `,"capability":…,"transport":…,"scopes_required":[…]`, serialised once per capability's required scopes and transport. */
function fixedFields(e: AuditEvent): string {
  const make = () => jsonFields({ capability: e.capability, transport: e.transport, scopes_required: e.scopes_required });
  if (e.scopes_required === undefined || e.capability === undefined) return make();
  let byCapability = fixed.get(e.scopes_required);
  if (!byCapability) fixed.set(e.scopes_required, (byCapability = new Map()));
  let byTransport = byCapability.get(e.capability);
  if (!byTransport) byCapability.set(e.capability, (byTransport = new Map()));
  let s = byTransport.get(e.transport);
  if (s === undefined) byTransport.set(e.transport, (s = make()));
  return s;
}

let lastIp: string | undefined;
let lastIpField = '';

/** `,"ip":"…"`, serialised again only when the address changes. */
function ipField(ip: string): string {
  if (ip !== lastIp) {
    lastIp = ip;
    lastIpField = `,"ip":${JSON.stringify(ip)}`;
  }
  return lastIpField;
}

const principalJson = new WeakMap<Principal, string>();

/** `,"sub":…,"client_id":…,"token_kind":…,"issuer":…,"token_id":…,"scopes_held":[…]`, once per principal (principals are immutable). */
function principalFields(p: Principal): string {
  let s = principalJson.get(p);
  if (s === undefined) {
    const json = JSON.stringify({ sub: p.sub, client_id: p.clientId, token_kind: p.kind, issuer: p.issuer, token_id: tokenIdHash(p), scopes_held: [...p.scopes] });
    principalJson.set(p, (s = `,${json.slice(1, -1)}`));
  }
  return s;
}

let lastMs = -1;
let lastIso = '';
let lastSecond = NaN;
/** The ISO time of lastSecond up to and including the dot before the milliseconds. */
let secondPrefix = '';

/** The time as ISO 8601, formatted once per millisecond (Date's formatter once per second). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const frac = ms % 1000;
    const second = ms - frac;
    if (second !== lastSecond) {
      lastSecond = second;
      secondPrefix = new Date(second).toISOString().slice(0, -4);
    }
    lastIso = `${secondPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
  }
  return lastIso;
}

/** The sink `audit.to` names: a file (written and fsynced per line with fsync: always) or stderr. */
export function auditSinkOf(cfg: AuditConfig | undefined): AuditSink {
  return typeof cfg?.to === 'object' ? fileSink(cfg.to.file, cfg.fsync === 'always') : stderrSink();
}
