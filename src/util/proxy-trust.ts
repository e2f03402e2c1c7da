// The server.trust_proxy decision: which hops of a request's address chain are trusted
// reverse proxies. Guarantees: a number N trusts exactly the first N hops (0: none); a
// list trusts the hops whose address is one of its IPs or in one of its CIDRs (or the
// named ranges loopback and private); a bad entry throws SCHEMA_VIOLATION at
// /server/trust_proxy, so `svc validate` and start-up refuse it alike. Pure.

import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { SvcError } from '../errors.js';

export type TrustProxy = number | readonly string[];

const NAMED: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  private: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
};

/** The trust decision for hop i (0 = the socket peer) at address addr; throws SCHEMA_VIOLATION for a bad entry. */
export function trustFunction(trust: TrustProxy): (addr: string, hop: number) => boolean {
  if (typeof trust === 'number') return (_addr, hop) => hop < trust;
  const list = new BlockList();
  for (const entry of trust) {
    if (NAMED[entry]) {
      for (const [net, prefix, type] of NAMED[entry]) list.addSubnet(net, prefix, type);
      continue;
    }
    const [net = '', prefix] = entry.split('/');
    const type = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
    const bits = prefix === undefined ? undefined : Number(prefix);
    if (!type || (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= (type === 'ipv4' ? 32 : 128)))) {
      throw new SvcError('SCHEMA_VIOLATION', `server.trust_proxy: ${entry} is not an IP address, a CIDR, loopback or private`, { path: '/server/trust_proxy' });
    }
    if (bits === undefined) list.addAddress(net, type);
    else list.addSubnet(net, bits, type);
  }
  return (addr) => {
    const type = isIPv4(addr) ? 'ipv4' : isIPv6(addr) ? 'ipv6' : undefined;
    return type !== undefined && list.check(addr, type);
  };
}
