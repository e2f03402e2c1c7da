// SvcServerConfig: how a FastSvc is served — the code API's second argument to
// createApp, and exactly what the YAML loader builds from svc.yaml's server,
// routes, auth, oauth and profile sections. Guarantees: resolveConfig() applies
// the schema's defaults (the schema is the only place defaults live) and rejects
// a config the schema rejects (its own schema entry, definitions/SvcServerConfig,
// sharing the manifest's section definitions), so both doors end in the same object.

import { ManifestError, SvcError } from '../errors.js';
import type { ValidateFunction } from 'ajv';
// Precompiled from definitions/SvcServerConfig by scripts/gen-types.mjs, beside the manifest's.
import { validateConfig as generatedConfigValidator } from './validators.gen.js';
import type { AuditConfig, AuthProfile, BearerAuthConfig, ExternalIssuer, OAuthConfig, Routes, ServerSettings, StateStore, SvcServerConfig as ConfigSections, UpstreamLogin, UpstreamRule } from './manifest-types.gen.js';
import type { OAuthProvider } from './oauth-provider.js';

export type { AuditConfig, AuthProfile, BearerAuthConfig, OAuthConfig, Routes, ServerSettings };

const configValidator = generatedConfigValidator as unknown as ValidateFunction;

/** definitions/SvcServerConfig of the schema, plus the OAuth state store (an object, so not in the schema). */
export type SvcServerConfig = ConfigSections & {
  /** The OAuth state store; default from oauth.provider (InMemoryOAuthProvider or SQLiteOAuthProvider). */
  oauth_provider?: OAuthProvider;
};

type Bucket = { burst: number; per_minute: number };

/** The oauth section with every schema default applied. */
export type ResolvedOAuth = Omit<OAuthConfig, 'login'> & {
  access_token_ttl: number;
  refresh_token_ttl: number;
  code_ttl: number;
  login: { mode: 'auto' | 'users' | 'upstream'; subject: string; upstreams: ResolvedSignInProvider[] };
  registration: { enabled: boolean };
  rate_limits: { token: Bucket; register: Bucket; login_per_ip: Bucket; login_per_user: Bucket };
  provider: NonNullable<OAuthConfig['provider']>;
};

/** An upstream identity provider (oauth.login.upstreams[]) with every schema default applied. */
export type ResolvedSignInProvider = UpstreamLogin & {
  auth_method: NonNullable<UpstreamLogin['auth_method']>;
  scopes: string[];
  userinfo: boolean;
  groups_claim: string;
  require_verified_email: boolean;
  timeout_ms: number;
  rules: ResolvedSignInRule[];
};

export type ResolvedSignInRule = UpstreamRule & { subject: string; claims: Record<string, string> };

type Introspection = NonNullable<ExternalIssuer['introspection']>;

/** An external_issuers entry with every schema default applied. */
export type ResolvedExternalIssuer = Omit<ExternalIssuer, 'introspection'>
  & Required<Pick<ExternalIssuer, 'algorithms' | 'strict_typ' | 'clock_skew' | 'max_token_length' | 'jwks_max_age' | 'jwks_refetch_interval'
    | 'scopes_from' | 'direct_scopes' | 'scope_map' | 'subject_claim' | 'client_claims' | 'claims'>>
  & { introspection?: Introspection & Required<Pick<Introspection, 'auth_method' | 'cache_ttl'>> };

/** BearerAuthConfig with the schema's defaults filled in. */
export type ResolvedBearerAuth = BearerAuthConfig & Required<Pick<BearerAuthConfig, 'subject'>>;

/** A config with every schema default applied. */
export type ResolvedConfig = Omit<SvcServerConfig, 'external_issuers'> & {
  server: Required<Omit<ServerSettings, never>>;
  routes: Required<Routes>;
  oauth?: ResolvedOAuth;
  auth?: ResolvedBearerAuth;
  state?: StateStore & Required<Pick<StateStore, 'pool_size' | 'statement_timeout_ms'>>;
  external_issuers: ResolvedExternalIssuer[];
  profile: AuthProfile & { scopes: NonNullable<AuthProfile['scopes']> };
  base_dir: string;
};

/** The code API's config checked against definitions/SvcServerConfig, the schema's defaults filled in. */
export function resolveConfig(config: SvcServerConfig): ResolvedConfig {
  const { oauth_provider, ...rest } = config;
  const doc = structuredClone(rest) as Record<string, unknown>;
  if (!configValidator(doc)) {
    throw new ManifestError((configValidator.errors ?? []).map((e) => new SvcError('SCHEMA_VIOLATION', `config${e.instancePath.replace(/\//g, '.')}: ${e.message}`, { path: e.instancePath || '/' })));
  }
  return { ...(doc as SvcServerConfig), oauth_provider, base_dir: (doc.base_dir as string | undefined) ?? process.cwd() } as ResolvedConfig;
}

/** Every route a manifest may list in routes.public or routes.protected. */
export const KNOWN_ROUTES = ['/', '/docs', '/healthz', '/readyz', '/metadata', '/svc', '/mcp', '/ws', '/metrics'] as const;
/** The routes that serve the tools, resources and prompts. */
export const CALL_ROUTES: readonly string[] = ['/svc', '/mcp', '/ws'];

export function profileScopes(profile: AuthProfile | undefined): string[] {
  return (profile?.scopes ?? []).map((s) => (typeof s === 'string' ? s : s.name));
}
