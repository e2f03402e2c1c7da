// The OAuthServer a SvcServerConfig asks for (what createApp calls). Guarantees:
// undefined unless oauth.enabled; the provider is config.oauth_provider when the code
// API gives one, else built from oauth.provider (memory, sqlite at its path, or postgres
// at its url, migrated before the server starts); the rate
// limits are oauth.rate_limits (defaults in the schema); the
// issuer is oauth.issuer, else the base URL, and profile.issuer may not contradict it;
// oidc-provider is not even loaded when OAuth is off.

import { resolve } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Caller } from '../../http/forwarded.js';
import { profileScopes, type ResolvedConfig, type ResolvedOAuth } from '../../core/config.js';
import { SvcError } from '../../errors.js';
import type { OAuthProvider } from '../../core/oauth-provider.js';
import { InMemoryOAuthProvider } from './providers/memory-provider.js';
import { SQLiteOAuthProvider } from './providers/sqlite-provider.js';
import { PostgresOAuthProvider } from './providers/postgres-provider.js';
import type { OAuthServer } from './server.js';
import { profileIssuerProblem } from './oauth-checks.js';
import type { Observer } from '../../observe/observer.js';
import type { EndpointResources } from '../resource-metadata.js';

export async function oauthServerFromConfig(cfg: ResolvedConfig, o: { baseUrl: string; logger: Logger; name: string; caller: (req: IncomingMessage) => Caller; observer?: Observer; endpoints?: EndpointResources }): Promise<OAuthServer | undefined> {
  if (!cfg.oauth?.enabled) return undefined;
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const issuer = cfg.oauth.issuer ?? baseUrl;
  const mismatch = profileIssuerProblem(cfg.profile.issuer, issuer);
  if (mismatch) throw new SvcError('OAUTH_CONFIG', mismatch, { path: '/profile/issuer' });
  const provider = cfg.oauth_provider ?? await providerFromConfig(cfg.oauth, cfg.base_dir, o.logger);
  try {
    // Loaded only when OAuth is on: oidc-provider prints a runtime warning at import on Node 20.
    const { createOAuthServer } = await import('./server.js');
    return await createOAuthServer({
      oauth: cfg.oauth,
      profile: cfg.profile,
      issuer,
      baseUrl,
      protectedRoutes: cfg.routes.protected ?? [],
      endpoints: o.endpoints,
      scopes: profileScopes(cfg.profile),
      provider,
      logger: o.logger,
      manifestDir: cfg.base_dir,
      name: o.name,
      caller: o.caller,
      observer: o.observer,
    });
  } catch (e) {
    await provider.close();
    throw e;
  }
}

export async function providerFromConfig(oauth: ResolvedOAuth, baseDir: string, logger?: Logger): Promise<OAuthProvider> {
  const p = oauth.provider;
  if (p.type === 'memory') return new InMemoryOAuthProvider();
  if (p.type === 'postgres') {
    if (!p.url || !p.key_secret) throw new SvcError('OAUTH_CONFIG', 'oauth.provider.type postgres needs url and key_secret', { path: '/oauth/provider' });
    const log = logger?.child({ module: 'oauth.postgres' });
    return PostgresOAuthProvider.open({
      url: p.url,
      // pool_size and statement_timeout_ms: the schema's defaults are already filled in (resolveConfig).
      poolSize: p.pool_size!,
      statementTimeoutMs: p.statement_timeout_ms!,
      keySecret: p.key_secret,
      onError: (err, what) => log?.warn({ event: 'oauth.store_error', err: err.message }, what),
    });
  }
  if (!p.path) throw new SvcError('OAUTH_CONFIG', 'oauth.provider.type sqlite needs a path', { path: '/oauth/provider/path' });
  return new SQLiteOAuthProvider(resolve(baseDir, p.path), { durability: p.durability });
}
