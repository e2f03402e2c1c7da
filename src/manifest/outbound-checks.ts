// The manifest's checks of every backend credential (`http.auth` of tools and resources; an
// upstream's `auth`, `expose.auth` and `expose.overrides.NAME.auth`): the
// spec's own (outbound/credential-checks.ts, the same the builder makes) and those that need the
// rest of the manifest. Guarantees: pure; every problem at the node it concerns; a token_exchange
// is refused on a tool that may run as a task (`task` optional or required; for an upstream's
// expose.auth, any override that sets a task mode and no auth of its own) — a task outlives the
// request, and the caller's token is used only while its request lasts — and needs
// external_issuers (only their tokens can be exchanged); an upstream_login names
// a provider of oauth.login.upstreams, with oauth on and login.mode upstream.

import type { OutboundAuth, SvcManifest } from '../core/manifest-types.gen.js';
import type { ErrorCode } from '../errors.js';
import { outboundAuthProblems } from '../outbound/credential-checks.js';
import { callAuths } from '../upstreams/auth-checks.js';

type Path = (string | number)[];

/** Where a backend credential is declared, and whether its capability may run as a task. */
export interface DeclaredAuth {
  path: Path;
  auth: OutboundAuth;
  who: string;
  task: boolean;
}

export function declaredAuths(m: SvcManifest): DeclaredAuth[] {
  const out: DeclaredAuth[] = [];
  m.tools?.forEach((t, i) => {
    if (t.http?.auth) out.push({ path: ['tools', i, 'http', 'auth'], auth: t.http.auth, who: `tool ${t.name}`, task: (t.task ?? 'forbidden') !== 'forbidden' });
  });
  m.resources?.forEach((r, i) => {
    if (r.http?.auth) out.push({ path: ['resources', i, 'http', 'auth'], auth: r.http.auth, who: `resource ${r.name}`, task: false });
  });
  m.upstreams?.forEach((u, i) => {
    const path = ['upstreams', i];
    const who = `upstream ${u.name}`;
    const overrides = Object.values(u.expose?.overrides ?? {});
    const tasked = (task: string | undefined) => (task ?? 'forbidden') !== 'forbidden';
    if (u.auth) out.push({ path: [...path, 'auth'], auth: u.auth, who, task: false });
    for (const a of callAuths(u)) {
      const task = a.tool === undefined ? overrides.some((o) => !o.auth && tasked(o.task)) : tasked(u.expose!.overrides![a.tool]!.task);
      out.push({ path: [...path, ...a.path], auth: a.auth, who: a.tool === undefined ? who : `${who} tool ${a.tool}`, task });
    }
  });
  return out;
}

export function checkOutboundAuth(m: SvcManifest, problem: (code: ErrorCode, path: Path, message: string) => void): void {
  const login = m.oauth?.enabled === true && m.oauth.login?.mode === 'upstream' ? m.oauth.login : undefined;
  const providers = new Set((login?.upstreams ?? []).map((u) => u.name));
  for (const d of declaredAuths(m)) {
    for (const p of outboundAuthProblems(d.auth)) problem(p.code, [...d.path, ...p.path], `${d.who}: ${p.message}`);
    if (d.auth.token_exchange && d.task) {
      problem('OUTBOUND_AUTH_CONFIG', [...d.path, 'token_exchange'], `${d.who}: token_exchange uses the caller's token, which lives only as long as the request; a tool that may run as a task cannot use it (set task: forbidden, or use client_credentials)`);
    }
    if (d.auth.token_exchange && !m.external_issuers?.length) {
      problem('OUTBOUND_AUTH_CONFIG', [...d.path, 'token_exchange'], `${d.who}: token_exchange exchanges a token of an external issuer, and external_issuers lists none`);
    }
    const up = d.auth.upstream_login?.upstream;
    if (up !== undefined && !providers.has(up)) {
      problem('OUTBOUND_AUTH_CONFIG', [...d.path, 'upstream_login', 'upstream'], `${d.who}: upstream_login names ${up}, which is not a provider of oauth.login.upstreams (with oauth.login.mode upstream)`);
    }
  }
}
