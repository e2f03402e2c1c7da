// auth.client_credentials: fastsvc's own token for a backend (RFC 6749 section 4.4), the same
// whoever calls. Guarantees: one token at a time, cached until shortly before it expires and
// then fetched again (fetched-tokens.ts); concurrent calls without a usable token share one token
// request; a failed request fails the calls waiting for it (OUTBOUND_AUTH_FAILED) and the next
// call asks again; a token the backend refused (401) is forgotten and a new one asked for; the request carries scope, resource and audience as the manifest gives them.

import type { OutboundClientCredentials } from '../core/manifest-types.gen.js';
import type { OutboundCredential } from './credential.js';
import { FetchedTokens } from './fetched-tokens.js';
import { bearerOf, requestToken, type TokenEndpoint } from './token-endpoint.js';

export function clientCredentials(spec: OutboundClientCredentials & TokenEndpoint, secret: string, cache = new FetchedTokens<''>(1)): OutboundCredential {
  const params: Record<string, string> = {
    ...(spec.scopes?.length && { scope: spec.scopes.join(' ') }),
    ...(spec.resource && { resource: spec.resource }),
    ...(spec.audience && { audience: spec.audience }),
  };
  const fetch = () => requestToken(spec, secret, 'client_credentials', params);
  return {
    async header(_caller, signal) {
      return ['authorization', `Bearer ${await cache.get('', fetch, signal)}`];
    },
    refused(_caller, sent) {
      cache.forget('', bearerOf(sent));
    },
  };
}
