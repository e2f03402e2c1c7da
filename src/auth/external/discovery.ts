// An external issuer's metadata: RFC 8414 authorization-server metadata (the well-known path
// inserted before the issuer's path, as MCP clients look it up), else OpenID Connect
// discovery (appended to the issuer). Guarantees: a document is used only when its `issuer`
// is exactly the configured one (mix-up defence, RFC 8414 §3.3); a 4xx moves on to the next
// form, anything else that fails is a failure; the endpoints taken from it are https (http
// only on a loopback host), else the document is refused; bounded like every outbound call.

import { fetchJson, FetchFailure } from './fetch-json.js';
import { insecureUrl } from './issuer-checks.js';

const MAX_METADATA = 256 * 1024;

export interface IssuerMetadata {
  jwks_uri?: string;
  introspection_endpoint?: string;
}

/** The well-known URLs tried, in order. */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, '');
  return [`${u.origin}/.well-known/oauth-authorization-server${path}`, `${u.origin}${path}/.well-known/openid-configuration`];
}

export async function discover(issuer: string): Promise<IssuerMetadata> {
  let last: FetchFailure | undefined;
  for (const url of metadataUrls(issuer)) {
    let doc: Record<string, unknown>;
    try {
      doc = (await fetchJson(url, { maxBytes: MAX_METADATA })).json;
    } catch (e) {
      if (e instanceof FetchFailure && e.status !== undefined && e.status >= 400 && e.status < 500) {
        last = e;
        continue;
      }
      throw e;
    }
    if (doc.issuer !== issuer) throw new FetchFailure(`${url}: its issuer is ${JSON.stringify(doc.issuer)}, not ${issuer}`);
    const out: IssuerMetadata = {};
    for (const key of ['jwks_uri', 'introspection_endpoint'] as const) {
      const v = doc[key];
      if (v === undefined) continue;
      const why = typeof v === 'string' ? insecureUrl(v) : 'is not a string';
      if (why) throw new FetchFailure(`${url}: ${key} ${why}`);
      out[key] = v as string;
    }
    return out;
  }
  throw last ?? new FetchFailure(`${issuer}: no metadata`);
}
