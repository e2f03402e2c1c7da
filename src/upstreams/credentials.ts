// What an HTTP upstream's requests carry as credentials (the upstream's `auth`, `expose.auth`,
// `expose.overrides.NAME.auth`). Guarantees: credentialedFetch() sets exactly one credential's
// header on each request — the header of the call in progress when the request is made inside
// withCallHeader() (its POST, a resumed stream of it, an answer to a question the upstream asked on
// that stream), else the connection's own (`auth`, asked for no caller: ANONYMOUS), else none; the caller's
// own token is never among them (the transport is given only the manifest's `headers`, and every
// credential is one of auth/outbound/'s kinds). The call's header travels in an AsyncLocalStorage:
// the SDK gives no per-request Authorization (its per-request `headers` refuse it), and the store
// follows the SDK's awaits from callTool() down to fetch(). Work of the connection itself that a
// call may happen to trigger (a re-list on a list_changed read from a call's stream, a reconnect)
// runs under outsideCall(), so it carries the connection's credential. callCredentials() builds
// expose.auth and each override's once per generation of the entry (a reload builds new ones, like
// an http tool's), refusing what auth-checks.ts refuses; no header value is ever logged.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';
import { createOutboundCredential, type OutboundCredential, type OutboundHeader } from '../auth/outbound/index.js';
import { SvcError } from '../errors.js';
import { ANONYMOUS } from '../policy/principals.js';
import { callAuths, upstreamAuthProblems } from './auth-checks.js';
import type { UpstreamSpec } from './spec.js';

const callHeader = new AsyncLocalStorage<OutboundHeader>();
const NEVER = new AbortController().signal;

/** `run` with `header` on every request it makes to the upstream (no header: the connection's). */
export function withCallHeader<T>(header: OutboundHeader | undefined, run: () => Promise<T>): Promise<T> {
  return header ? callHeader.run(header, run) : run();
}

/** `run` as the connection's own work, whatever call may have triggered it. */
export function outsideCall<T>(run: () => T): T {
  return callHeader.exit(run);
}

/** `inner` with the call's header, or else the connection's credential's, on every request. */
export function credentialedFetch(inner: FetchLike, connection: OutboundCredential | undefined): FetchLike {
  return async (url, init) => {
    const header = callHeader.getStore() ?? await connection?.header(ANONYMOUS, init?.signal ?? NEVER);
    if (!header) return inner(url, init);
    const headers = new Headers(init?.headers);
    headers.set(header[0], header[1]);
    return inner(url, { ...init, headers });
  };
}

/** The entry's checks (UPSTREAM_CONFIG at the field at fault), for the runtime to refuse what validate does. */
function assertUpstreamAuth(spec: UpstreamSpec): void {
  const p = upstreamAuthProblems(spec)[0];
  if (p) throw new SvcError('UPSTREAM_CONFIG', p.message, { path: p.path.join('/') });
}

/** The connection's credential (`auth`), if any. */
export function connectionCredential(spec: UpstreamSpec, baseDir: string): OutboundCredential | undefined {
  assertUpstreamAuth(spec);
  return spec.auth && built(['auth'], () => createOutboundCredential(spec.auth!, { baseDir }));
}

export interface CallCredentials {
  /** The credential of a call of this tool (its upstream name), or of a resource read or prompt get (no name); undefined: the connection's. */
  of(tool?: string): OutboundCredential | undefined;
}

const generations = new WeakMap<UpstreamSpec, CallCredentials>();

/** expose.auth and the overrides' auth of this generation of the entry, built on first use and kept with it. */
export function callCredentials(spec: UpstreamSpec, baseDir: string): CallCredentials {
  let c = generations.get(spec);
  if (!c) {
    assertUpstreamAuth(spec);
    const byTool = new Map<string, OutboundCredential>();
    let every: OutboundCredential | undefined;
    for (const a of callAuths(spec)) {
      const cred = built(a.path, () => createOutboundCredential(a.auth, { baseDir }));
      if (a.tool === undefined) every = cred;
      else byTool.set(a.tool, cred);
    }
    c = { of: (tool) => (tool !== undefined && byTool.get(tool)) || every };
    generations.set(spec, c);
  }
  return c;
}

/** A credential built, its errors' paths put below the entry's field (`auth/...` → `expose/auth/...`). */
function built(at: (string | number)[], build: () => OutboundCredential): OutboundCredential {
  try {
    return build();
  } catch (e) {
    if (e instanceof SvcError && e.path?.startsWith('auth')) e.path = [...at, ...e.path.split('/').slice(1)].join('/');
    throw e;
  }
}
