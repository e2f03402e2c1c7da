// Public API of fastsvc: the code door to the same house the YAML door opens.
// Guarantees: loadManifest(path) returns exactly the {svc, config} that
// createApp(svc, config) takes, so anything a manifest declares can be built in
// code and vice versa.

export { FastSvc, type FastSvcOptions } from './core/fast-svc.js';
export type { Principal, CallContext, CallChannel, ToolDef, ResourceDef, PromptDef, ToolResult, ContentBlock, ResourceContents, PromptMessage, ToolUi, UiResourceMeta, UiVisibility } from './core/types.js';
export type { SvcServerConfig, BearerAuthConfig, OAuthConfig, AuthProfile } from './core/config.js';
export type { ExternalIssuer } from './core/manifest-types.gen.js';
export { createApp, type AppHandle } from './server/app.js';
export { serve } from './server/listen.js';
export { loadManifest, checkManifest } from './manifest/index.js';
export { SvcError, ManifestError, CODES, type ErrorCode } from './errors.js';
export { decide } from './policy/scopes.js';
export { AlreadyConsumed, type OAuthProvider, type OAuthKeys, type Adapter, type AdapterPayload } from './core/oauth-provider.js';
export { InMemoryOAuthProvider } from './auth/oauth/providers/memory-provider.js';
export { SQLiteOAuthProvider } from './auth/oauth/providers/sqlite-provider.js';
export { hashPassword, verifyPassword } from './auth/oauth/password.js';
export type { SessionStore, SessionRecord, SessionChange, SessionEvent, SessionSignal, SignalRelay } from './sessions/session-store.js';
export { MemorySessionStore } from './sessions/memory-store.js';
export { SqliteSessionStore } from './sessions/sqlite-store.js';
export { LoopbackRelay } from './sessions/loopback-relay.js';
