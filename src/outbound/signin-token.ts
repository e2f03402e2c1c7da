// auth.upstream_login: the signed-in person's access token at the identity provider they signed
// in through (oauth.login.mode upstream). Guarantees: only a principal whose grant came from that
// very provider gets one (caller-credentials.ts, recorded by the OAuth server); anyone else —
// a static token, an external issuer's token, a person of another provider — is refused with
// CALLER_CREDENTIAL_MISSING; the token is the grant's, refreshed first when it is about to
// expire and stored sealed again (auth/signin/grants.ts, one refresh per grant at a time),
// and what prevents it is UPSTREAM_TOKEN_UNAVAILABLE; nothing is cached here.

import type { OutboundUpstreamLogin } from '../core/manifest-types.gen.js';
import { SvcError } from '../errors.js';
import { callerCredential } from './caller-credentials.js';
import type { OutboundCredential } from './credential.js';

export function signInToken(spec: OutboundUpstreamLogin): OutboundCredential {
  return {
    async header(caller) {
      const upstream = caller.kind === 'oauth' ? callerCredential(caller)?.signIn : undefined;
      if (upstream?.name !== spec.upstream) {
        const reason = upstream ? 'other_upstream' : 'no_upstream_login';
        throw new SvcError('CALLER_CREDENTIAL_MISSING', `this tool calls its backend with the caller's token at ${spec.upstream}, and this caller did not sign in through ${spec.upstream}`, { data: { reason }, reason });
      }
      return ['authorization', `Bearer ${await upstream.accessToken()}`];
    },
  };
}
