// The two ways an external token is not accepted, as SvcErrors the auth gate passes on.
// Guarantees: a token that fails a check is 401 UNAUTHENTICATED (invalid_token) whose
// `reason` — for the audit log and the server log only, never the answer — names the check;
// an issuer that cannot be asked is 503 IDP_UNAVAILABLE whose `reason` names what could
// not be had; messages never contain a token.

import { SvcError } from '../../errors.js';

/** The check a token failed: each is one audit reason. */
export type TokenCheck =
  | 'token_size' | 'token_malformed' | 'token_alg' | 'token_typ' | 'token_kid' | 'token_signature'
  | 'token_iss' | 'token_aud' | 'token_exp' | 'token_nbf' | 'token_iat' | 'token_sub' | 'token_claims'
  | 'issuer_not_accepted' | 'introspection_inactive' | 'introspection_iss';

/** What an issuer could not give: each is one audit reason. */
export type Unavailable = 'discovery_unavailable' | 'jwks_unavailable' | 'jwks_invalid' | 'jwks_private_key' | 'introspection_unavailable';

export function rejected(check: TokenCheck, message: string): SvcError {
  return new SvcError('UNAUTHENTICATED', message, { data: { error: 'invalid_token' }, reason: check });
}

export function unavailable(reason: Unavailable, message: string): SvcError {
  return new SvcError('IDP_UNAVAILABLE', message, { reason });
}

/** A failure to get something from an issuer, with the reason it will be reported under. */
export class IssuerFailure extends Error {
  constructor(readonly reason: Unavailable, message: string) {
    super(message);
    this.name = 'IssuerFailure';
  }
}
