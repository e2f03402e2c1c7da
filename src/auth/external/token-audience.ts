// Whom an external token's audience lets it reach. Guarantees: an `aud` naming one of the issuer's
// configured `audience` values reaches every endpoint (undefined: no restriction); else one naming
// declared endpoints' resources (origin/mcp/NAME) reaches those endpoints only; else it is for no
// one here (null), which the caller refuses as token_aud. The accepted audiences for a JWT's own
// check are the configured ones plus every endpoint's, read from the live policy.

import type { Principal } from '../../core/types.js';
import type { EndpointResources } from '../resource-metadata.js';

/** The audiences a token may carry to be accepted at all. */
export function acceptedAudiences(audiences: readonly string[], endpoints: EndpointResources | undefined): string[] {
  return endpoints ? [...audiences, ...endpoints.audiences()] : [...audiences];
}

/** The endpoints `aud` restricts the token to (undefined: none, every endpoint), or null: not for this server. */
export function audienceReach(aud: unknown, audiences: readonly string[], endpoints: EndpointResources | undefined): readonly string[] | undefined | null {
  const list = [aud].flat().filter((x): x is string => typeof x === 'string');
  if (list.some((x) => audiences.includes(x))) return undefined;
  const names = endpoints ? list.flatMap((x) => {
    const r = endpoints.resolve(x);
    return r?.endpoint ? [r.endpoint] : [];
  }) : [];
  return names.length ? names : null;
}

/** `p` restricted to `endpoints` (when there are any). */
export function restricted(p: Principal, endpoints: readonly string[] | undefined): Principal {
  return endpoints ? Object.freeze({ ...p, endpoints }) : p;
}
