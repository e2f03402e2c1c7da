// The authorization server's discovery document. Guarantees: RFC 8414 metadata built from
// the configured issuer only (never from the request's Host header). The protected-resource
// metadata (RFC 9728) is auth/resource-metadata.ts's.

import type { AuthProfile } from '../../core/manifest-types.gen.js';

export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

export function authorizationServerMetadata(o: { issuer: string; profile: AuthProfile; registration: boolean; cimd: boolean; scopes: readonly string[] }): Record<string, unknown> {
  const { issuer } = o;
  return {
    issuer,
    authorization_endpoint: o.profile.authorization_url ?? `${issuer}/authorize`,
    token_endpoint: o.profile.token_url ?? `${issuer}/token`,
    ...(o.registration && { registration_endpoint: `${issuer}/register` }),
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: AUTH_METHODS,
    scopes_supported: o.scopes,
    authorization_response_iss_parameter_supported: true,
    ...(o.cimd && { client_id_metadata_document_supported: true }),
  };
}
