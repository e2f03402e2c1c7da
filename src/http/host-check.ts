// DNS-rebinding protection for every route. Guarantees: when the server is bound
// to a loopback address and server.allowed_hosts is empty, only loopback Host
// names are accepted; a request with an Origin header is accepted only from an
// allowed origin (server.allowed_origins, or the same host, or loopback when bound
// to loopback, or a server.cors origin — a browser app allowed to call across origins
// must first pass this check, and listing it there does not switch the defaults off);
// `Origin: null` is refused unless the caller says the route guards itself with a CSRF
// token (the sign-in form posts); hostRefusal() names the refusal (403 FORBIDDEN_ORIGIN,
// data.reason a RefusalReason), which the app's front door and the /ws handshake answer
// before any route runs.
// Before it, invalidHost() refuses a Host that is not a host[:port] at all (400 INVALID_HOST).

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

/** Why a request was refused at the front door; logged and sent as error.reason. */
export type RefusalReason = 'header_repeated' | 'host_invalid' | 'host_not_allowed' | 'origin_null' | 'origin_not_allowed' | 'token_in_query';

// A reg-name or IPv4 (RFC 3986 unreserved, sub-delims, pct-encoded) or a bracketed IPv6 literal, then an optional port.
const HOST_RE = /^(?:\[[0-9A-Fa-f:.]+(?:%25[\w.~-]+)?\]|[\w.~!$&'()*+,;=%-]+)(?::(\d{1,5}))?$/;

/** INVALID_HOST when a Host header is present but is not host[:port] (`@`, `/`, `#`, a port over 65535…); undefined otherwise. */
export function invalidHost(host: string | undefined): SvcError | undefined {
  if (host === undefined) return undefined; // absence is hostRefusal's decision
  const m = HOST_RE.exec(host);
  if (m && (m[1] === undefined || Number(m[1]) <= 65535)) return undefined;
  return new SvcError('INVALID_HOST', 'the Host header is not a valid host[:port]', { data: { reason: 'host_invalid' } });
}

export interface HostPolicy { bindHost: string; allowedHosts: readonly string[]; allowedOrigins: readonly string[]; corsOrigins?: readonly string[] }

/** The policy server settings ask for (the front door and the /ws handshake use the same one). */
export function hostPolicy(s: { host: string; allowed_hosts: readonly string[]; allowed_origins: readonly string[]; cors: { origins?: readonly string[] } }): HostPolicy {
  return { bindHost: s.host, allowedHosts: s.allowed_hosts, allowedOrigins: s.allowed_origins, corsOrigins: s.cors.origins ?? [] };
}

/**
 * The decision itself, without Express (the /ws handshake uses it too): a FORBIDDEN_ORIGIN
 * error, or undefined when allowed. `csrfGuarded`: the route checks its own CSRF token, so
 * `Origin: null` (what a browser sends when the page's referrer policy hides its origin)
 * is no evidence of a cross-site request there; a foreign Origin still is.
 */
export function hostRefusal(opts: HostPolicy): (host: string | undefined, origin: string | undefined, csrfGuarded?: boolean) => SvcError | undefined {
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
  const refuse = (reason: RefusalReason, message: string) => new SvcError('FORBIDDEN_ORIGIN', message, { data: { reason } });
  return (host, origin, csrfGuarded = false) => {
    if (!hostOk(host)) return refuse('host_not_allowed', `Host ${host ?? '(none)'} is not allowed`);
    if (origin === 'null') return csrfGuarded ? undefined : refuse('origin_null', 'Origin null is not allowed');
    if (origin !== undefined && !originOk(origin, host!)) return refuse('origin_not_allowed', `Origin ${origin} is not allowed`);
    return undefined;
  };
}

