// What the authorization server's engine (oidc-engine.ts) does, told from oidc-provider's own events.
// Guarantees: refused token requests, revoked grants, server errors and each endpoint's refusals are
// logged (oauth.* events; a refused authorization names the client id and redirect URI it carried,
// bounded); token issuance, refresh, revocation, registration and refused grants reach
// the Observer as audit events and metrics, with a grant or token id written only as a hash.

import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { RequestScope } from '../../core/request-scope.js';
import { hashId } from '../../observe/audit.js';
import { shownValue } from './pages.js';
import type { Observer } from '../../observe/observer.js';

export function logEvents(provider: Provider, log: Logger): void {
  provider.on('grant.error', (ctx, err) => {
    const e = err as { error?: string; error_detail?: string };
    log.warn({ event: 'oauth.grant_error', error: e.error, detail: e.error_detail, client_id: ctx.oidc?.client?.clientId, grant_type: ctx.oidc?.params?.grant_type },
      `token request refused: ${e.error}${e.error_detail ? ` (${e.error_detail})` : ''}`);
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    log.info({ event: 'oauth.grant_revoked', grant_id: grantId, client_id: ctx.oidc?.client?.clientId, route: ctx.oidc?.route }, 'grant revoked');
  });
  provider.on('server_error', (ctx, err) => {
    log.error({ event: 'oauth.server_error', err, route: ctx.oidc?.route }, 'authorization server error');
  });
  for (const ev of ['authorization.error', 'registration_create.error', 'revocation.error', 'introspection.error', 'jwks.error'] as const) {
    provider.on(ev as 'authorization.error', (ctx, err) => {
      const e = err as { error?: string; error_detail?: string; error_description?: string };
      // What the request carried, where that is what went wrong (bounded): the client id no client has, the redirect URI the client did not register.
      const params = ctx.oidc?.params;
      const redirectUri = e.error === 'invalid_redirect_uri' ? params?.redirect_uri : undefined;
      log.info({
        event: `oauth.${ev}`, error: e.error, detail: e.error_detail ?? e.error_description,
        client_id: ctx.oidc?.client?.clientId ?? (typeof params?.client_id === 'string' ? shownValue(params.client_id) : undefined),
        ...(typeof redirectUri === 'string' && { redirect_uri: shownValue(redirectUri) }),
      }, `${ev}: ${e.error}`);
    });
  }
}

/** Audit events and token counts from oidc-provider's own events; a grant or token id is written only as a hash. */
export function observeEvents(provider: Provider, obs: Observer, scopeFor: (req: IncomingMessage) => RequestScope): void {
  const scope = (ctx: { req: IncomingMessage }) => (obs.scoped() ? scopeFor(ctx.req) : undefined);
  const who = (clientId?: string, sub?: string) => (sub || clientId ? { ...(sub && { sub }), ...(clientId && { client_id: clientId }) } : {});
  provider.on('grant.success', (ctx) => {
    const gt = String(ctx.oidc?.params?.grant_type ?? '');
    const at = ctx.oidc?.entities?.AccessToken as { grantId?: string; accountId?: string; scope?: string } | undefined;
    obs.oauth({
      decision: gt === 'refresh_token' ? 'refresh' : 'issue', reason: gt || 'grant', transport: 'oauth', scope: scope(ctx),
      detail: { ...who(ctx.oidc?.client?.clientId, at?.accountId), token_kind: 'oauth', ...(at?.grantId && { token_id: hashId(at.grantId) }), scopes_granted: (at?.scope ?? '').split(' ').filter(Boolean) },
    });
  });
  provider.on('grant.error', (ctx, err) => {
    obs.oauth({ decision: 'deny', reason: String((err as { error?: string }).error ?? 'grant_error'), transport: 'oauth', scope: scope(ctx), detail: who(ctx.oidc?.client?.clientId) });
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    obs.oauth({ decision: 'revoke', reason: `grant_revoked_${ctx.oidc?.route ?? 'server'}`, transport: 'oauth', scope: scope(ctx), detail: { ...who(ctx.oidc?.client?.clientId), token_id: hashId(grantId) } });
  });
  provider.on('registration_create.success', (ctx, client) => {
    obs.oauth({ decision: 'register', reason: 'client_registered', transport: 'oauth', scope: scope(ctx), detail: { client_id: client.clientId } });
  });
  provider.on('registration_create.error', (ctx) => {
    obs.oauth({ decision: 'deny', reason: 'registration_refused', transport: 'oauth', scope: scope(ctx) });
  });
}
