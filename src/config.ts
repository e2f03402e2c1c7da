// SvcServerConfig: how a FastSvc is served — the code API's second argument to
// createApp, and exactly what the YAML loader builds from svc.yaml's server,
// routes, auth, oauth and profile sections. Guarantees: resolveConfig() applies
// the schema's defaults (the schema is the only place defaults live) and rejects
// a config the schema rejects, so both doors end in the same object.

import { ManifestError, SvcError } from './errors.js';
import { manifestValidator } from './manifest/validate.js';
import type { AuditConfig, AuthProfile, BearerAuthConfig, OAuthConfig, Routes, ServerSettings } from './manifest/types.gen.js';
import type { OAuthProvider } from './auth/oauth/provider.js';

export type { AuditConfig, AuthProfile, BearerAuthConfig, OAuthConfig, Routes, ServerSettings };

export interface SvcServerConfig {
  /** Public URL (scheme://host:port). Default: the listening socket's address. */
  base_url?: string;
  server?: ServerSettings;
  routes?: Routes;
  /** The decision audit log's sink; absent: no audit log. */
  audit?: AuditConfig;
  auth?: BearerAuthConfig;
  oauth?: OAuthConfig;
  /** The OAuth state store; default from oauth.provider (InMemoryOAuthProvider or SQLiteOAuthProvider). */
  oauth_provider?: OAuthProvider;
  profile?: AuthProfile;
  /** Folder that relative paths (token_file, sqlite files) resolve against. Default: cwd. */
  base_dir?: string;
  /** The manifest file this config came from, if any (for logs and reload). */
  manifest_path?: string;
  /** sha256 of the manifest file; shown in /metadata. */
  config_hash?: string;
}

/** A config with every schema default applied. */
export type ResolvedConfig = SvcServerConfig & {
  server: Required<Omit<ServerSettings, never>>;
  routes: Required<Routes>;
  profile: AuthProfile & { scopes: NonNullable<AuthProfile['scopes']> };
  base_dir: string;
};

export function resolveConfig(config: SvcServerConfig): ResolvedConfig {
  const check = manifestValidator;
  const { oauth_provider, base_dir, manifest_path, config_hash, ...sections } = config;
  const doc: Record<string, unknown> = structuredClone({ version: 1, name: 'config', ...sections, server: sections.server ?? {}, routes: sections.routes ?? {}, profile: sections.profile ?? {} });
  if (!check(doc)) {
    throw new ManifestError((check.errors ?? []).map((e) => new SvcError('SCHEMA_VIOLATION', `config${e.instancePath.replace(/\//g, '.')}: ${e.message}`)));
  }
  delete doc.version;
  delete doc.name;
  delete doc.tools;
  delete doc.resources;
  delete doc.prompts;
  delete doc.description;
  return { ...(doc as SvcServerConfig), oauth_provider, base_dir: base_dir ?? process.cwd(), manifest_path, config_hash } as ResolvedConfig;
}

export function profileScopes(profile: AuthProfile | undefined): string[] {
  return (profile?.scopes ?? []).map((s) => (typeof s === 'string' ? s : s.name));
}
