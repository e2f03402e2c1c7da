// The two ways an external token is not accepted, as SvcErrors the auth gate passes on.
// Guarantees: a token that fails a check is 401 UNAUTHENTICATED (invalid_token) whose
// `reason` (the check) and `detail` (what failed, in words) are for the audit log and the
// server log only, never the answer: every such 401 carries the same message, the built-in
// server's for an unknown token, so the answer does not tell which check failed; an issuer that
// cannot be asked is 503 IDP_UNAVAILABLE whose `reason` names what could not be had, its
// `detail` why, and whose message is the same for every cause (no endpoint, no upstream error
// text); nothing here contains a token.

import { SvcError } from '../../errors.js';
import { TOKEN_REFUSED } from '../gate.js';

/** The check a token failed: each is one audit reason. */
export type TokenCheck =
  | 'token_size' | 'token_malformed' | 'token_alg' | 'token_typ' | 'token_kid' | 'token_signature'
  | 'token_iss' | 'token_aud' | 'token_exp' | 'token_nbf' | 'token_iat' | 'token_sub' | 'token_claims'
  | 'issuer_not_accepted' | 'introspection_inactive' | 'introspection_iss';

/** What an issuer could not give: each is one audit reason. */
export type Unavailable = 'discovery_unavailable' | 'jwks_unavailable' | 'jwks_invalid' | 'jwks_private_key' | 'introspection_unavailable';

/** The message of every 503 for an issuer that cannot be asked. */
export const ISSUER_UNAVAILABLE = 'the identity provider that issued the token cannot be asked now: retry later';

export function rejected(check: TokenCheck, detail: string): SvcError {
  return new SvcError('UNAUTHENTICATED', TOKEN_REFUSED, { data: { error: 'invalid_token' }, reason: check, detail });
}

export function unavailable(reason: Unavailable, detail: string): SvcError {
  return new SvcError('IDP_UNAVAILABLE', ISSUER_UNAVAILABLE, { reason, detail });
}

/** A failure to get something from an issuer, with the reason it will be reported under. */
export class IssuerFailure extends Error {
  constructor(readonly reason: Unavailable, message: string) {
    super(message);
    this.name = 'IssuerFailure';
  }
}
