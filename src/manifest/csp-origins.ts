// A view's CSP domains (MCP Apps _meta.ui.csp) checked as origins. Guarantees: pure; an entry
// passes only when it is exactly an origin — scheme, host and optional port, written as the URL
// standard serialises it (lower case, no default port) — with no path (not even "/"), query,
// fragment or credentials; the scheme is https or http (connect_domains also wss and ws); a
// wildcard is allowed only where the extension allows one (resource_domains) and only as a whole
// leftmost label over a name of at least two labels (https://*.example.com).

export const CSP_LISTS = ['connect_domains', 'resource_domains', 'frame_domains', 'base_uri_domains'] as const;
export type CspList = (typeof CSP_LISTS)[number];

const SCHEMES: Record<CspList, readonly string[]> = {
  connect_domains: ['https:', 'http:', 'wss:', 'ws:'],
  resource_domains: ['https:', 'http:'],
  frame_domains: ['https:', 'http:'],
  base_uri_domains: ['https:', 'http:'],
};

/** Why `entry` is not an acceptable origin for `list`, or undefined when it is. */
export function originProblem(entry: string, list: CspList): string | undefined {
  const wild = /^[a-z]+:\/\/\*\./i.test(entry);
  if (wild && list !== 'resource_domains') return `${entry}: a wildcard is allowed only in resource_domains (the extension allows subdomain wildcards there only)`;
  if (!wild && entry.includes('*')) return `${entry}: a wildcard may only be the whole leftmost label, as in https://*.example.com`;
  let u: URL;
  try {
    u = new URL(wild ? entry.replace('*.', 'wildcard.') : entry);
  } catch {
    return `${entry} is not an origin (scheme://host[:port])`;
  }
  if (!SCHEMES[list].includes(u.protocol)) return `${entry}: the scheme must be ${SCHEMES[list].map((s) => s.slice(0, -1)).join(', ')}`;
  if (u.username || u.password) return `${entry}: an origin carries no credentials`;
  if (wild && !/^wildcard\.[^.]+\.[^.]+/.test(u.hostname)) return `${entry}: a wildcard needs a name of at least two labels under it (https://*.example.com)`;
  const origin = wild ? u.origin.replace('//wildcard.', '//*.') : u.origin;
  if (origin === entry) return undefined;
  if (u.pathname !== '/' || u.search || u.hash || entry.endsWith('/')) return `${entry}: give the origin only (${origin}), no path, query or fragment`;
  return `${entry}: write it as ${origin}`;
}
