// What an HTTP upstream's requests carry as credentials (the upstream's `auth`, `expose.auth`,
// `expose.overrides.NAME.auth`). Guarantees: credentialedFetch() sets exactly one credential's
// header on each request — the header of the call in progress when the request is made inside
// withCallHeader() (its POST, a resumed stream of it, an answer to a question the upstream asked on
// that stream), else the connection's own (`auth`, asked for no caller: ANONYMOUS), else none; the caller's
// own token is never among them (the transport is given only the manifest's `headers`, and every
// credential is one of outbound/'s kinds); a fetched token the upstream answers 401 to is
// replaced and that request sent once more (never twice: a second 401 is the upstream's answer). The call's header travels in an AsyncLocalStorage:
// the SDK gives no per-request Authorization (its per-request `headers` refuse it), and the store
// follows the SDK's awaits from callTool() down to fetch(). Work of the connection itself that a
// call may happen to trigger (a re-list on a list_changed read from a call's stream, a reconnect)
// runs under outsideCall(), so it carries the connection's credential. callCredentials() builds
// expose.auth and each override's once per generation of the entry (a reload builds new ones, like
// an http tool's), refusing what auth-checks.ts refuses; no header value is ever logged.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';
import { createOutboundCredential, type OutboundCredential, type OutboundHeader } from '../outbound/index.js';
import { SvcError } from '../errors.js';
import { ANONYMOUS } from '../policy/principals.js';
import type { Principal } from '../core/types.js';
import { callAuths, upstreamAuthProblems } from './auth-checks.js';
import type { UpstreamSpec } from './spec.js';

/** A call's credential on its requests: the header it sends now, and whose it is (to replace a token refused). */
interface CallCredential {
  header: OutboundHeader;
  credential: OutboundCredential;
  caller: Principal;
}

const callHeader = new AsyncLocalStorage<CallCredential>();
const NEVER = new AbortController().signal;

/** `run` with `header` (`credential`'s for `caller`) on every request it makes to the upstream. */
export function withCallHeader<T>(header: OutboundHeader, credential: OutboundCredential, caller: Principal, run: () => Promise<T>): Promise<T> {
  return callHeader.run({ header, credential, caller }, run);
}

/** `run` as the connection's own work, whatever call may have triggered it. */
export function outsideCall<T>(run: () => T): T {
  return callHeader.exit(run);
}

/**
 * `inner` with the call's header, or else the connection's credential's, on every request; a 401 to a fetched token
 * (refused() exists) makes the credential forget it, and the request is sent once more with a new one.
 */
export function credentialedFetch(inner: FetchLike, connection: OutboundCredential | undefined): FetchLike {
  return async (url, init) => {
    const call = callHeader.getStore();
    const credential = call?.credential ?? connection;
    if (!credential) return inner(url, init);
    const caller = call?.caller ?? ANONYMOUS;
    const signal = init?.signal ?? NEVER;
    const sent = call?.header ?? await credential.header(caller, signal);
    const res = await inner(url, withHeader(init, sent));
    if (res.status !== 401 || !credential.refused || !resendable(init?.body)) return res;
    await res.body?.cancel().catch(() => undefined);
    credential.refused(caller, sent);
    const renewed = await credential.header(caller, signal);
    if (call) call.header = renewed; // the call's later requests carry the new token too
    return inner(url, withHeader(init, renewed));
  };
}

function withHeader(init: RequestInit | undefined, [name, value]: OutboundHeader): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set(name, value);
  return { ...init, headers };
}

/** A body that can be sent twice (the SDK sends JSON text; none for a GET or DELETE). */
const resendable = (body: unknown): boolean => body === undefined || body === null || typeof body === 'string';

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
