// Who is calling, seen through trusted reverse proxies (server.trust_proxy). Guarantees:
// with trust_proxy 0 (the default) X-Forwarded-* headers are never read: the client is
// the socket's peer, the scheme http and the host the Host header; otherwise the chain
// [socket peer, X-Forwarded-For right to left] is walked while each hop is trusted (the
// first N hops, or the hops whose address is in the list) and the first untrusted
// address is the client. X-Forwarded-Proto/-Host are read only when the socket peer is
// trusted, and the value taken is the one the outermost trusted proxy set (a value a
// client put in front of it is skipped). One function serves the Express routes, the
// server's direct paths, the /ws handshake and the OAuth server.

import type { IncomingMessage } from 'node:http';
import { trustFunction, type TrustProxy } from '../util/proxy-trust.js';

export type { TrustProxy };

export interface Caller {
  /** The client address: the socket peer, or what the trusted proxies reported. */
  ip: string;
  /** Whether the socket peer is a trusted proxy (then proto/host may come from it). */
  viaProxy: boolean;
  /** X-Forwarded-Proto from a trusted proxy, if it sent one. */
  proto?: 'http' | 'https';
  /** X-Forwarded-Host from a trusted proxy, if it sent one. */
  host?: string;
}

/**
 * A resolver computing the Caller under this trust_proxy setting: once per request, or with
 * trust_proxy off (the caller is the peer, whatever the headers say) once per connection.
 */
export function callerResolver(trust: TrustProxy): (req: IncomingMessage) => Caller {
  if (trust === 0) {
    const bySocket = new WeakMap<object, Caller>();
    return (req) => {
      const socket = req.socket;
      let c = bySocket.get(socket);
      if (!c) bySocket.set(socket, (c = Object.freeze({ ip: address(socket.remoteAddress ?? '') || '?', viaProxy: false })));
      return c;
    };
  }
  const trusted = trustFunction(trust);
  const seen = new WeakMap<IncomingMessage, Caller>();
  return (req) => {
    let c = seen.get(req);
    if (!c) seen.set(req, (c = resolve(req, trusted)));
    return c;
  };
}

function resolve(req: IncomingMessage, trusted: (addr: string, hop: number) => boolean): Caller {
  const chain = [address(req.socket.remoteAddress ?? ''), ...list(req.headers['x-forwarded-for']).reverse().map(address)];
  let hop = 0;
  while (hop < chain.length - 1 && trusted(chain[hop]!, hop)) hop++;
  const viaProxy = trusted(chain[0]!, 0);
  const caller: Caller = { ip: chain[hop] || '?', viaProxy };
  if (!viaProxy) return caller;
  // Each trusted proxy appends (or sets) one value; the outermost trusted one's is hops from the right.
  const pick = (values: string[]) => values[Math.max(0, values.length - Math.max(hop, 1))];
  const proto = pick(list(req.headers['x-forwarded-proto']))?.toLowerCase();
  if (proto === 'http' || proto === 'https') caller.proto = proto;
  const host = pick(list(req.headers['x-forwarded-host']));
  if (host && /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(host)) caller.host = host.toLowerCase();
  return caller;
}

function list(h: string | string[] | undefined): string[] {
  return [h ?? []].flat().join(',').split(',').map((s) => s.trim()).filter(Boolean);
}

/** An address as the trust list sees it: no IPv4-mapped prefix, no port, no brackets; at most 64 characters. */
function address(raw: string): string {
  let a = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a)) a = a.slice(7);
  return a.slice(0, 64);
}

/** The public base URL a trusted proxy reports (scheme://host), or undefined when it reports neither. */
export function forwardedBase(c: Caller, hostHeader: string | undefined): string | undefined {
  if (!c.viaProxy || (!c.proto && !c.host)) return undefined;
  const host = c.host ?? hostHeader;
  return host ? `${c.proto ?? 'http'}://${host}` : undefined;
}
