// The shapes every layer shares: who is calling, what a capability is, what a
// call returns. Guarantees: transports, the runtime and backends speak only
// these types; wire shapes of content blocks are MCP's (camelCase mimeType).

import type { Logger } from 'pino';
import type { RequestScope } from './request-scope.js';
import type { CredentialKind } from './credential-kind.js';

/** Who is calling, after authentication. Immutable for the life of a request. */
export interface Principal {
  /** Subject: token name, user or client. Appears in logs. */
  readonly sub: string;
  readonly scopes: ReadonlySet<string>;
  /** static: an auth token; oauth: the built-in server's; external: an external issuer's (external_issuers); anonymous: a public route. */
  readonly kind: 'static' | 'oauth' | 'external' | 'anonymous';
  /**
   * kind external: the issuer that vouched for `sub` (external_issuers[].issuer). The same sub at two
   * issuers is two principals: tasks, sessions, quotas and the audit log tell them apart by it.
   */
  readonly issuer?: string;
  readonly clientId?: string;
  /** Epoch seconds after which the credential is no longer valid. */
  readonly expiresAt?: number;
  /** The credential itself is never kept; this is an opaque id for re-checks (grant id, token name). */
  readonly credentialId?: string;
  /** DPoP: the thumbprint of the key the token is bound to (every request needs a proof signed by it). */
  readonly jkt?: string;
  /** Enterprise-managed authorization: the identity provider that vouched for `sub`, and the claims kept from its ID-JAG. */
  readonly idp?: string;
  /** Sign-in through another identity provider (oauth.login.mode upstream): the name of the provider the person signed in at. */
  readonly signedInAt?: string;
  /**
   * The named endpoints the credential was minted for (its audience names them: an RFC 8707 resource
   * indicator such as https://host/mcp/github); it is accepted only there. Absent: on every endpoint.
   */
  readonly endpoints?: readonly string[];
  /**
   * Claims of the credential: a static token's or OAuth user's `claims`, or those kept from
   * an ID-JAG, an upstream login's rule or an external issuer's token; usable in a tool's bind.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** A quota per principal (schema Limit): requests per window_ms, and calls running at once. */
export interface Limit {
  requests?: number;
  window_ms?: number;
  concurrent?: number;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ResourceContents }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string };

export type ResourceContents =
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

/** What a call may do besides returning: progress, logs, server-to-client requests (MCP only). */
export interface CallChannel {
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * Whether progress() reaches anyone: false when the caller asked for no progress (no progressToken), so a backend
   * need not produce it (an upstream is then sent no progressToken). Absent: it may.
   */
  hearsProgress?(): boolean;
  log(level: LogLevel, data: unknown, logger?: string): Promise<void>;
  /**
   * Ask the client (sampling/createMessage, elicitation/create, roots/list) and get its answer.
   * 2025 era: a server→client request. 2026 era: an input_required round; the handler runs
   * again with the answer, and `key` (default: the n-th request of the run) names the request.
   */
  request(method: string, params: Record<string, unknown>, opts?: { timeoutMs?: number; key?: string }): Promise<unknown>;
  /** Whether the client declared the capability `method` needs (for this request, in the 2026 era). */
  supports(method: string): boolean;
  /**
   * A tool declaring ask_before_task, called as a 2026 task: the task is created now and the run goes
   * on as the task (questions asked before this were input_required rounds). Absent elsewhere.
   */
  startTask?(): void;
}

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export interface CallContext {
  readonly principal: Principal;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Which transport the call arrived on. */
  readonly transport: 'svc' | 'mcp' | 'ws' | 'code';
  /** Present on /mcp and /ws; on /svc its methods are no-ops and request() rejects. */
  readonly channel: CallChannel;
  /** The MCP request's `_meta` (its `traceparent` parents the call's trace span), when the call came over MCP. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** The request's address and trace headers, set by the transport while the audit log or tracing is on. */
  readonly scope?: RequestScope;
}

export type JsonSchemaObject = {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean | Record<string, unknown>;
  [k: string]: unknown;
};

export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** A tool handler returns a ToolResult, or a plain value shaped by output_mode. */
export type ToolHandler = (input: Record<string, unknown>, ctx: CallContext) => unknown;

export interface ToolDef {
  name: string;
  title?: string;
  description: string;
  input_schema?: JsonSchemaObject;
  /** The JSON Schema of structuredContent, listed as outputSchema (an upstream's tool carries its own). */
  output_schema?: JsonSchemaObject;
  output_mode?: 'scalar' | 'json';
  inline_ok?: boolean;
  required_scopes?: string[];
  annotations?: Record<string, unknown>;
  /** Arguments whose value comes from the credential: name → principal.sub | principal.client_id | principal.claims.NAME. */
  bind?: Record<string, string>;
  /** Quota of this tool per principal. */
  limits?: Limit;
  /** When set, the runtime aborts the call (context.signal) and answers BACKEND_TIMEOUT after this many ms. */
  timeout_ms?: number;
  /** Whether a call runs as a task (src/tasks/): forbidden (default), optional, required. */
  task?: TaskSupport;
  /** MCP 2026-07-28 tasks: the handler asks in input_required rounds until channel.startTask() (see the schema). */
  ask_before_task?: boolean;
  /** The kind of credential a call sends its backend (an http backend's or an upstream's `auth`), for explain; never the credential. */
  credential?: CredentialKind;
  /** MCP Apps (io.modelcontextprotocol/ui): the tool's view and who may see it, listed as _meta.ui to clients that declare the extension. */
  ui?: ToolUi;
  /** What a call asks its caller (elicitation, sampling, roots: an upstream tool's `asks`): not offered to a caller that cannot answer (/svc). */
  asks?: readonly string[];
  /** Where the tool comes from when it is not the manifest's own: an `openapi` source or an upstream. */
  source?: CapabilitySource;
  /** Words that group tools (an OpenAPI operation's tags); searched, never listed. */
  tags?: string[];
  /** The tool's OpenAPI operation is deprecated: search ranks it below its peers; never listed. */
  deprecated?: boolean;
  handler: ToolHandler;
}

/** The `openapi` source or upstream MCP server a capability comes from, by its name in the manifest. */
export interface CapabilitySource {
  readonly kind: 'openapi' | 'upstream';
  readonly name: string;
}

/** Who may see and call a tool under MCP Apps: the agent (model) and/or views of this server (app). */
export type UiVisibility = 'model' | 'app';

/** A tool's _meta.ui (the extension's McpUiToolMeta). */
export interface ToolUi {
  /** The ui:// resource that renders the tool's results. */
  resourceUri?: string;
  /** Default (absent): both. A tool without `model` is not listed to clients that do not declare the extension. */
  visibility?: readonly UiVisibility[];
}

/** A view resource's _meta.ui (the extension's McpUiResourceMeta). */
export interface UiResourceMeta {
  csp?: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] };
  permissions?: Record<string, Record<string, never>>;
  domain?: string;
  prefersBorder?: boolean;
}

/** MCP 2026-07-28 caching hint (ttlMs, cacheScope); `auto` is public only for an answer the same for every caller on a public route. */
export interface CacheHint {
  ttl_ms: number;
  scope: 'auto' | 'public' | 'private';
}

/**
 * How an endpoint lists its tools (manifest `discovery`, docs/discovery.md): every tool (direct), a few meta-tools
 * that search, describe and call them (progressive), or progressive when the listing has more than auto_tools tools
 * or costs more than auto_tokens estimated tokens (auto).
 */
export type DiscoverySettings = { readonly mode: 'direct' | 'progressive' } | { readonly mode: 'auto'; readonly auto_tools: number; readonly auto_tokens: number };

export interface ResourceDef {
  /** Fixed URI, or omit and give uri_template. */
  uri?: string;
  uri_template?: string;
  name: string;
  title?: string;
  description?: string;
  mime_type?: string;
  required_scopes?: string[];
  /** Quota of this resource per principal. */
  limits?: Limit;
  /** How long a read may be reused (MCP 2026-07-28 ttlMs/cacheScope on resources/read). */
  cache?: CacheHint;
  /** vars holds the template variables (empty for fixed URIs). */
  read: (uri: string, vars: Record<string, string>, ctx: CallContext) => Promise<ResourceContents[]> | ResourceContents[];
  /** A resource whose changes its source reports (an upstream's): `onUpdated` each time `uri` changes, until the returned unwatch. */
  watch?: (uri: string, onUpdated: () => void) => () => void;
  /** Completion of a template variable by its source (an upstream's template); absent: none. */
  complete?: Completer;
  /** The kind of credential a read sends its backend (an http backend's or an upstream's `auth`), for explain; never the credential. */
  credential?: CredentialKind;
  /** An MCP Apps view: its _meta.ui, listed and read with the resource by clients that declare the extension. */
  ui?: UiResourceMeta;
  /** The upstream the resource comes from; absent: the manifest's own. */
  source?: CapabilitySource;
  /**
   * What its contents are made from, as text (a manifest resource's text, blob, file, http or module; a view's
   * template or file): a reload that changes it tells the resource's subscribers (notifications/resources/updated).
   */
  revision?: string;
}

/** completion/complete's answer: at most 100 values. */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** Completes one argument (`context`: the other arguments already given). */
export type Completer = (argument: string, value: string, context: Record<string, string> | undefined, ctx: CallContext) => Promise<Completion>;

export interface PromptArgumentDef {
  name: string;
  description?: string;
  required?: boolean;
  values?: string[];
}

export interface PromptDef {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgumentDef[];
  required_scopes?: string[];
  /** Quota of this prompt per principal. */
  limits?: Limit;
  get: (args: Record<string, string>, ctx: CallContext) => Promise<PromptMessage[]> | PromptMessage[];
  /** Completion of an argument by the prompt's source (an upstream's prompt), instead of the declared `values`. */
  complete?: Completer;
  /** The kind of credential a get sends its source (an upstream's `auth`), for explain; never the credential. */
  credential?: CredentialKind;
  /** The upstream the prompt comes from; absent: the manifest's own. */
  source?: CapabilitySource;
}
