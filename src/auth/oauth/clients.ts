// The clients the authorization server (server.ts) knows. Guarantees: every oauth.clients entry is a
// static client of oidc-provider allowed the authorization code and refresh token grants (oidc-engine.ts adds
// jwt-bearer for the clients an enterprise issuer allows, and DPoP binding when oauth.dpop is required),
// with its secret from client_secret or client_secret_file (read here, at start-up) and
// client_secret_basic, or none and a public client; its scopes default to profile.scopes, and one that
// profile.scopes does not declare refuses start-up (SCOPE_UNDECLARED); a client whose redirect URIs are
// all loopback http ones is a native app (RFC 8252: any port matches). Any other client_id is dynamic:
// registered at /register while oauth.registration.enabled, or described by a Client ID Metadata
// Document (cimd.ts, which oidc-engine.ts hands oidc-provider).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ClientMetadata } from 'oidc-provider';
import type { OAuthConfig } from '../../core/manifest-types.gen.js';
import type { ResolvedOAuth } from '../../core/config.js';
import { SvcError } from '../../errors.js';
import { isLoopbackHost } from '../../util/loopback.js';

export interface Clients {
  /** oauth.clients as oidc-provider's static clients (oidc-engine.ts may add a grant type or DPoP binding). */
  readonly metadata: ClientMetadata[];
  readonly staticIds: ReadonlySet<string>;
  /** Whether a client_id is not one of oauth.clients (registered, or a metadata document's URL). */
  isDynamic(clientId: string): boolean;
  /** oauth.registration.enabled: /register is served and advertised. */
  readonly registration: boolean;
}

export function createClients(oauth: ResolvedOAuth, manifestDir: string, scopes: readonly string[]): Clients {
  const scopeSet = new Set(scopes);
  const metadata = (oauth.clients ?? []).map((c) => staticClient(c, manifestDir, scopes));
  for (const c of metadata) {
    const bad = String(c.scope).split(' ').filter((s) => !scopeSet.has(s));
    if (bad.length) throw new SvcError('SCOPE_UNDECLARED', `client ${c.client_id} lists ${bad.join(', ')}, which profile.scopes does not declare`, { path: '/oauth/clients' });
  }
  const staticIds = new Set(metadata.map((c) => c.client_id));
  return { metadata, staticIds, isDynamic: (clientId: string) => !staticIds.has(clientId), registration: oauth.registration.enabled };
}

function staticClient(c: NonNullable<OAuthConfig['clients']>[number], dir: string, scopes: readonly string[]): ClientMetadata {
  const secret = c.client_secret ?? (c.client_secret_file ? readFileSync(resolve(dir, c.client_secret_file), 'utf8').trim() : undefined);
  const native = c.redirect_uris.every((u) => {
    const p = URL.parse(u);
    return p?.protocol === 'http:' && isLoopbackHost(p.hostname);
  });
  return {
    client_id: c.client_id,
    ...(c.client_name && { client_name: c.client_name }),
    redirect_uris: c.redirect_uris,
    scope: (c.scopes ?? scopes).join(' '),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // Loopback http redirect URIs are a native app's (RFC 8252): any port matches.
    application_type: native ? 'native' : 'web',
    ...(secret ? { client_secret: secret, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
  };
}
