// DNS-rebinding protection for every route. Guarantees: when the server is bound
// to a loopback address and server.allowed_hosts is empty, only loopback Host
// names are accepted; a request with an Origin header is accepted only from an
// allowed origin (server.allowed_origins, or the same host, or loopback when bound
// to loopback, or a server.cors origin — a browser app allowed to call across origins
// must first pass this check, and listing it there does not switch the defaults off);
// hostRefusal() names the refusal (403 FORBIDDEN_ORIGIN), which the
// app's front door and the /ws handshake answer before any route runs.

import { SvcError } from '../errors.js';
import { isLoopbackHost } from '../util/loopback.js';
import { normalizeOrigin } from './cors.js';

/** Hostname of a Host header value (strips the port; keeps IPv6 brackets). */
export function hostName(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const i = h.lastIndexOf(':');
  return i === -1 ? h : h.slice(0, i);
}

export interface HostPolicy { bindHost: string; allowedHosts: readonly string[]; allowedOrigins: readonly string[]; corsOrigins?: readonly string[] }

/** The policy server settings ask for (the front door and the /ws handshake use the same one). */
export function hostPolicy(s: { host: string; allowed_hosts: readonly string[]; allowed_origins: readonly string[]; cors: { origins?: readonly string[] } }): HostPolicy {
  return { bindHost: s.host, allowedHosts: s.allowed_hosts, allowedOrigins: s.allowed_origins, corsOrigins: s.cors.origins ?? [] };
}

/** The decision itself, without Express (the /ws handshake uses it too): a FORBIDDEN_ORIGIN error, or undefined when allowed. */
export function hostRefusal(opts: HostPolicy): (host: string | undefined, origin: string | undefined) => SvcError | undefined {
  const loopbackBound = isLoopbackHost(opts.bindHost);
  const hosts = new Set(opts.allowedHosts.map((h) => h.toLowerCase()));
  const origins = new Set(opts.allowedOrigins.map(normalizeOrigin));
  const cors = new Set((opts.corsOrigins ?? []).map(normalizeOrigin));
  const hostOk = (host: string | undefined): boolean => {
    if (!host) return false;
    if (hosts.size) return hosts.has(host.toLowerCase()) || hosts.has(hostName(host));
    return !loopbackBound || isLoopbackHost(hostName(host));
  };
  const originOk = (origin: string, host: string): boolean => {
    const o = origin.toLowerCase();
    if (origins.has(o) || cors.has(o)) return true;
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      return false;
    }
    if (u.host === host.toLowerCase()) return true;
    return origins.size === 0 && loopbackBound && isLoopbackHost(u.hostname);
  };
  return (host, origin) => {
    if (!hostOk(host)) return new SvcError('FORBIDDEN_ORIGIN', `Host ${host ?? '(none)'} is not allowed`);
    if (origin === 'null') return new SvcError('FORBIDDEN_ORIGIN', 'Origin null is not allowed');
    if (origin !== undefined && !originOk(origin, host!)) return new SvcError('FORBIDDEN_ORIGIN', `Origin ${origin} is not allowed`);
    return undefined;
  };
}

