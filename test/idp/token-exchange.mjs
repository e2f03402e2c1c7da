// RFC 8693 token exchange on the corporate IdP's token endpoint, registered with oidc-provider's
// registerGrantType (the provider's own extension point, as fastsvc's jwt-bearer grant is).
// Guarantees: only a client allowed the grant type may use it (oidc-provider checks); the
// subject_token must be an access token this IdP issued and that is still valid — a JWT verified
// against the IdP's current keys (iss, exp, typ at+jwt), or an opaque one found in its store —
// and subject_token_type must say access_token; the new token is for exactly one target (the
// `resource`, else the `audience`), carries the subject's `sub`, the exchanging client as
// client_id and, as RFC 8693 section 4.1 says, `act: { sub: client_id }` (idp-provider.mjs's
// extraTokenClaims, which sets every token's extra claims); its scope is what was
// asked (the registered resource's scopes cap it) and its format and lifetime are the target
// resource's, as for any other token of this IdP. Each exchange is one `token_exchange` log line
// (client, subject, target; never a token).

import { createLocalJWKSet, jwtVerify } from 'jose';
import { errors } from 'oidc-provider';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const PRIVATE = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi']);

/** d: { issuer, keys, serverInfo(ctx, indicator) → the resource server info getResourceServerInfo gives, log }. */
export function registerTokenExchange(provider, d) {
  const jwks = () => createLocalJWKSet({ keys: d.keys.privateJwks().keys.map((k) => Object.fromEntries(Object.entries(k).filter(([n]) => !PRIVATE.has(n)))) });

  async function subjectOf(token) {
    if (token.split('.').length === 3) {
      try {
        const { payload } = await jwtVerify(token, jwks(), { issuer: d.issuer, typ: 'at+jwt' });
        return typeof payload.sub === 'string' ? { sub: payload.sub } : undefined;
      } catch {
        return undefined;
      }
    }
    const at = await provider.AccessToken.find(token);
    return at && !at.isExpired && at.accountId ? { sub: at.accountId } : undefined;
  }

  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const { client, params } = ctx.oidc;
    if (params.subject_token_type !== ACCESS_TOKEN) throw new errors.InvalidRequest(`subject_token_type must be ${ACCESS_TOKEN}`);
    const subject = await subjectOf(String(params.subject_token ?? ''));
    if (!subject) throw new errors.InvalidGrant('subject_token is not a valid access token of this issuer');
    const target = params.resource ?? params.audience;
    if (typeof target !== 'string' || !URL.canParse(target)) throw new errors.InvalidTarget('name one target: resource or audience, an absolute URI');
    const info = await d.serverInfo(ctx, target);
    const asked = String(params.scope ?? '').split(' ').filter(Boolean);
    const allowed = new Set(info.scope.split(' '));
    const scope = asked.filter((s) => allowed.has(s)).join(' ');
    const grant = new provider.Grant({ accountId: subject.sub, clientId: client.clientId });
    grant.addResourceScope(target, scope);
    const grantId = await grant.save();
    const at = new provider.AccessToken({ accountId: subject.sub, client, grantId, gty: TOKEN_EXCHANGE, scope });
    at.resourceServer = new provider.ResourceServer(target, { ...info, scope });
    at.setAudience(target);
    const value = await at.save();
    d.log({ event: 'token_exchange', client_id: client.clientId, sub: subject.sub, target });
    ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN, token_type: 'Bearer', expires_in: at.expiration, ...(scope && { scope }) };
  }, ['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'requested_token_type', 'audience', 'resource', 'scope'], ['audience', 'resource']);
}
