// auth.token_exchange: the caller's own token from an external issuer, exchanged (RFC 8693) for
// a token with the backend's audience. Guarantees: only a principal an external issuer vouched
// for has a subject token (caller-credentials.ts); anyone else is refused with
// CALLER_CREDENTIAL_MISSING before any request; the subject token goes only to the manifest's
// token_url, the exchanged token only to the backend; exchanged tokens are cached per digest of
// the subject token (never the token itself as a key), at most MAX_EXCHANGED, each until shortly
// before it — or the subject token, whichever is first — expires; concurrent calls with the same
// subject token share one exchange; an exchanged token the backend refused (401) is forgotten.

import { createHash } from 'node:crypto';
import type { OutboundTokenExchange } from '../core/manifest-types.gen.js';
import type { Principal } from '../core/types.js';
import { SvcError } from '../errors.js';
import { callerCredential } from './caller-credentials.js';
import type { OutboundCredential } from './credential.js';
import { FetchedTokens } from './fetched-tokens.js';
import { bearerOf, requestToken, type TokenEndpoint } from './token-endpoint.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
/** Exchanged tokens kept at most, per backend. */
export const MAX_EXCHANGED = 10_000;

type Spec = OutboundTokenExchange & TokenEndpoint & { requested_token_type: string };

export function tokenExchange(spec: Spec, secret: string, cache = new FetchedTokens<string>(MAX_EXCHANGED)): OutboundCredential {
  const fixed: Record<string, string> = {
    subject_token_type: ACCESS_TOKEN,
    requested_token_type: spec.requested_token_type,
    ...(spec.audience && { audience: spec.audience }),
    ...(spec.resource && { resource: spec.resource }),
    ...(spec.scopes?.length && { scope: spec.scopes.join(' ') }),
  };
  const digestOf = (subject: string) => createHash('sha256').update(subject).digest('base64url');
  return {
    async header(caller, signal) {
      const subject = subjectToken(caller);
      const digest = digestOf(subject);
      const fetch = async () => {
        const f = await requestToken(spec, secret, TOKEN_EXCHANGE, { ...fixed, subject_token: subject });
        return caller.expiresAt === undefined ? f : { ...f, expiresAt: Math.min(f.expiresAt, caller.expiresAt * 1000) };
      };
      return ['authorization', `Bearer ${await cache.get(digest, fetch, signal)}`];
    },
    refused(caller, sent) {
      cache.forget(digestOf(subjectToken(caller)), bearerOf(sent));
    },
  };
}

function subjectToken(p: Principal): string {
  const token = p.kind === 'external' ? callerCredential(p)?.subjectToken : undefined;
  if (token === undefined) {
    throw new SvcError('CALLER_CREDENTIAL_MISSING', 'this tool exchanges the caller\'s token from an external identity provider, and this caller did not present one', { data: { reason: 'no_external_token' }, reason: 'no_external_token' });
  }
  return token;
}
