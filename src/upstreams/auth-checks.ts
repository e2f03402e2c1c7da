// The checks of an upstream's credentials a schema cannot express — `auth` (the connection's),
// `expose.auth` (every imported call's) and `expose.overrides.NAME.auth` (one tool's) — beyond each
// credential's own (outbound/credential-checks.ts, which manifest/outbound-checks.ts runs on them).
// Shared by `svc validate` (compile.ts) and the runtime (credentials.ts), so both refuse the same
// entries. Guarantees: pure; every problem is UPSTREAM_CONFIG at the field at fault: a credential on
// a command upstream (it is an HTTP header; a stdio child gets its secrets through `env`); a
// per-caller kind (token_exchange, upstream_login) as the connection's `auth`, whose requests
// (initialize, lists, pings, polls) are made for no caller; a per-caller kind for calls without an
// `auth` for those requests (MCP's authorization asks for a credential on every request); a
// credential whose header `headers` also sets.

import type { OutboundAuth, Upstream } from '../core/manifest-types.gen.js';
import { credentialKind } from '../core/credential-kind.js';

export interface UpstreamAuthProblem {
  /** Below the upstream entry. */
  path: (string | number)[];
  message: string;
}

/** The kinds whose header depends on the caller of the call in progress. */
function perCaller(a: OutboundAuth | undefined): boolean {
  return !!(a?.token_exchange || a?.upstream_login);
}

/** Every credential of the entry for calls, with where it stands (expose.auth, then each override's). */
export function callAuths(u: Upstream): { path: (string | number)[]; auth: OutboundAuth; tool?: string }[] {
  const out: { path: (string | number)[]; auth: OutboundAuth; tool?: string }[] = [];
  if (u.expose?.auth) out.push({ path: ['expose', 'auth'], auth: u.expose.auth });
  for (const [tool, o] of Object.entries(u.expose?.overrides ?? {})) {
    if (o.auth) out.push({ path: ['expose', 'overrides', tool, 'auth'], auth: o.auth, tool });
  }
  return out;
}

export function upstreamAuthProblems(u: Upstream): UpstreamAuthProblem[] {
  const out: UpstreamAuthProblem[] = [];
  const all = [...(u.auth ? [{ path: ['auth'], auth: u.auth }] : []), ...callAuths(u)];
  if (u.command !== undefined) {
    for (const a of all) out.push({ path: a.path, message: `upstream ${u.name}: a credential is an HTTP header, and a command upstream has none; give the child its secret through env` });
    return out;
  }
  if (u.auth && perCaller(u.auth)) {
    out.push({ path: ['auth', kind(u.auth)], message: `upstream ${u.name}: auth is the connection's credential, sent also on requests made for no caller (initialize, lists, pings); use static or client_credentials there, and put ${kind(u.auth)} in expose.auth (every call) or expose.overrides.NAME.auth (one tool)` });
  }
  const firstPerCaller = callAuths(u).find((a) => perCaller(a.auth));
  if (firstPerCaller && !u.auth) {
    out.push({ path: firstPerCaller.path, message: `upstream ${u.name}: ${kind(firstPerCaller.auth)} makes a credential per caller, and the connection's own requests (initialize, lists, pings) are made for no caller: give the upstream an auth (static or client_credentials) for them` });
  }
  const fixed = new Set(Object.keys(u.headers ?? {}).map((h) => h.toLowerCase()));
  for (const a of all) {
    const sets = (a.auth.static?.header ?? 'authorization').toLowerCase();
    if (fixed.has(sets)) out.push({ path: a.path, message: `upstream ${u.name}: this credential sets the ${sets} header; leave it out of headers` });
  }
  return out;
}

function kind(a: OutboundAuth): string {
  return credentialKind(a)!;
}
