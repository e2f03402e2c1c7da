// GENERATED from schema/svc.schema.json by `npm run gen:types`. Do not edit by hand.

/**
 * An OAuth-style scope name, e.g. files.read.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Scope".
 */
export type Scope = string;
/**
 * A list of scopes; every one must be declared in profile.scopes.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Scopes".
 */
export type Scopes = Scope[];
/**
 * Resource-server mode: authorization servers this server does not run whose access tokens it accepts on its protected routes, beside static tokens and the built-in OAuth server. A JWT access token (RFC 9068) goes to the issuer its `iss` names and is checked against that issuer's keys; an opaque token is tried on the built-in server first, then introspected (RFC 7662) by each issuer with `introspection`, in this order. Each issuer is listed in the protected-resource metadata's authorization_servers. Changing this section takes a restart (except each issuer's limits).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ExternalIssuers".
 */
export type ExternalIssuers = ExternalIssuer[];
/**
 * A scope name, or a tenant-bound scope pattern whose {{placeholder}} is filled from the call's argument (tool input, prompt argument, resource URI template variable) of that name, e.g. tenant:{{tenant}}.read. The argument must be a required string whose value is a scope segment (letters, digits, _ and -).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "RequiredScope".
 */
export type RequiredScope = string;
/**
 * One argument sent as an HTTP parameter (the OpenAPI Parameter Object's name, in, style and explode). Allowed styles: path simple, label, matrix; query form, spaceDelimited, pipeDelimited, deepObject; header simple; cookie form. spaceDelimited and pipeDelimited take arrays and objects, deepObject objects only.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "HttpParameter".
 */
export type HttpParameter = {
  [k: string]: unknown;
} & {
  /**
   * The parameter's name on the wire (case-sensitive, as the API documents it).
   */
  name: string;
  /**
   * Where it goes: a {{arg}} placeholder in the url's path, the query string, a request header, or the Cookie header.
   */
  in: 'path' | 'query' | 'header' | 'cookie';
  /**
   * The tool argument that feeds it, when that differs from name (two parameters of the same name in different places, e.g. id_query). For a path parameter it must be usable as a {{placeholder}}: letters, digits and _, not starting with a digit.
   */
  arg?: string;
  /**
   * How the value is serialized (OpenAPI 3.1 style). Default: simple for path and header, form for query and cookie.
   */
  style?: 'simple' | 'label' | 'matrix' | 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';
  /**
   * Whether arrays and objects are spread into separate values (OpenAPI 3.1 explode). Default: true for style form, false otherwise (deepObject serializes the same either way).
   */
  explode?: boolean;
};
/**
 * Escape hatch: ./file.js#exportName, relative to the manifest, called with (input, context).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ModuleRef".
 */
export type ModuleRef = string;
/**
 * MCP servers whose tools, resources, resource templates and prompts fastsvc imports and serves (a gateway). Changing how fastsvc connects (command, cwd, env, url, headers, auth, timeouts, max_in_flight, max_bytes, poll_ms, restart) takes a restart; `expose` (its `auth` and the overrides' included) and `pin` are applied on reload.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Upstreams".
 */
export type Upstreams = Upstream[];
/**
 * A duration in milliseconds.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "DurationMs".
 */
export type DurationMs = number;
/**
 * A size in bytes, or a string such as 512kb or 1mb.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ByteSize".
 */
export type ByteSize = number | string;
/**
 * A secret value. Write ${ENV_VAR} rather than the secret itself; never commit a literal.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Secret".
 */
export type Secret = string;

/**
 * fastsvc manifest (svc.yaml): what the server serves, to whom, and how it authenticates callers.
 */
export interface SvcManifest {
  /**
   * Manifest format version. Only 1 exists.
   */
  version: 1;
  /**
   * Server name shown on /, /docs, /metadata and in the MCP initialize answer.
   */
  name: string;
  /**
   * One paragraph about this server, shown on / and /docs.
   */
  description?: string;
  /**
   * Public URL of this server (scheme, host, port; no trailing slash). Used in metadata and OAuth resource identifiers. Defaults to http://HOST:PORT of the listening socket.
   */
  base_url?: string;
  server?: ServerSettings;
  routes?: Routes;
  audit?: AuditConfig;
  state?: StateStore;
  auth?: BearerAuthConfig;
  oauth?: OAuthConfig;
  external_issuers?: ExternalIssuers;
  profile?: AuthProfile;
  cache?: CacheHint;
  discovery?: Discovery;
  /**
   * Tools callers can invoke.
   */
  tools?: Tool[];
  /**
   * Resources callers can read.
   */
  resources?: Resource[];
  /**
   * Prompt templates callers can get.
   */
  prompts?: Prompt[];
  upstreams?: Upstreams;
  /**
   * OpenAPI documents whose operations are served as http tools: each source is expanded, when the manifest is loaded (start-up and every reload), into ordinary `tools` entries — the same ones `fastsvc import openapi` prints — appended after the tools written here. See docs/openapi.md.
   */
  openapi?: OpenApiSource[];
  /**
   * Quotas per principal class, counted per principal of that class across every capability: token (each static bearer token), user (each OAuth user), oauth_client (each OAuth client, all its users together). Off unless set. Counters are per process (per replica) unless shared is true.
   */
  limits?: {
    token?: Limit;
    user?: Limit;
    oauth_client?: Limit;
    /**
     * Count request quotas (these and every capability's limits) in the shared PostgreSQL database — state, or the OAuth provider's — so all replicas on it share one count per principal. Needs state (type postgres) or oauth.provider.type postgres. Concurrency limits stay per replica.
     */
    shared?: boolean;
  };
  /**
   * Named endpoints (virtual servers): each serves a selection of the catalog at its own paths — /mcp/NAME (both MCP revisions), /ws/NAME and /svc/NAME/… (GET /svc/NAME, POST /svc/NAME/tools/X …) — with its own server name, instructions and, optionally, scopes a caller must hold to use it at all. A capability outside an endpoint does not exist there. The default endpoint (/mcp, /ws, /svc) keeps serving everything. With OAuth each endpoint is its own protected resource (RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp/NAME). See docs/endpoints.md.
   */
  endpoints?: {
    [k: string]: Endpoint;
  };
}
/**
 * Listening socket and request limits.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ServerSettings".
 */
export interface ServerSettings {
  /**
   * Address to bind. 127.0.0.1 keeps the server on this machine.
   */
  host?: string;
  /**
   * Port to bind; 0 picks a free one. The PORT env var and --port override it.
   */
  port?: number;
  /**
   * Largest accepted request body (HTTP) or WebSocket message, in bytes or as a string such as 512kb or 1mb; larger ones get 413 / close 1009.
   */
  body_limit?: number | string;
  /**
   * Results larger than this many bytes from tools with inline_ok: false are returned as a resource link instead of inline.
   */
  inline_limit?: number;
  /**
   * Most items in one page of the MCP tools/list, resources/list, resources/templates/list and prompts/list answers, and of each list in a GET /svc answer; a longer list ends its page with nextCursor (GET /svc: next_cursor). The default keeps a hand-written manifest in one page (some clients never ask for a second) and a page of a generated catalog small enough to answer in a few milliseconds; raise it for clients that do not paginate.
   */
  list_page_size?: number;
  /**
   * Most characters of JSON in one page of a list (the MCP lists, and each list of a GET /svc answer, as a JSON array): a page ends before the item that would pass it, and an entry longer than a page on its own is listed in short (a tool without its output schema, then with its input schema cut to the levels that fit — a call is still checked against the whole schema — then its description shortened; validate warns LIST_ENTRY_SHORTENED), so a catalog of large tools (an OpenAPI description's, whose input and output schemas run to kilobytes each) answers every page in a few milliseconds. A page ends at whichever of list_page_size and list_page_bytes comes first.
   */
  list_page_bytes?: number;
  /**
   * Host header values accepted (DNS-rebinding protection). Empty: loopback names when bound to loopback, anything otherwise.
   */
  allowed_hosts?: string[];
  /**
   * Origin header values accepted when a request carries one. Empty: same-origin and loopback origins only.
   */
  allowed_origins?: string[];
  /**
   * Reverse proxies to trust for X-Forwarded-For/-Proto/-Host: a number of hops (0: none, X-Forwarded-* are never read; 1: the direct peer is a proxy) or a list of proxy addresses and CIDRs (also the names loopback and private). Decides the client address in logs and rate limits, and the base URL in /metadata when base_url is unset. Never the OAuth issuer.
   */
  trust_proxy?: number | [string, ...string[]];
  cors?: CorsSettings;
  /**
   * Requests a single WebSocket may have unanswered at once; more are refused with a JSON-RPC error.
   */
  ws_max_in_flight?: number;
  /**
   * Interval of WebSocket keep-alive pings; a socket that misses one pong is closed.
   */
  ws_ping_interval_ms?: number;
  /**
   * An MCP session (2025-era /mcp, Mcp-Session-Id) unused this long, with no open GET stream, is ended.
   */
  mcp_session_idle_ms?: number;
  /**
   * Most MCP sessions open at once on /mcp; opening one more ends the least recently used idle one (or answers 503 when all are busy). With sessions shared by several processes (the PostgreSQL provider), the most sessions this process keeps a copy of: dropping the least recently used copy does not end its session.
   */
  mcp_max_sessions?: number;
  /**
   * Processes serving this manifest on one port (node:cluster): an integer, or auto for one per core (os.availableParallelism()). With more than 1, `svc serve` is a primary that forks the workers and serves no HTTP itself; they share OAuth state, tasks and request quotas through the OAuth provider's store (PostgreSQL, the sqlite file, or for the memory provider a SQLite file in a private temporary folder removed at exit), a reload is applied by all of them or none, /metrics answers the sum of all and audit lines go to the one sink. A worker that dies is replaced. 1: one process, as without this field.
   */
  workers?: number | 'auto';
  /**
   * When an MCP 2025 session is shared by several processes (replicas on PostgreSQL, server.workers), how many of its newest GET-stream messages are kept so a client reconnecting with Last-Event-ID on any process is replayed what it missed; an older one is gone.
   */
  mcp_session_events?: number;
  /**
   * On SIGTERM, how long in-flight requests may run before the process exits anyway.
   */
  drain_timeout_ms?: number;
  /**
   * Longest a client may take to send one whole request (headers and body); a slower one is answered 408 and its connection closed. Answers and streams are not limited by it.
   */
  request_timeout_ms?: number;
  /**
   * Longest a client may take to send a request's headers (capped at request_timeout_ms); a slower one is answered 408 and its connection closed.
   */
  headers_timeout_ms?: number;
  /**
   * How long an idle keep-alive connection stays open waiting for the next request (advertised as Keep-Alive: timeout=N). Longer than a load balancer's idle timeout (60 s on most) and a client's pause, so neither reuses a connection the server has just closed.
   */
  keep_alive_timeout_ms?: number;
  /**
   * MCP 2026-07-28: HMAC key (at least 32 characters, e.g. ${SVC_REQUEST_STATE_KEY}) sealing the requestState of input_required rounds. Unset: 32 random bytes per process, so set it when several replicas serve one client.
   */
  request_state_key?: string;
  /**
   * Path (relative to the manifest) of a file holding request_state_key, read at start-up.
   */
  request_state_key_file?: string;
  /**
   * MCP 2026-07-28: how long the requestState of an input_required round stays valid; the client must answer within it.
   */
  request_state_ttl_ms?: number;
  /**
   * How long a finished task (its status and result) stays readable by its owner, in milliseconds.
   */
  task_ttl_ms?: number;
  /**
   * Most tasks running at once on this server; one more is refused with TASK_LIMIT_REACHED.
   */
  task_max_running?: number;
  /**
   * Most tasks one caller (subject + client) may have running at once; one more is refused with TASK_LIMIT_REACHED.
   */
  task_max_running_per_principal?: number;
  /**
   * The poll interval, in milliseconds, suggested to clients of a task.
   */
  task_poll_interval_ms?: number;
}
/**
 * CORS for browser-based clients on /mcp, /svc and the OAuth endpoints they call (token, registration, revocation, discovery). Off while origins is empty.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "CorsSettings".
 */
export interface CorsSettings {
  /**
   * Origins (scheme://host[:port], exact match) allowed to call from a browser. They also pass the Origin check.
   */
  origins?: string[];
  /**
   * Seconds a browser may cache a preflight answer (Access-Control-Max-Age).
   */
  max_age?: number;
}
/**
 * Which routes are public (no token) and which are protected (token required). Known routes: /, /docs, /healthz, /readyz, /metadata, /svc, /mcp, /ws, /metrics.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Routes".
 */
export interface Routes {
  /**
   * Routes served without a token.
   */
  public?: string[];
  /**
   * Routes that require a bearer token.
   */
  protected?: string[];
}
/**
 * The decision audit log: one JSON line per authorization decision (allow, deny, quota refusal, token issuance, refresh, revocation, registration, reload), written to its own sink so it can be shipped apart from the debug logs. Absent: no audit log.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "AuditConfig".
 */
export interface AuditConfig {
  /**
   * Where events go: "stderr", or {file: PATH} (appended to, created if missing; a relative path is resolved against the manifest folder; rotate it with logrotate copytruncate).
   */
  to:
    | 'stderr'
    | {
        /**
         * The audit file: appended to, created with its folder if missing; relative to the manifest folder.
         */
        file: string;
      };
  /**
   * File sink only: "always" writes each event synchronously and fsyncs it before the request goes on; "never" buffers writes and leaves flushing to the operating system (faster; events of the last moments before a crash may be lost).
   */
  fsync?: 'always' | 'never';
  /**
   * Record allowed calls too (one event per call). false records only denials, refusals, token and reload events.
   */
  allow?: boolean;
}
/**
 * Where replicas (and the workers of server.workers) share MCP 2025 sessions, tasks and request quotas (limits.shared), without the built-in OAuth server: for manifests that authenticate with static tokens or external issuers. Absent: per process (workers: their SQLite file), or the OAuth provider's database when oauth.provider.type is postgres — which already holds this state, so the two together are refused (STATE_CONFIG).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "StateStore".
 */
export interface StateStore {
  /**
   * postgres: one PostgreSQL database shared by every replica (tables created and migrated on start, as the postgres OAuth provider's).
   */
  type: 'postgres';
  /**
   * PostgreSQL connection string, from the environment: ${DATABASE_URL}.
   */
  url: string;
  /**
   * Most connections each replica opens to PostgreSQL.
   */
  pool_size?: number;
  /**
   * A PostgreSQL query (or connect) taking longer fails with STORE_UNAVAILABLE (503) instead of hanging.
   */
  statement_timeout_ms?: number;
}
/**
 * Static bearer tokens. token/token_file is the main token; tokens adds named service-account tokens with their own scopes.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "BearerAuthConfig".
 */
export interface BearerAuthConfig {
  /**
   * The main token, usually ${SVC_TOKEN}. If the variable is unset and generate_if_unset is true, a random token is generated and printed once at start-up.
   */
  token?: string;
  /**
   * Path (relative to the manifest) of a file holding the main token; re-read when it changes so the token rotates without a restart.
   */
  token_file?: string;
  /**
   * When token resolves to nothing, generate a random token at start-up and print it once (development convenience).
   */
  generate_if_unset?: boolean;
  /**
   * Scopes the main token carries. Default: every scope in profile.scopes.
   */
  scopes?: Scope[];
  /**
   * Principal name of the main token in logs.
   */
  subject?: string;
  /**
   * Named tokens (service accounts), each with its own scopes.
   */
  tokens?: {
    /**
     * Principal name in logs.
     */
    name: string;
    /**
     * This token's value, usually ${VAR}; or give token_file.
     */
    token?: string;
    /**
     * Path (relative to the manifest) of a file holding the token; re-read when it changes.
     */
    token_file?: string;
    scopes: Scopes;
    claims?: Claims;
  }[];
  claims?: Claims;
}
/**
 * Claims of this principal (e.g. tenant: acme), usable in a tool's bind (principal.claims.NAME).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Claims".
 */
export interface Claims {
  [k: string]: string;
}
/**
 * The built-in OAuth 2.1 authorization server.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OAuthConfig".
 */
export interface OAuthConfig {
  /**
   * Turn the authorization server on.
   */
  enabled: boolean;
  /**
   * Issuer URL exactly as published in discovery metadata. Default: base_url.
   */
  issuer?: string;
  /**
   * Where OAuth state (clients, grants, tokens, keys) lives. postgres: shared by every replica on one database.
   */
  provider?: {
    /**
     * memory: lost on restart. sqlite: durable in a file. postgres: durable and shared by replicas (url and key_secret required).
     */
    type: 'memory' | 'sqlite' | 'postgres';
    /**
     * SQLite file path, relative to the manifest (sqlite only).
     */
    path?: string;
    /**
     * What a committed write survives (sqlite only). process: a crash or kill -9 of svc (WAL, synchronous=NORMAL: no fsync per write). power: also an OS crash or power loss (synchronous=FULL: an fsync per write, several per /token call).
     */
    durability?: 'process' | 'power';
    /**
     * PostgreSQL connection string, from the environment: ${DATABASE_URL} (postgres only).
     */
    url?: string;
    /**
     * Most connections each replica opens to PostgreSQL (postgres only).
     */
    pool_size?: number;
    /**
     * A PostgreSQL query (or connect) taking longer fails with STORE_UNAVAILABLE (503) instead of hanging (postgres only).
     */
    statement_timeout_ms?: number;
    /**
     * Secret (at least 32 characters, e.g. ${SVC_OAUTH_KEY_SECRET}) sealing the signing and cookie keys stored in PostgreSQL; the same on every replica (postgres only).
     */
    key_secret?: string;
  };
  /**
   * Access token lifetime in seconds.
   */
  access_token_ttl?: number;
  /**
   * Refresh token lifetime in seconds.
   */
  refresh_token_ttl?: number;
  /**
   * Authorization code lifetime in seconds.
   */
  code_ttl?: number;
  /**
   * Dynamic client registration (RFC 7591). Deprecated by MCP 2026-07-28 in favour of client ID metadata documents; still supported.
   */
  registration?: {
    /**
     * Accept POST /register.
     */
    enabled?: boolean;
  };
  /**
   * Client ID Metadata Documents: a client whose client_id is an https URL is described by the JSON document at that URL, fetched by this server (at most 5 KiB, 2.5 s, no redirects, cached per Cache-Control between 30 s and a day).
   */
  client_id_metadata_documents?: {
    /**
     * Accept https URLs as client ids and advertise client_id_metadata_document_supported.
     */
    enabled?: boolean;
    /**
     * Hosts whose documents may be fetched (exact host names). Empty: any host.
     */
    allowed_hosts?: string[];
    /**
     * Development only: fetch documents from loopback, private and link-local addresses (refused otherwise, after DNS resolution).
     */
    allow_private_addresses?: boolean;
    /**
     * PEM file of extra certificate authorities trusted for fetching documents, relative to the manifest (e.g. a development CA).
     */
    ca_file?: string;
  };
  /**
   * How the person behind an authorization request is identified.
   */
  login?: {
    /**
     * auto: approve as `subject` with no page (loopback issuers only). users: login and consent pages for the declared users. upstream: the person signs in at one of `upstreams` (an OIDC or OAuth 2 identity provider), its `rules` map them to a subject, scopes and claims, then this server's consent page.
     */
    mode?: 'auto' | 'users' | 'upstream';
    /**
     * Subject approved in auto mode.
     */
    subject?: string;
    /**
     * Identity providers people sign in at (login.mode: upstream); with several, the sign-in page offers a choice.
     */
    upstreams?: UpstreamLogin[];
  };
  /**
   * People who can log in (login.mode: users).
   */
  users?: {
    /**
     * Login name.
     */
    username: string;
    /**
     * scrypt hash made by `svc hash-password`.
     */
    password_hash: string;
    /**
     * Scopes this user may grant. Default: all of profile.scopes.
     */
    scopes?: Scope[];
    claims?: Claims;
  }[];
  /**
   * Pre-registered OAuth clients.
   */
  clients?: {
    /**
     * Client identifier.
     */
    client_id: string;
    /**
     * Name shown on the consent page.
     */
    client_name?: string;
    /**
     * Secret of a confidential client, usually ${VAR}.
     */
    client_secret?: string;
    /**
     * Path (relative to the manifest) of a file holding the client secret; give this or client_secret, not both.
     */
    client_secret_file?: string;
    /**
     * Exact redirect URIs (any port for loopback http URIs).
     *
     * @minItems 1
     */
    redirect_uris: [string, ...string[]];
    /**
     * Scopes this client may ask for. Default: all of profile.scopes.
     */
    scopes?: Scope[];
  }[];
  /**
   * Per-client-address token buckets for the OAuth endpoints; past them the answer is 429 with Retry-After. Behind a proxy every client shares the proxy's address unless server.trust_proxy names that proxy.
   */
  rate_limits?: {
    /**
     * POST /token, per IP address.
     */
    token?: {
      /**
       * Requests allowed at once before the rate applies.
       */
      burst?: number;
      /**
       * Sustained requests per minute.
       */
      per_minute?: number;
    };
    /**
     * POST /register, per IP address.
     */
    register?: {
      /**
       * Requests allowed at once before the rate applies.
       */
      burst?: number;
      /**
       * Sustained requests per minute.
       */
      per_minute?: number;
    };
    /**
     * Login attempts (users mode), per IP address.
     */
    login_per_ip?: {
      /**
       * Requests allowed at once before the rate applies.
       */
      burst?: number;
      /**
       * Sustained requests per minute.
       */
      per_minute?: number;
    };
    /**
     * Login attempts (users mode), per username.
     */
    login_per_user?: {
      /**
       * Requests allowed at once before the rate applies.
       */
      burst?: number;
      /**
       * Sustained requests per minute.
       */
      per_minute?: number;
    };
  };
  /**
   * Enterprise identity providers whose ID-JAGs (Identity Assertion JWT Authorization Grants, MCP ext-auth enterprise-managed authorization) the token endpoint accepts with grant_type urn:ietf:params:oauth:grant-type:jwt-bearer.
   */
  enterprise_issuers?: {
    /**
     * The identity provider's issuer, exactly as its ID-JAGs carry it in `iss`.
     */
    issuer: string;
    /**
     * URL of the identity provider's signing keys (JWKS); https unless the host is loopback.
     */
    jwks_uri?: string;
    /**
     * The identity provider's public signing keys inline, as a JWKS.
     */
    jwks?: {
      /**
       * Public JWKs (kty, crv/n/e, x/y, kid).
       *
       * @minItems 1
       */
      keys: [{}, ...{}[]];
    };
    /**
     * Signature algorithms accepted from this identity provider (never none).
     *
     * @minItems 1
     */
    algorithms?: [
      'RS256' | 'PS256' | 'ES256' | 'ES384' | 'EdDSA',
      ...('RS256' | 'PS256' | 'ES256' | 'ES384' | 'EdDSA')[]
    ];
    /**
     * client_ids (of oauth.clients) that may present this provider's ID-JAGs; the ID-JAG's client_id must be the authenticated client.
     *
     * @minItems 1
     */
    allowed_clients: [string, ...string[]];
    /**
     * ID-JAG claim whose value becomes the token's subject.
     */
    subject_claim?: string;
    /**
     * Claims kept on the caller: fastsvc name -> ID-JAG claim name.
     */
    claims?: {
      [k: string]: string;
    };
    /**
     * The most this provider's users get. Default: all of profile.scopes.
     */
    scopes?: Scope[];
    /**
     * Longest accepted ID-JAG lifetime (exp - iat) in seconds.
     */
    max_lifetime?: number;
  }[];
  /**
   * DPoP (RFC 9449) sender-constrained access tokens. off: bearer tokens only. allowed: a client that sends a DPoP proof to /token gets a token bound to its key, which then needs a proof on every request. required: every access token is DPoP-bound; bearer use is refused.
   */
  dpop?: 'off' | 'allowed' | 'required';
  /**
   * Require a server-issued DPoP nonce (DPoP-Nonce header) in every proof, at /token and on the protected routes.
   */
  dpop_nonce?: boolean;
}
/**
 * An identity provider people sign in at. Give `issuer` for an OpenID Connect provider (discovery, an ID token checked against its keys), or authorization_endpoint, token_endpoint and userinfo_endpoint for a plain OAuth 2 provider such as GitHub (identity from its userinfo endpoint). Register ISSUER/interaction/callback/NAME (ISSUER: this server's oauth issuer) as the redirect URI at the provider.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "UpstreamLogin".
 */
export interface UpstreamLogin {
  /**
   * Names the provider in its callback path (/interaction/callback/NAME), in logs and the audit log; unique.
   */
  name: string;
  /**
   * The provider as the sign-in page names it. Default: name.
   */
  display_name?: string;
  /**
   * The OpenID Connect issuer: its discovery document (ISSUER/.well-known/openid-configuration) gives the endpoints and keys, and its ID tokens must carry exactly this `iss`. https unless the host is loopback.
   */
  issuer?: string;
  /**
   * A plain OAuth 2 provider's authorization endpoint (no issuer). https unless the host is loopback.
   */
  authorization_endpoint?: string;
  /**
   * A plain OAuth 2 provider's token endpoint (no issuer). https unless the host is loopback.
   */
  token_endpoint?: string;
  /**
   * The endpoint that describes the signed-in person (GitHub: https://api.github.com/user). Required without issuer; with issuer, the discovered one is used when `userinfo` is true. https unless the host is loopback.
   */
  userinfo_endpoint?: string;
  /**
   * This server's client id at the provider.
   */
  client_id: string;
  /**
   * This server's client secret at the provider, sent as auth_method says. Write ${VAR}. Without client_secret, client_secret_file and private_key_file this server is a public client (PKCE only).
   */
  client_secret?: string;
  /**
   * File holding the client secret (relative to the manifest).
   */
  client_secret_file?: string;
  /**
   * How this server authenticates at the provider's token endpoint (code exchange, refresh). client_secret_basic: the id and secret in an Authorization: Basic header, form-encoded as RFC 6749 section 2.3.1 says. client_secret_post: both in the request's form, for providers that take them only there (GitHub) or do not decode the Basic header. private_key_jwt: no secret at all, a short-lived JWT signed with private_key_file (RFC 7523), for providers that offer it (the public key registered there). Ignored for a public client.
   */
  auth_method?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /**
   * With auth_method private_key_jwt: the file (relative to the manifest) holding this server's private key — PEM (PKCS#8) or a JWK, RSA (RS256), EC P-256/384/521 (ES256/384/512) or Ed25519 (EdDSA); a JWK's alg and kid are used when it has them. Register its public key (or a JWKS with it) at the provider.
   */
  private_key_file?: string;
  /**
   * Scopes asked of the provider. An OpenID Connect provider needs openid; ask for what the rules read (email, groups…).
   *
   * @minItems 1
   */
  scopes?: [string, ...string[]];
  /**
   * With issuer: also read the userinfo endpoint after the ID token, for claims the provider puts only there (groups, often); its `sub` must be the ID token's. Without issuer the userinfo endpoint is always read.
   */
  userinfo?: boolean;
  /**
   * The claim that lists the person's groups (for when.group).
   */
  groups_claim?: string;
  /**
   * The email claim counts (for when.email_domain and subject: email) only when email_verified is true. Turn off only for a provider that returns verified addresses alone without saying so.
   */
  require_verified_email?: boolean;
  /**
   * Longest wait for each call to the provider (discovery, keys, code exchange, userinfo, refresh), in ms.
   */
  timeout_ms?: number;
  /**
   * Who may sign in through this provider, and as what: tried in order, the first match wins; no match: refused (default deny).
   *
   * @minItems 1
   */
  rules: [UpstreamRule, ...UpstreamRule[]];
}
/**
 * One rule: when every condition of `when` holds for the person the provider signed in, they may use this server as `subject` with at most `scopes` and with `claims`. Rules are tried in order; the first that matches decides; when none matches the person is refused.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "UpstreamRule".
 */
export interface UpstreamRule {
  /**
   * Conditions, all of which must hold (a list: any of its values). `{}` matches everyone the provider signs in.
   */
  when: {
    /**
     * The domain of the person's email address (compared without case; only a verified address counts, see require_verified_email).
     */
    email_domain?: string | [string, ...string[]];
    /**
     * A group the person is a member of (in the provider's groups_claim).
     */
    group?: string | [string, ...string[]];
    /**
     * Provider claims and the values they must have: claim name -> value or list of values (a string, number or boolean claim is compared as a string; a list claim matches when it contains the value).
     */
    claim?: {
      /**
       * The value (or any of the values) the claim must have.
       */
      [k: string]: string | [string, ...string[]];
    };
  };
  /**
   * The provider claim whose value becomes the subject on this server (principal.sub, the audit log's sub): sub, email (a verified address only), preferred_username, login (GitHub)…
   */
  subject?: string;
  /**
   * The most a person matched by this rule may grant a client (each declared in profile.scopes); the consent page and the client's request narrow it further.
   *
   * @minItems 1
   */
  scopes: [Scope, ...Scope[]];
  /**
   * Claims kept on the caller, usable in a tool's bind (principal.claims.NAME): name on this server -> provider claim name. A provider value that is not a string (or a number) is left out.
   */
  claims?: {
    [k: string]: string;
  };
}
/**
 * One external authorization server (an identity provider: Keycloak, Entra ID, Okta, Auth0, another node-oidc-provider...). Its discovery document (RFC 8414, else OpenID Connect discovery) is fetched at start-up unless jwks_uri, and introspection.endpoint when introspecting, are given.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ExternalIssuer".
 */
export interface ExternalIssuer {
  /**
   * The issuer exactly as its tokens carry it in `iss` and as its discovery document names itself; https (http only on a loopback host), no query or fragment.
   */
  issuer: string;
  /**
   * What this server is called at the issuer: a token's `aud` (an introspection answer's `aud`) must contain it, usually the URL clients connect to (https://mcp.example.com/mcp, the RFC 8707 resource they ask for). One value, or a list of values any of which is accepted.
   */
  audience: string | [string, ...string[]];
  /**
   * URL of the issuer's signing keys (JWKS); https unless the host is loopback. Default: the jwks_uri of its discovery document.
   */
  jwks_uri?: string;
  /**
   * JWS algorithms accepted for its JWT access tokens: asymmetric only (never none, never an HMAC, which would let a public key sign).
   *
   * @minItems 1
   */
  algorithms?: [
    'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA',
    ...('RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA')[]
  ];
  /**
   * Require the JWT header typ at+jwt (RFC 9068). When false, a typ of at+jwt, application/at+jwt or JWT is accepted, and so is none (many providers omit it or write JWT); any other typ (an ID-JAG, a DPoP proof, a logout token) is refused.
   */
  strict_typ?: boolean;
  /**
   * Seconds of clock difference allowed when checking exp, nbf and iat.
   */
  clock_skew?: number;
  /**
   * Longest token (characters) looked at; a longer one is refused before it is decoded.
   */
  max_token_length?: number;
  /**
   * Longest a fetched key set is fresh, in seconds (shorter when its Cache-Control max-age says so, never shorter than jwks_refetch_interval). A token checked against the set is remembered no longer than the set is fresh; once it is stale, the next token (a remembered one too) waits for one fetch of the set and is checked against it — so a key the issuer withdraws stops verifying within this bound and one fetch. When the fetch fails, the keys held keep verifying.
   */
  jwks_max_age?: number;
  /**
   * Seconds between two fetches of the key set, at least: a token signed with a key id the held set lacks fetches it at once (one fetch however many tokens wait), unless the last fetch is more recent than this. Bounds what tokens with made-up key ids cost the issuer.
   */
  jwks_refetch_interval?: number;
  /**
   * RFC 7662 token introspection, for the issuer's opaque access tokens (and JWTs when it publishes no keys). This server authenticates to the endpoint as a client of the issuer.
   */
  introspection?: {
    /**
     * The introspection endpoint; https unless the host is loopback. Default: introspection_endpoint of the discovery document.
     */
    endpoint?: string;
    /**
     * This server's client id at the issuer.
     */
    client_id: string;
    /**
     * Its client secret, usually ${VAR}.
     */
    client_secret?: string;
    /**
     * Path (relative to the manifest) of a file holding the client secret; give this or client_secret, not both.
     */
    client_secret_file?: string;
    /**
     * How the client authenticates to the endpoint.
     */
    auth_method?: 'client_secret_basic' | 'client_secret_post';
    /**
     * Longest an active answer is reused, in seconds (never past the token's exp); also how long an inactive one is. This is the revocation lag: a token revoked at the issuer keeps working here for at most this long.
     */
    cache_ttl?: number;
  };
  /**
   * Claims read as scopes, in order: a space-separated string or an array of strings each (scope, scp, roles, groups; a dotted path reaches into an object, e.g. realm_access.roles). A claim name is looked up as it is first (Auth0's https://... claims), then as a dotted path into objects.
   *
   * @minItems 1
   */
  scopes_from?: [string, ...string[]];
  /**
   * Whether a value of those claims that is a scope of profile.scopes counts as that scope. Turn off to grant only what scope_map names.
   */
  direct_scopes?: boolean;
  /**
   * A claim value (a group, a role, a provider's own scope name) -> the scopes of profile.scopes it grants.
   */
  scope_map?: {
    [k: string]: Scope[];
  };
  /**
   * The most this issuer's tokens get, whatever their claims say. Default: all of profile.scopes.
   */
  scopes?: Scope[];
  /**
   * Claim whose value is the caller's subject; a token without it (a non-empty string) is refused. A claim name is looked up as it is first (Auth0's https://... claims), then as a dotted path into objects.
   */
  subject_claim?: string;
  /**
   * Claims read, in order, for the caller's client id (the first that is a string).
   */
  client_claims?: string[];
  /**
   * Claims kept on the caller for a tool's bind (principal.claims.NAME): NAME -> the token claim. Only string values (at most 256 characters) are kept. A claim name is looked up as it is first (Auth0's https://... claims), then as a dotted path into objects.
   */
  claims?: {
    [k: string]: string;
  };
  limits?: Limit;
}
/**
 * A quota per principal: at most `requests` calls per window of `window_ms`, and at most `concurrent` calls running at once; a limit not set is off. On a tool, resource or prompt it counts that capability's calls per principal (each token, each OAuth user).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Limit".
 */
export interface Limit {
  /**
   * Calls allowed per window.
   */
  requests?: number;
  /**
   * Length of the request window in milliseconds.
   */
  window_ms?: number;
  /**
   * Calls allowed to run at the same time.
   */
  concurrent?: number;
}
/**
 * What the server publishes about its authorization: issuer, endpoints and scopes. Every scope used anywhere must be declared here.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "AuthProfile".
 */
export interface AuthProfile {
  /**
   * Issuer published in metadata. Default: oauth.issuer.
   */
  issuer?: string;
  /**
   * Authorization endpoint published in metadata. Default: ISSUER/authorize.
   */
  authorization_url?: string;
  /**
   * Token endpoint published in metadata. Default: ISSUER/token.
   */
  token_url?: string;
  /**
   * Every scope this server knows, with an optional description shown on /docs and consent pages.
   */
  scopes?: (
    | Scope
    | {
        name: Scope;
        /**
         * What the scope allows; shown on /docs and consent pages.
         */
        description?: string;
      }
  )[];
}
/**
 * MCP 2026-07-28 caching hint: clients may reuse the answer for ttl_ms; scope says whether a shared cache may serve it to other callers.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "CacheHint".
 */
export interface CacheHint {
  /**
   * How long the answer stays fresh, in milliseconds (ttlMs); 0: immediately stale.
   */
  ttl_ms: number;
  /**
   * cacheScope. auto: public only on a public /mcp route for an answer that cannot depend on the caller; public: shareable unless the answer depends on the caller's scopes (then always private); private: only within the same authorization.
   */
  scope: 'auto' | 'public' | 'private';
}
/**
 * How an endpoint lists its tools to MCP clients (docs/discovery.md).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Discovery".
 */
export interface Discovery {
  /**
   * direct: tools/list lists every tool the caller may call. progressive: tools/list lists four meta-tools — search_tools, describe_tools, call_tool and, in a 2025 session, load_tools — that find, describe and call the endpoint's tools under the same admission as a direct call. auto: progressive when the endpoint's listing has more than auto_tools tools or costs more than auto_tokens estimated tokens, decided when the catalog is built (start-up, reload, an upstream's list change) and logged.
   */
  mode?: 'direct' | 'progressive' | 'auto';
  /**
   * auto: progressive when the endpoint serves more tools than this. Tool selection degrades past a few dozen tools in a model's context.
   */
  auto_tools?: number;
  /**
   * auto: progressive when the endpoint's whole tools listing costs more estimated tokens than this (o200k, the JSON text of every tool's definition).
   */
  auto_tokens?: number;
}
/**
 * A tool. Exactly one backend: template, content, http, exec, fs, sqlite or module.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Tool".
 */
export interface Tool {
  /**
   * Dotted name <area>.<action> (letters, digits, _ and -).
   */
  name: string;
  /**
   * Human-readable title.
   */
  title?: string;
  /**
   * What the tool does; shown to callers and models.
   */
  description: string;
  input_schema?: InputSchema;
  /**
   * JSON Schema of the tool's structured result, listed as outputSchema (an object schema). The tool must then answer structured content that matches it (an http tool's JSON object answer is; MCP clients check it). `openapi` sources write it from an operation's first 2xx JSON response when that is an object schema.
   */
  output_schema?: {
    /**
     * Always object: MCP lists only object output schemas.
     */
    type: 'object';
  };
  /**
   * scalar: the result is text. json: the backend's output is parsed as JSON and returned as structured content (and as text).
   */
  output_mode?: 'scalar' | 'json';
  /**
   * false: a result larger than server.inline_limit is returned as a resource link (svc://results/ID, readable by the same caller for 15 minutes) instead of inline.
   */
  inline_ok?: boolean;
  /**
   * Scopes a caller needs, all of them; each must be declared in profile.scopes, and a pattern (tenant:{{tenant}}.read) must match at least one declared scope. `svc validate` warns (SCOPE_ADVISED) when a tool that may change something (exec, module, http other than GET, fs write, sqlite writable and not a plain SELECT, unless readOnlyHint) needs no scope on a server that serves others: OAuth with login.mode users or upstream or enterprise_issuers, or a public /svc, /mcp or /ws on a server reachable from other machines. Writing required_scopes: [] says it is open to every caller on purpose.
   */
  required_scopes?: RequiredScope[];
  /**
   * MCP tool annotations (readOnlyHint, destructiveHint, …), passed through. readOnlyHint: true also tells `svc validate` the tool only reads, so it gives no SCOPE_ADVISED warning (not believed of an fs write).
   */
  annotations?: {};
  /**
   * Upper bound in milliseconds for the whole call of a module tool (its context.signal aborts then and the caller gets BACKEND_TIMEOUT). Other backends use their own timeout_ms.
   */
  timeout_ms?: number;
  /**
   * Whether a call runs as a task (started, then polled, cancelled, listed by its caller): forbidden (always a plain call), optional (a task when the client asks: MCP params.task or the tasks extension, /svc Prefer: respond-async), required (always a task; a plain MCP call is refused). `svc validate` warns when a tool needing a *.admin or *.write scope, or with a backend timeout over 60 s, does not require one.
   */
  task?: 'forbidden' | 'optional' | 'required';
  /**
   * MCP 2026-07-28 with the tasks extension: the handler may ask the client for input (context.channel.request) before the task exists. The tools/call answers input_required rounds until the handler calls context.channel.startTask() (or ends); only then is the task created, and the same run goes on as the task. Elsewhere startTask() does nothing and questions are asked inside the task.
   */
  ask_before_task?: boolean;
  /**
   * template/content: answer as a tool error result (for testing clients).
   */
  is_error?: boolean;
  /**
   * Backend: logic-less text with {{arg}} placeholders.
   */
  template?: string;
  /**
   * Backend: static content blocks (text templated).
   */
  content?: ContentBlock[];
  http?: HttpBackend;
  exec?: ExecBackend;
  fs?: FsBackend;
  sqlite?: SqliteBackend;
  module?: ModuleRef;
  limits?: Limit;
  /**
   * Arguments whose value comes from the caller's credential: argument name -> principal.sub, principal.client_id or principal.claims.NAME. A missing argument is filled in; a different client-supplied value is refused (ARGUMENT_BOUND).
   */
  bind?: {
    [k: string]: string;
  };
  ui?: ToolView;
}
/**
 * JSON Schema of the arguments: an object schema, draft-07 (or 2020-12 when its $schema says so). Other JSON Schema keywords may be used; a keyword the validator does not know is refused (INPUT_SCHEMA_INVALID).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "InputSchema".
 */
export interface InputSchema {
  /**
   * Always object: arguments are a JSON object.
   */
  type: 'object';
  /**
   * One JSON Schema per argument, by name.
   */
  properties?: {};
  /**
   * Names of the arguments that must be given.
   */
  required?: string[];
  /**
   * false refuses arguments not listed in properties; a schema constrains them.
   */
  additionalProperties?: boolean | {};
}
/**
 * A static content block. Text is templated with {{arg}}; image/audio data comes from base64 `data` or a `file`.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ContentBlock".
 */
export interface ContentBlock {
  /**
   * Kind of block: text, image, audio, resource (embedded) or resource_link.
   */
  type: 'text' | 'image' | 'audio' | 'resource' | 'resource_link';
  /**
   * text: the text (templated).
   */
  text?: string;
  /**
   * image/audio: base64 data.
   */
  data?: string;
  /**
   * image/audio: file to read (relative to the manifest) instead of data.
   */
  file?: string;
  /**
   * image/audio/resource: MIME type.
   */
  mime_type?: string;
  /**
   * resource/resource_link: the URI.
   */
  uri?: string;
  /**
   * resource_link: a name.
   */
  name?: string;
  /**
   * resource: base64 content instead of text.
   */
  blob?: string;
}
/**
 * Answer by an HTTP call. url, headers and body are templated with {{arg}} (URL parts are percent-encoded); `parameters` and `request_body` place arguments OpenAPI-style instead. A tool's result maps the answer: a JSON body is structured content (and text), a text body text, an image or audio body an image or audio block, any other body an embedded resource (base64 blob, within max_bytes); a non-2xx answer fails the call (BACKEND_FAILED, a tool error on /mcp) with the status and the API's own message.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "HttpBackend".
 */
export interface HttpBackend {
  /**
   * HTTP method.
   */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * URL template, e.g. https://api.example.com/items/{{id}}.
   */
  url: string;
  /**
   * Request headers; use ${VAR} for secrets.
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * JSON body; string values are templated, a string that is exactly {{arg}} keeps the argument's type.
   */
  body?: {
    [k: string]: unknown;
  };
  /**
   * Where arguments go, OpenAPI-style: each entry sends one argument as a path, query, header or cookie parameter, serialized by its style and explode exactly as OpenAPI 3.1 (§ Style Examples) says and percent-encoded per RFC 3986 (in a path value every reserved character is escaped). An absent argument sends nothing. A path parameter fills the url's {{arg}} placeholder, which must stand in the url's path and be a required property of input_schema.
   */
  parameters?: HttpParameter[];
  /**
   * Send one argument as the request body (instead of the templated `body`; not with GET): an absent argument sends no body.
   */
  request_body?: {
    /**
     * The argument that is the body.
     */
    arg?: string;
    /**
     * application/json: the argument's JSON. application/x-www-form-urlencoded: the argument must be an object; each property a name=value pair (an array property repeats its name, an object property is sent as its JSON text, null as an empty value).
     */
    content_type?: 'application/json' | 'application/x-www-form-urlencoded';
  };
  /**
   * How long, in milliseconds, the HTTP call may take (connecting, redirects and reading the whole answer); past it the call fails with BACKEND_TIMEOUT.
   */
  timeout_ms?: number;
  /**
   * Largest response body accepted, in bytes or as a string such as 512kb or 1mb; a larger one fails the call with BACKEND_FAILED.
   */
  max_bytes?: number | string;
  auth?: OutboundAuth;
}
/**
 * The credential fastsvc sends when it calls a backend: exactly one of static, client_credentials, token_exchange, upstream_login. The caller's own token is never passed on; none of these is ever logged.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OutboundAuth".
 */
export interface OutboundAuth {
  static?: OutboundStatic;
  client_credentials?: OutboundClientCredentials;
  token_exchange?: OutboundTokenExchange;
  upstream_login?: OutboundUpstreamLogin;
}
/**
 * A fixed secret: `bearer` (sent as Authorization: Bearer) or `header` with `value` (sent as that header). Write the secret as ${VAR} or give the *_file form; a literal is refused (SECRET_LITERAL).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OutboundStatic".
 */
export interface OutboundStatic {
  /**
   * A bearer token, written ${VAR}.
   */
  bearer?: string;
  /**
   * Path (relative to the manifest) of a file holding the bearer token.
   */
  bearer_file?: string;
  /**
   * The header that carries `value` (e.g. X-Api-Key).
   */
  header?: string;
  /**
   * The header's value, written ${VAR}.
   */
  value?: string;
  /**
   * Path (relative to the manifest) of a file holding the header's value.
   */
  value_file?: string;
}
/**
 * OAuth client credentials (RFC 6749 section 4.4): fastsvc's own token for the backend, the same for every caller. Cached until shortly before it expires; concurrent calls share one token request.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OutboundClientCredentials".
 */
export interface OutboundClientCredentials {
  /**
   * The token endpoint (https; http only on a loopback address). It comes from the manifest, never from a caller.
   */
  token_url: string;
  /**
   * This server's client id at that token endpoint.
   */
  client_id: string;
  /**
   * Its client secret, written ${VAR} (a literal is refused); or give client_secret_file.
   */
  client_secret?: string;
  /**
   * Path (relative to the manifest) of a file holding the client secret; give this or client_secret, not both.
   */
  client_secret_file?: string;
  /**
   * How the client authenticates at the token endpoint (RFC 6749 section 2.3.1).
   */
  auth_method?: 'client_secret_basic' | 'client_secret_post';
  /**
   * Scopes to ask for (the token request's scope).
   */
  scopes?: string[];
  /**
   * Resource indicator (RFC 8707) of the backend: the token's audience at most identity providers.
   */
  resource?: string;
  /**
   * audience parameter (RFC 8693 section 2.1; some providers take it for client credentials too): the logical name of the backend.
   */
  audience?: string;
  /**
   * How long one token request may take; past it the call fails with OUTBOUND_AUTH_FAILED (reason token_timeout).
   */
  timeout_ms?: number;
}
/**
 * RFC 8693 token exchange: the caller's own token from an external issuer (external_issuers) is the subject_token, exchanged at token_url for a token for this backend (audience and/or resource). Only callers with an external issuer's token can use such a tool; not allowed on a tool that may run as a task. Exchanged tokens are cached per subject token until they (or the subject token) expire.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OutboundTokenExchange".
 */
export interface OutboundTokenExchange {
  /**
   * The token endpoint (https; http only on a loopback address). It comes from the manifest, never from a caller.
   */
  token_url: string;
  /**
   * This server's client id at that token endpoint.
   */
  client_id: string;
  /**
   * Its client secret, written ${VAR} (a literal is refused); or give client_secret_file.
   */
  client_secret?: string;
  /**
   * Path (relative to the manifest) of a file holding the client secret; give this or client_secret, not both.
   */
  client_secret_file?: string;
  /**
   * How the client authenticates at the token endpoint (RFC 6749 section 2.3.1).
   */
  auth_method?: 'client_secret_basic' | 'client_secret_post';
  /**
   * Scopes to ask for (the token request's scope).
   */
  scopes?: string[];
  /**
   * Resource indicator (RFC 8707) of the backend: the token's audience at most identity providers.
   */
  resource?: string;
  /**
   * audience parameter (RFC 8693 section 2.1; some providers take it for client credentials too): the logical name of the backend.
   */
  audience?: string;
  /**
   * How long one token request may take; past it the call fails with OUTBOUND_AUTH_FAILED (reason token_timeout).
   */
  timeout_ms?: number;
  /**
   * requested_token_type (RFC 8693 section 3).
   */
  requested_token_type?: string;
}
/**
 * The access token the signed-in person holds at the identity provider they signed in through (oauth.login.mode upstream), refreshed when it expires. Only callers who signed in through that provider can use such a tool.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OutboundUpstreamLogin".
 */
export interface OutboundUpstreamLogin {
  /**
   * The provider (a name in oauth.login.upstreams) whose token the backend takes.
   */
  upstream: string;
}
/**
 * Answer by running a fixed program (never through a shell). Each argv element is templated.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ExecBackend".
 */
export interface ExecBackend {
  /**
   * Program and arguments; argv[0] is not templated.
   *
   * @minItems 1
   */
  argv: [string, ...string[]];
  /**
   * Working directory, fixed when the manifest loads (never templated). An absolute path (often ${VAR}, e.g. ${PROJECT_DIR}) is the folder the operator named, wherever it is; a relative one is resolved against the manifest's folder and must stay under it (neither `..` nor a symlink may lead out). It decides where the program runs, never which: argv[0] is found without it, and the child's PATH keeps only absolute entries.
   */
  cwd?: string;
  /**
   * Environment variables passed through (allow-list).
   */
  env?: string[];
  /**
   * How long, in milliseconds, the program may run; past it its process group is killed and the call fails with BACKEND_TIMEOUT.
   */
  timeout_ms?: number;
  /**
   * Largest stdout accepted, in bytes or as a string such as 512kb or 1mb; past it the process is killed and the call fails with BACKEND_FAILED.
   */
  max_bytes?: number | string;
}
/**
 * Answer from files under a root. path is templated; .., absolute paths and symlinks out of the root are refused.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "FsBackend".
 */
export interface FsBackend {
  /**
   * Root folder, relative to the manifest.
   */
  root: string;
  /**
   * read a file, list a folder, or write a file (write must be declared here).
   */
  op: 'read' | 'list' | 'write';
  /**
   * Path template under root.
   */
  path?: string;
  /**
   * write: content template.
   */
  content?: string;
  /**
   * Largest file read, folder listing (as JSON) or content written, in bytes or as a string such as 512kb or 1mb. A larger file or listing fails the call with BACKEND_FAILED; larger content to write is refused with INVALID_INPUT.
   */
  max_bytes?: number | string;
}
/**
 * Answer with one parameterized query. Arguments bind as :name parameters, never spliced into SQL.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "SqliteBackend".
 */
export interface SqliteBackend {
  /**
   * SQLite file, relative to the manifest.
   */
  path: string;
  /**
   * One SQL statement using :arg parameters.
   */
  query: string;
  /**
   * Open read-write; read-only otherwise.
   */
  writable?: boolean;
  /**
   * How long, in milliseconds, a statement waits for a lock another connection holds (SQLite busy timeout); past it the call fails with BACKEND_TIMEOUT.
   */
  timeout_ms?: number;
  /**
   * Most rows a reading query returns; further rows are not read.
   */
  max_rows?: number;
}
/**
 * An MCP Apps view of the tool (extension io.modelcontextprotocol/ui): an HTML page a host renders in a sandboxed iframe beside the tool's result. fastsvc serves it as a ui:// resource (MIME type text/html;profile=mcp-app) and links it from the tool's _meta.ui.resourceUri, for clients that declare the extension. Give `view` (a file) or `template` (inline, filled in the host from the call's arguments and structured result, every value HTML-escaped); neither only with `visibility` (a tool a view calls but that shows no view of its own). See docs/apps.md.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ToolView".
 */
export interface ToolView {
  /**
   * An HTML file under the manifest's folder (read like a resource `file`, on every read). Several tools may name the same file: it is one resource, and the view settings below must then be the same on each.
   */
  view?: string;
  /**
   * Inline HTML filled in by the host: {{input.NAME}} (an argument), {{result.PATH}} (the structured result, or the result's text when the tool returns none), {{#result.rows}}…{{/result.rows}} (repeated for each item of an array; inside, {{.}} is the item and {{NAME}} its field). Every value is HTML-escaped. fastsvc wraps it in a page with a small script speaking the extension's postMessage protocol (ui/initialize, tool-input, tool-result); the page loads nothing else.
   */
  template?: string;
  /**
   * The view's resource URI. Default: ui://PATH for a `view` file (its path relative to the manifest's folder, e.g. ui://views/orders.html), ui://TOOL-NAME for a `template`.
   */
  uri?: string;
  /**
   * The view resource's title (default: the tool's title or name).
   */
  title?: string;
  csp?: ViewCsp;
  /**
   * Browser permissions the view asks the host for (the extension's names; a host may refuse them).
   */
  permissions?: ('camera' | 'microphone' | 'geolocation' | 'clipboardWrite')[];
  /**
   * true: the view asks the host for a visible border and background; false: none. Omitted: the host decides.
   */
  prefers_border?: boolean;
  /**
   * A dedicated sandbox origin for the view (host-dependent format, e.g. a904794854a047f6.claudemcpcontent.com); passed through as _meta.ui.domain.
   */
  domain?: string;
  /**
   * Who may see and call the tool: model (the agent's tool list) and/or app (views of this server). A tool with [app] only is not listed to clients that do not declare the MCP Apps extension; hosts keep it out of the model's list. It is called like any tool (same scopes, audit, quotas).
   *
   * @minItems 1
   */
  visibility?: ['model' | 'app', ...('model' | 'app')[]];
  /**
   * Scopes a caller needs to read the view, all of them. Default: the scopes every tool naming the view requires (their intersection), so whoever may call one of those tools may read its view; scopes given here must be required by each such tool. Tenant patterns ({{arg}}) are not allowed (a read has no arguments).
   */
  required_scopes?: Scope[];
}
/**
 * Origins the view may reach, sent as the resource's _meta.ui.csp; the host builds the iframe's Content-Security-Policy from them and allows nothing else (no list: the extension's restrictive default).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "ViewCsp".
 */
export interface ViewCsp {
  /**
   * Origins the view may fetch from or open WebSockets to (connect-src) (scheme://host[:port]; no path, query, fragment or credentials).
   *
   * @maxItems 64
   */
  connect_domains?: string[];
  /**
   * Origins of scripts, styles, images, fonts and media (img-src, script-src, style-src, font-src, media-src) (scheme://host[:port]; no path, query, fragment or credentials); a subdomain wildcard is allowed here, as the extension allows: https://*.example.com.
   *
   * @maxItems 64
   */
  resource_domains?: string[];
  /**
   * Origins of iframes the view may nest (frame-src) (scheme://host[:port]; no path, query, fragment or credentials).
   *
   * @maxItems 64
   */
  frame_domains?: string[];
  /**
   * Origins the document's <base> may name (base-uri) (scheme://host[:port]; no path, query, fragment or credentials).
   *
   * @maxItems 64
   */
  base_uri_domains?: string[];
}
/**
 * A resource. uri is fixed, or uri_template with {var} parts. Content from text, blob, file (a folder of files with a templated file), http or module.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Resource".
 */
export interface Resource {
  /**
   * Fixed URI, e.g. docs://readme.
   */
  uri?: string;
  /**
   * RFC 6570 template, e.g. test://template/{id}/data: {id} matches one path segment, {+path} (reserved expansion) also slashes, e.g. docs://{+path}. Variables are usable as {{id}} in text and file.
   */
  uri_template?: string;
  /**
   * Short name.
   */
  name: string;
  /**
   * Human-readable title.
   */
  title?: string;
  /**
   * What the resource holds; shown to callers and on /docs.
   */
  description?: string;
  /**
   * MIME type of the content.
   */
  mime_type?: string;
  /**
   * Scopes a caller needs, all of them; each must be declared in profile.scopes, and a pattern (tenant:{{tenant}}.read) must match at least one declared scope.
   */
  required_scopes?: RequiredScope[];
  cache?: CacheHint;
  /**
   * Content: templated text.
   */
  text?: string;
  /**
   * Content: base64 bytes.
   */
  blob?: string;
  /**
   * Content: a file relative to the manifest (binary types are base64). With uri_template it may hold the template's variables, to serve a folder of files: file: docs/{{path}} with uri_template: docs://{+path} reads docs/guide/intro.md as docs://guide/intro.md — only under the folder before the first variable (which must exist), never a path with .., an absolute path, a symlink out of it or a name starting with a dot; the path variable is completed from the folder's entries.
   */
  file?: string;
  http?: HttpBackend;
  module?: ModuleRef;
  limits?: Limit;
}
/**
 * A prompt: declared arguments and either templated messages or a module that returns the messages.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Prompt".
 */
export interface Prompt {
  /**
   * Dotted name <area>.<action> (letters, digits, _ and -).
   */
  name: string;
  /**
   * Human-readable title.
   */
  title?: string;
  /**
   * What the prompt is for; shown to callers and on /docs.
   */
  description?: string;
  /**
   * Arguments the caller fills in; each is usable as {{name}} in the messages.
   */
  arguments?: PromptArgument[];
  /**
   * The messages returned, in order; their text is templated with the arguments. Give messages or module, not both.
   *
   * @minItems 1
   */
  messages?: [PromptMessage, ...PromptMessage[]];
  /**
   * Scopes a caller needs, all of them; each must be declared in profile.scopes, and a pattern (tenant:{{tenant}}.read) must match at least one declared scope.
   */
  required_scopes?: RequiredScope[];
  /**
   * Escape hatch: ./file.js#exportName, relative to the manifest, called with (input, context).
   */
  module?: string;
  limits?: Limit;
}
/**
 * One argument of a prompt, filled in by the caller.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "PromptArgument".
 */
export interface PromptArgument {
  /**
   * Argument name, usable as {{name}} in the messages.
   */
  name: string;
  /**
   * What the argument means; shown to callers.
   */
  description?: string;
  /**
   * The caller must give this argument.
   */
  required?: boolean;
  /**
   * Known values, offered by completion/complete.
   */
  values?: string[];
}
/**
 * One message of a prompt: a role, and either text or one content block.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "PromptMessage".
 */
export interface PromptMessage {
  /**
   * Who speaks: user or assistant.
   */
  role: 'user' | 'assistant';
  /**
   * Templated text (shorthand for a text content block).
   */
  text?: string;
  content?: ContentBlock;
}
/**
 * An MCP server fastsvc connects to and whose capabilities it serves as its own, behind its own authentication, scopes, quotas and audit. Give exactly one of `command` (a local server on stdio) or `url` (Streamable HTTP). The caller's token is never passed on.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Upstream".
 */
export interface Upstream {
  /**
   * Identifies the upstream in logs, /readyz and metrics; unique.
   */
  name: string;
  /**
   * stdio: the program and its arguments, run without a shell in a process group of its own (ended whole at shutdown). argv[0] is a path (relative to the manifest) or a name looked up on env.PATH, else on fastsvc's own PATH.
   *
   * @minItems 1
   */
  command?: [string, ...string[]];
  /**
   * stdio: working directory, as the exec backend's cwd: an absolute path (often ${VAR}, e.g. ${PROJECT_DIR}) is used as given; a relative one is resolved against the manifest's folder and must stay under it (neither `..` nor a symlink may lead out). Fixed at start-up, never templated.
   */
  cwd?: string;
  /**
   * stdio: the child's whole environment (an allow-list: nothing else of fastsvc's environment reaches it; absent, the child gets none). Values may be ${VAR}, e.g. PATH: ${PATH}; the child's PATH keeps only its absolute entries.
   */
  env?: {
    [k: string]: string;
  };
  /**
   * Streamable HTTP: the upstream's MCP endpoint (http or https). fastsvc speaks 2026-07-28 when the upstream offers it (server/discover), else 2025-11-25.
   */
  url?: string;
  /**
   * Streamable HTTP: headers sent on every request to the upstream (values may be ${VAR}). Never the caller's.
   */
  headers?: {
    [k: string]: string;
  };
  auth?: OutboundAuth;
  expose?: UpstreamExpose;
  /**
   * Bound on one call (tools/call, resources/read, prompts/get), its wait for a free slot included; past it the call is cancelled upstream and fails with BACKEND_TIMEOUT.
   */
  timeout_ms?: number;
  /**
   * Bound on connecting and listing the upstream's capabilities, at start-up (which waits at most this long for it) and at each reconnect; also how long fastsvc waits for the answer to the DELETE that ends a Streamable HTTP session (a failed attempt's, a reconnect's, a removed upstream's, at shutdown).
   */
  connect_timeout_ms?: number;
  /**
   * Calls sent to the upstream at once; a call over it waits for a free slot within its timeout_ms.
   */
  max_in_flight?: number;
  /**
   * Largest answer accepted from the upstream for one call, in bytes or as 512kb or 1mb; a larger one fails with BACKEND_FAILED (reason too_large).
   */
  max_bytes?: number | string;
  /**
   * How often the capability lists are read again when the upstream does not announce list changes: on 2025-11-25 it declares no listChanged; on 2026-07-28 its subscriptions/listen stream (which fastsvc keeps open) does not carry them, or cannot be opened; 0: never.
   */
  poll_ms?: number;
  /**
   * 2026-07-28 upstreams: the most input_required rounds one call goes through (each round's questions asked of that call's caller) before it fails with BACKEND_FAILED (reason too_many_rounds).
   */
  max_input_rounds?: number;
  /**
   * Reconnecting after the upstream is lost (a stdio child that exited, an HTTP upstream that does not answer): the first wait, doubled after each failed attempt up to max_ms. Calls meanwhile fail with UPSTREAM_UNAVAILABLE.
   */
  restart?: {
    /**
     * First wait.
     */
    min_ms?: number;
    /**
     * Longest wait.
     */
    max_ms?: number;
  };
  /**
   * Record the imported definitions in a lock file beside the manifest and serve a changed definition only once the operator accepts it (`fastsvc upstreams accept NAME`).
   */
  pin?: boolean;
}
/**
 * Which of the upstream's tools, resources, resource templates and prompts fastsvc serves, under which names and scopes. Applied again on every reload and on every change upstream.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "UpstreamExpose".
 */
export interface UpstreamExpose {
  /**
   * Put in front of every imported tool and prompt name (e.g. `vendor.`); resource URIs are kept as the upstream gives them. The result must be a valid tool name (letters, digits, _ - and dots); a tool whose name does not fit is skipped with a warning.
   */
  prefix?: string;
  /**
   * Only these names (tool and prompt names, resource URIs or URI templates, as the upstream calls them); `*` matches any run of characters. Default: everything.
   */
  include?: string[];
  /**
   * Never these names (same matching as include), applied after include.
   */
  exclude?: string[];
  /**
   * Scopes a caller needs for every imported capability unless overrides says otherwise; each must be declared in profile.scopes. Writing [] makes them open to every authenticated caller on purpose.
   */
  required_scopes?: Scope[];
  auth?: OutboundAuth;
  /**
   * Per tool, by its upstream name (without the prefix).
   */
  overrides?: {
    [k: string]: UpstreamOverride;
  };
}
/**
 * What fastsvc says about one imported tool, over what the upstream and expose say. The upstream's own text never changes scopes.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "UpstreamOverride".
 */
export interface UpstreamOverride {
  /**
   * Scopes a caller needs for this tool, instead of expose.required_scopes; each must be declared in profile.scopes.
   */
  required_scopes?: Scope[];
  /**
   * Whether a call runs as a task (as a tool's `task`).
   */
  task?: 'forbidden' | 'optional' | 'required';
  /**
   * Replaces the upstream's description.
   */
  description?: string;
  /**
   * Replaces the upstream's title.
   */
  title?: string;
  limits?: Limit;
  /**
   * Bound on one call of this tool, instead of the upstream's timeout_ms.
   */
  timeout_ms?: number;
  auth?: OutboundAuth;
  /**
   * What this tool asks its caller during a call (the upstream's elicitation/create, sampling/createMessage, roots/list), which only an MCP client can answer: the tool is not offered on /svc (not listed; a call is NOT_FOUND and never reaches the upstream). On /mcp and /ws it is served as usual.
   *
   * @minItems 1
   */
  asks?: ['elicitation' | 'sampling' | 'roots', ...('elicitation' | 'sampling' | 'roots')[]];
}
/**
 * One OpenAPI document (3.0, 3.1 or Swagger 2.0) whose operations become http tools. Each operation becomes a tool named by `naming`; its arguments are the parameters (path, query, header, cookie) by name and, for a JSON or form body, `body`; a name used twice gets the suffix `_in` of its location (`id_query`). An operation fastsvc cannot call (multipart or binary body, a method other than GET POST PUT PATCH DELETE, a `file` parameter) is skipped with a `validate` warning (OPENAPI_SKIPPED).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "OpenApiSource".
 */
export interface OpenApiSource {
  /**
   * Names this source in messages; unique among `openapi` sources.
   */
  name: string;
  /**
   * The document (YAML or JSON): a path relative to the manifest's folder, or a URL — https (http only to a loopback address), fetched at every load (30 s, 64 MiB at most, no redirect) and then `sha256` is required. A file's relative `$ref`s may name files in its own folder or below; a fetched document's $refs stay within it.
   */
  document: string;
  /**
   * The document's sha256 (hex): checked when given; a document that differs is refused.
   */
  sha256?: string;
  /**
   * Where the API is called (no trailing slash needed). Default: the document's first server with its variables' defaults (Swagger 2.0: schemes, host, basePath); a relative one needs base_url. An operation's (else its path's) own servers win for it, a relative one resolved against the base URL; base_url, given, replaces every absolute server URL of the document.
   */
  base_url?: string;
  auth?: OutboundAuth;
  /**
   * Extra request headers sent with every operation; use ${VAR} for secrets. A header parameter of the document these set is left out of the tools' arguments.
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * Only operations that match every filter given here are served.
   */
  include?: {
    /**
     * operationId is one of these.
     *
     * @minItems 1
     */
    operations?: [string, ...string[]];
    /**
     * The operation has at least one of these tags.
     *
     * @minItems 1
     */
    tags?: [string, ...string[]];
    /**
     * The path (as the document writes it, e.g. /pet/{petId}) matches one of these globs: `*` matches within one segment, `**` across segments.
     *
     * @minItems 1
     */
    paths?: [string, ...string[]];
    /**
     * The HTTP method is one of these.
     *
     * @minItems 1
     */
    methods?: ['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', ...('GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE')[]];
  };
  /**
   * Operations that match every filter given here are not served.
   */
  exclude?: {
    /**
     * operationId is one of these.
     *
     * @minItems 1
     */
    operations?: [string, ...string[]];
    /**
     * The operation has at least one of these tags.
     *
     * @minItems 1
     */
    tags?: [string, ...string[]];
    /**
     * The path (as the document writes it, e.g. /pet/{petId}) matches one of these globs: `*` matches within one segment, `**` across segments.
     *
     * @minItems 1
     */
    paths?: [string, ...string[]];
    /**
     * The HTTP method is one of these.
     *
     * @minItems 1
     */
    methods?: ['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', ...('GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE')[]];
  };
  /**
   * The tool name of an operation: placeholders {operationId} (without one: {method}_{path_name}), {tag} (the first tag, else default), {method} (lower case), {path_name} (the path's segments joined by _, braces dropped; root for /). In a placeholder's value `/` becomes `.` and any other character a tool name cannot hold becomes `_`. Two operations with one name are an error.
   */
  naming?: string;
  /**
   * Scopes every operation's tool requires (each declared in profile.scopes), unless scope_map or an override says otherwise.
   */
  required_scopes?: RequiredScope[];
  /**
   * Every operation's tool `task` (as a tool's), unless its override gives one. Omitted: the tools say nothing (a plain tool's default).
   */
  task?: 'forbidden' | 'optional' | 'required';
  /**
   * The document's OAuth2 scope → the profile scopes a caller needs. When given, an operation whose security requirements name mapped scopes requires all their profile scopes (every alternative's, so the tool is never more open than any of them); one that names none requires `required_scopes`.
   */
  scope_map?: {
    [k: string]: RequiredScope[];
  };
  /**
   * Per operationId: what to write differently in its tool. An operationId the document does not have is an error.
   */
  overrides?: {
    [k: string]: {
      /**
       * The tool name, instead of `naming`.
       */
      name?: string;
      /**
       * The tool description, instead of the operation's.
       */
      description?: string;
      /**
       * The scopes this tool requires, instead of `required_scopes` / `scope_map`.
       */
      required_scopes?: RequiredScope[];
      /**
       * As a tool's `task`.
       */
      task?: 'forbidden' | 'optional' | 'required';
      /**
       * Merged over the annotations made from the method (GET readOnlyHint, DELETE destructiveHint, PUT idempotentHint).
       */
      annotations?: {};
    };
  };
  /**
   * Each tool's `http.timeout_ms` (default: the http backend's).
   */
  timeout_ms?: number;
  /**
   * Each tool's `http.max_bytes` (default: the http backend's).
   */
  max_bytes?: number | string;
}
/**
 * One named endpoint (docs/endpoints.md).
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "Endpoint".
 */
export interface Endpoint {
  /**
   * serverInfo.name on initialize and in the 2026-07-28 results' _meta. Default: the manifest's name, "/" and the endpoint's name.
   */
  server_name?: string;
  /**
   * The endpoint's own instructions to the model (initialize, server/discover). Default: none.
   */
  instructions?: string;
  /**
   * Scopes a caller must hold, all of them, to use the endpoint at all: checked at the door, before any method (403 insufficient_scope naming them); each must be declared in profile.scopes. Each capability's own required_scopes still apply.
   */
  required_scopes?: Scope[];
  select?: EndpointSelect;
  discovery?: Discovery;
}
/**
 * Which capabilities the endpoint serves. Absent: everything. Each key is a list that matches when any of its items matches (OR); a capability is served when every key given matches it (AND). An empty list matches nothing.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "EndpointSelect".
 */
export interface EndpointSelect {
  /**
   * Globs over tool and prompt names and resource URIs (a template: its URI template): * any run of characters, ? one character; the whole name must match. E.g. github_*, notes.*, file:///docs/*.
   */
  names?: string[];
  /**
   * Where a capability comes from: an `openapi` source's or an upstream's name, or `manifest` for the manifest's own tools, resources and prompts.
   */
  sources?: string[];
  /**
   * Tags a tool carries (an OpenAPI operation's tags): a tool with any of them. Resources and prompts carry no tags, so a `tags` selection leaves them out.
   */
  tags?: string[];
}
/**
 * The code API's server config (createApp(svc, config), serve()): a manifest's server, routes, auth, oauth and profile sections, plus where relative paths resolve and where the config came from. svc.yaml's loader builds exactly this.
 *
 * This interface was referenced by `SvcManifest`'s JSON-Schema
 * via the `definition` "SvcServerConfig".
 */
export interface SvcServerConfig {
  /**
   * Public URL (scheme://host:port), as a manifest's base_url. Default: the listening socket's address.
   */
  base_url?: string;
  server?: ServerSettings;
  routes?: Routes;
  audit?: AuditConfig;
  state?: StateStore;
  auth?: BearerAuthConfig;
  oauth?: OAuthConfig;
  external_issuers?: ExternalIssuers;
  upstreams?: Upstreams;
  profile?: AuthProfile;
  /**
   * Folder that relative paths (token_file, sqlite files) resolve against. Default: the working directory.
   */
  base_dir?: string;
  /**
   * The manifest file this config came from, if any (for logs and reload).
   */
  manifest_path?: string;
  /**
   * sha256 of the manifest file; shown in /metadata.
   */
  config_hash?: string;
}
