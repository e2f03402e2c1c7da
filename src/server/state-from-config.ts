// The manifest's `state` (what createApp opens). Guarantees: undefined without `state`; with it, a
// PostgreSQL store opened by PostgresOAuthProvider.openState() — the same pool, migrations and LISTEN
// connection the postgres OAuth provider uses, without its keys — migrated and listening before the
// server starts (or STORE_UNAVAILABLE); refused (STATE_CONFIG) beside an OAuth provider on PostgreSQL,
// whose database already holds the state replicas share. The caller closes it.

import type { ResolvedConfig } from '../core/config.js';
import type { OAuthProvider } from '../core/oauth-provider.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { PostgresOAuthProvider } from '../auth/oauth/providers/postgres-provider.js';

export async function stateStoreFromConfig(cfg: ResolvedConfig, oauthProvider: OAuthProvider | undefined, logger: Logger): Promise<PostgresOAuthProvider | undefined> {
  const s = cfg.state;
  if (!s) return undefined;
  if (oauthProvider instanceof PostgresOAuthProvider) {
    throw new SvcError('STATE_CONFIG', 'state and an OAuth provider on PostgreSQL both name a database for the state replicas share; the provider\'s already holds it: remove state', { path: '/state' });
  }
  const log = logger.child({ module: 'state.postgres' });
  return PostgresOAuthProvider.openState({
    url: s.url,
    // pool_size and statement_timeout_ms: the schema's defaults are already filled in (resolveConfig).
    poolSize: s.pool_size,
    statementTimeoutMs: s.statement_timeout_ms,
    onError: (err, what) => log.warn({ event: 'state.store_error', err: err.message }, what),
  });
}
