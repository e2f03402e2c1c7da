// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP
// 2026-07-28): a client whose client_id is an https URL is described by the JSON
// document at that URL. oidc-provider resolves, validates (the document's client_id is
// its URL, no shared secrets, exact redirect URIs) and caches it (Cache-Control max-age
// or Expires, clamped to 30 s … 1 day); this module decides what it may fetch and how.
// Guarantees: only https; only the manifest's allowed hosts (when it names any); never
// a loopback, private, link-local or other special-use address — checked on the IP
// literal and on every address DNS returns, and the socket connects to the address that
// was checked — unless allow_private_addresses; no redirects (any answer but 200 is a
// refusal); at most MAX_BYTES read and TIMEOUT_MS spent; the operator's CA file is
// trusted besides the system roots. Every refusal is logged once with the URL and
// reason and remembered for 30 s (no new request for that URL meanwhile).

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { resolve } from 'node:path';
import { rootCertificates } from 'node:tls';
import type { Logger } from 'pino';
import type { OAuthConfig } from '../../core/manifest-types.gen.js';
import { SvcError } from '../../errors.js';

export type CimdConfig = NonNullable<OAuthConfig['client_id_metadata_documents']>;

/** The draft's recommended cap on a document's size. */
export const MAX_BYTES = 5 * 1024;
export const TIMEOUT_MS = 2500;
/** How long a refusal is remembered (oidc-provider's shortest cache time for a good document). */
export const REFUSAL_TTL_MS = 30_000;
const REFUSALS_KEPT = 1000;

// Two lists: a BlockList also checks IPv4 addresses against its IPv6 rules (as ::ffff:a.b.c.d).
const SPECIAL_V4 = new BlockList();
const SPECIAL_V6 = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) SPECIAL_V4.addSubnet(net, bits, 'ipv4');
// IPv4-mapped and NAT64 addresses are refused whole: a public document has a real address.
for (const [net, bits] of [['::', 127], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) SPECIAL_V6.addSubnet(net, bits, 'ipv6');

/** Whether an IP address is loopback, private, link-local or otherwise not a public unicast address. */
export function isSpecialUse(address: string): boolean {
  const family = isIP(address);
  return family === 0 || (family === 4 ? SPECIAL_V4.check(address, 'ipv4') : SPECIAL_V6.check(address, 'ipv6'));
}

export interface Cimd {
  enabled: boolean;
  /** Whether oidc-provider may fetch this client_id's document (host allowed). */
  allowFetch(clientId: string): boolean;
  /** oidc-provider's `fetch`: every outbound request it makes goes through the rules above. */
  fetch(url: string | URL | Request, init?: RequestInit): Promise<Response>;
}

export function createCimd(cfg: CimdConfig | undefined, manifestDir: string, log: Logger): Cimd {
  const enabled = cfg?.enabled ?? true;
  const allowPrivate = cfg?.allow_private_addresses ?? false;
  const allowedHosts = new Set((cfg?.allowed_hosts ?? []).map((h) => h.toLowerCase()));
  let ca: string[] | undefined;
  if (cfg?.ca_file) {
    try {
      ca = [...rootCertificates, readFileSync(resolve(manifestDir, cfg.ca_file), 'utf8')];
    } catch (e) {
      throw new SvcError('OAUTH_CONFIG', `oauth.client_id_metadata_documents.ca_file: ${(e as Error).message}`, { path: '/oauth/client_id_metadata_documents/ca_file' });
    }
  }

  // A refused URL stays refused for REFUSAL_TTL_MS without a new request (oidc-provider
  // may look a client up twice per request; retries must not hammer a slow host).
  const refused = new Map<string, { until: number; reason: string }>();
  const refuse = (url: string, reason: string) => {
    log.warn({ event: 'oauth.cimd_refused', url, reason }, `client metadata document ${url} refused: ${reason}`);
    if (refused.size >= REFUSALS_KEPT) refused.delete(refused.keys().next().value!);
    refused.set(url, { until: Date.now() + REFUSAL_TTL_MS, reason });
    return new Error(reason);
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.find((a) => isSpecialUse(a.address));
      if (!addresses.length || (bad && !allowPrivate)) {
        return callback(Object.assign(new Error(`${hostname} resolves to ${bad?.address ?? 'nothing'}, a non-public address`), { code: 'ESPECIALUSE' }), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  return {
    enabled,
    allowFetch(clientId) {
      const host = URL.parse(clientId)?.hostname.toLowerCase();
      if (!host) return false;
      if (allowedHosts.size && !allowedHosts.has(host)) {
        refuse(clientId, `host ${host} is not in oauth.client_id_metadata_documents.allowed_hosts`);
        return false;
      }
      return true;
    },
    fetch(input, init = {}) {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const href = url.href;
      const known = refused.get(href);
      if (known && known.until > Date.now()) return Promise.reject(new Error(known.reason));
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (url.protocol !== 'https:') return Promise.reject(refuse(href, 'not an https URL'));
      if (isIP(host) && isSpecialUse(host) && !allowPrivate) return Promise.reject(refuse(href, `${host} is a non-public address`));
      return new Promise<Response>((done, fail) => {
        let settled = false;
        const reject = (reason: string) => {
          if (settled) return;
          settled = true;
          fail(refuse(href, reason));
        };
        const signal = AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), ...(init.signal ? [init.signal] : [])]);
        const req = https.request({
          host, port: url.port || 443, path: `${url.pathname}${url.search}`, method: 'GET', agent: false, lookup, signal,
          ...(ca && { ca }), ...(!isIP(host) && { servername: host }),
          headers: { accept: 'application/json', 'user-agent': 'fastsvc' },
        });
        req.on('error', (e) => reject(signal.aborted ? `no complete answer within ${TIMEOUT_MS} ms` : e.message));
        req.on('response', (res) => {
          const status = res.statusCode ?? 502;
          if (status !== 200) {
            res.destroy();
            settled = true;
            refuse(href, `answered ${status}${res.headers.location ? ' (redirects are not followed)' : ''}`);
            return done(new Response(null, { status: status >= 200 && status <= 599 && ![204, 205, 304].includes(status) ? status : 502 }));
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BYTES) {
              res.destroy();
              return reject(`larger than ${MAX_BYTES} bytes`);
            }
            chunks.push(c);
          });
          res.on('error', (e) => reject(signal.aborted ? `no complete answer within ${TIMEOUT_MS} ms` : e.message));
          res.on('end', () => {
            if (settled) return;
            settled = true;
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
            done(new Response(Buffer.concat(chunks), { status, headers }));
          });
        });
        req.end();
      });
    },
  };
}

/** The host that publishes a metadata-document client's identity, or undefined for other client ids. */
export function cimdHost(clientId: string): string | undefined {
  const u = /^https:\/\//i.test(clientId) ? URL.parse(clientId) : null;
  return u?.host || undefined;
}
