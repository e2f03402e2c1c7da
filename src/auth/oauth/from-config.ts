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
import { profileScopes, type ResolvedConfig } from '../../config.js';
import { SvcError } from '../../errors.js';
import type { OAuthConfig } from '../../manifest/types.gen.js';
import type { OAuthProvider } from './provider.js';
import { InMemoryOAuthProvider } from './providers/memory.js';
import { SQLiteOAuthProvider } from './providers/sqlite.js';
import { PostgresOAuthProvider } from './providers/postgres.js';
import type { OAuthRateLimits, OAuthServer } from './server.js';

export async function oauthServerFromConfig(cfg: ResolvedConfig, o: { baseUrl: string; logger: Logger; name: string; caller?: (req: IncomingMessage) => Caller }): Promise<OAuthServer | undefined> {
  if (!cfg.oauth?.enabled) return undefined;
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const issuer = cfg.oauth.issuer ?? baseUrl;
  if (cfg.profile.issuer !== undefined && cfg.profile.issuer !== issuer) {
    throw new SvcError('OAUTH_CONFIG', `profile.issuer ${cfg.profile.issuer} differs from the authorization server's issuer ${issuer}; clients would refuse its metadata`, { path: '/profile/issuer' });
  }
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
      scopes: profileScopes(cfg.profile),
      provider,
      logger: o.logger,
      manifestDir: cfg.base_dir,
      name: o.name,
      limits: rateLimits(cfg.oauth),
      caller: o.caller,
    });
  } catch (e) {
    await provider.close();
    throw e;
  }
}

export async function providerFromConfig(oauth: OAuthConfig, baseDir: string, logger?: Logger): Promise<OAuthProvider> {
  const p = oauth.provider ?? { type: 'memory' };
  if (p.type === 'memory') return new InMemoryOAuthProvider();
  if (p.type === 'postgres') {
    if (!p.url || !p.key_secret) throw new SvcError('OAUTH_CONFIG', 'oauth.provider.type postgres needs url and key_secret', { path: '/oauth/provider' });
    const log = logger?.child({ module: 'oauth.postgres' });
    return PostgresOAuthProvider.open({
      url: p.url,
      poolSize: p.pool_size ?? 10,
      statementTimeoutMs: p.statement_timeout_ms ?? 5000,
      keySecret: p.key_secret,
      onError: (err, what) => log?.warn({ event: 'oauth.store_error', err: err.message }, what),
    });
  }
  if (!p.path) throw new SvcError('OAUTH_CONFIG', 'oauth.provider.type sqlite needs a path', { path: '/oauth/provider/path' });
  return new SQLiteOAuthProvider(resolve(baseDir, p.path));
}

function rateLimits(oauth: OAuthConfig): Partial<OAuthRateLimits> {
  const r = oauth.rate_limits ?? {};
  const bucket = (b: { burst?: number; per_minute?: number } | undefined) => (b ? { burst: b.burst ?? 1, perMinute: b.per_minute ?? 1 } : undefined);
  const out: Partial<OAuthRateLimits> = {};
  if (r.token) out.token = bucket(r.token);
  if (r.register) out.register = bucket(r.register);
  if (r.login_per_ip) out.loginPerIp = bucket(r.login_per_ip);
  if (r.login_per_user) out.loginPerUser = bucket(r.login_per_user);
  return out;
}
