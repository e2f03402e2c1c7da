// The jwt-bearer grant (RFC 7523) on oidc-provider's token endpoint, for ID-JAGs
// (id-jag.ts decides what an assertion grants). Guarantees: only clients an
// enterprise issuer allows have the grant type (oidc-engine.ts adds it to them); the
// DPoP proof, when one is sent or oauth.dpop is required, is checked first (so a bad
// proof does not use the assertion up) and binds the token to its key; each success
// saves a grant for (subject, client) living as long as its access token, and issues
// an opaque access token whose audience is this server's origin, whose scope is what
// the verifier granted and which records the identity provider (extra.idp) and the
// mapped claims; no refresh token is issued (the client presents a fresh ID-JAG).

import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { SvcError } from '../../errors.js';
import type { DpopVerifier } from '../dpop.js';
import { JWT_BEARER, type IdJagVerifier } from './id-jag.js';

export function registerIdJagGrant(provider: Provider, o: { verifier: IdJagVerifier; audience: string; ttl: number; dpop?: DpopVerifier }): void {
  const handler = async (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc.client!;
    const params = ctx.oidc.params as Record<string, string | string[] | undefined>;
    const jkt = await tokenEndpointProof(ctx, o.dpop);
    const id = await o.verifier.verify({
      assertion: typeof params.assertion === 'string' ? params.assertion : '',
      clientId: client.clientId,
      scope: typeof params.scope === 'string' ? params.scope : undefined,
      resource: params.resource,
    });
    const scope = id.scopes.join(' ');
    // BaseToken options: a grant that lives as long as its one access token.
    const grant = new provider.Grant({ accountId: id.sub, clientId: client.clientId, expiresIn: o.ttl } as ConstructorParameters<typeof provider.Grant>[0]);
    grant.addResourceScope(o.audience, scope);
    const grantId = await grant.save();
    const at = new provider.AccessToken({
      accountId: id.sub, client, grantId, gty: JWT_BEARER, scope, expiresIn: o.ttl,
      extra: { idp: id.idp, ...(Object.keys(id.claims).length && { claims: id.claims }) },
    });
    at.setAudience(o.audience);
    if (jkt) at.setThumbprint('jkt', jkt);
    const value = await at.save();
    ctx.body = { access_token: value, token_type: at.tokenType, expires_in: at.expiration, scope };
  };
  provider.registerGrantType(JWT_BEARER, handler, ['assertion', 'scope', 'resource'], ['resource']);
}

async function tokenEndpointProof(ctx: KoaContextWithOIDC, dpop: DpopVerifier | undefined): Promise<string | undefined> {
  const proof = ctx.get('DPoP');
  if (!dpop || (!proof && dpop.mode !== 'required')) return undefined;
  try {
    return await dpop.verify(proof || undefined, { method: ctx.method, path: ctx.path });
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    const nonce = e.data?.dpopNonce;
    if (typeof nonce === 'string') ctx.set('DPoP-Nonce', nonce);
    throw new errors.CustomOIDCProviderError(String(e.data?.error ?? 'invalid_dpop_proof'), e.message);
  }
}
