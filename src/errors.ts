// SvcError and the one registry of error codes.
// Guarantees: every error fastsvc raises on purpose carries a code from CODES,
// each code maps to one HTTP status and one JSON-RPC error code, and the text of
// a message is never part of the contract (tests assert codes).

export interface CodeInfo {
  /** HTTP status on /svc and for HTTP-level answers. */
  status: number;
  /** JSON-RPC error code on /mcp and /ws when the error is not a tool result. */
  rpc: number;
  /** One line (Markdown) for the error reference, docs/reference/errors.md (`npm run gen:docs`). */
  doc: string;
}

/** The manifest's problems: reported as FILE:LINE:COL: CODE: message. */
export const MANIFEST_CODES = {
  YAML_SYNTAX: { status: 400, rpc: -32602, doc: 'svc.yaml is not valid YAML.' },
  SCHEMA_VIOLATION: { status: 400, rpc: -32602, doc: 'svc.yaml does not match schema/svc.schema.json.' },
  ENV_UNSET: { status: 400, rpc: -32602, doc: '`${VAR}` names an unset environment variable and has no default.' },
  FILE_UNREADABLE: { status: 400, rpc: -32602, doc: 'A file the manifest references (the manifest itself, a `*_file` secret, content or data, an `openapi` document) cannot be read, or an `openapi` document at a URL cannot be fetched.' },
  DUPLICATE_NAME: { status: 400, rpc: -32602, doc: 'Two tools, resources, prompts, tokens, users or clients share a name.' },
  SCOPE_UNDECLARED: { status: 400, rpc: -32602, doc: 'A scope is used that `profile.scopes` does not declare.' },
  SCOPE_ARG_UNSAFE: { status: 400, rpc: -32602, doc: 'A tenant-bound scope (`{{arg}}`) or a `bind` names an argument that is not a required string whose anchored `pattern` admits only scope segments (letters, digits, `_` and `-`).' },
  INPUT_SCHEMA_INVALID: { status: 400, rpc: -32602, doc: 'An `input_schema` is not a valid JSON Schema.' },
  TEMPLATE_ARG_UNKNOWN: { status: 400, rpc: -32602, doc: 'A template names an argument the input schema does not define.' },
  ROUTE_CONFLICT: { status: 400, rpc: -32602, doc: 'A route is listed both public and protected, or is not a known route.' },
  AUTH_MISSING: { status: 400, rpc: -32602, doc: 'Protected routes exist but no auth mode (`auth`, `oauth` or `external_issuers`) is configured.' },
  BACKEND_CONFIG: { status: 400, rpc: -32602, doc: 'A backend declaration cannot work (bad path, bad URL, unsafe option).' },
  OAUTH_CONFIG: { status: 400, rpc: -32602, doc: 'The `oauth` section cannot work as written.' },
  STATE_CONFIG: { status: 400, rpc: -32602, doc: 'The `state` section cannot work as written: it is given together with `oauth.provider.type: postgres`, whose database already holds the state replicas share (sessions, tasks, quotas) — keep one of them: one database, one place.' },
  OUTBOUND_AUTH_CONFIG: { status: 400, rpc: -32602, doc: 'A backend\'s `auth` (the credential fastsvc sends it) cannot work as written: a secret given twice or not at all, a `header` without its value, a `token_url` that is not https off loopback, a `token_exchange` without `audience` or `resource`, without `external_issuers` or on a tool that may run as a task, an `upstream_login` naming a provider `oauth.login.upstreams` does not list.' },
  SECRET_LITERAL: { status: 400, rpc: -32602, doc: 'A secret of a backend\'s `auth` is written in clear in the manifest: write `${VAR}` (the value then comes from the environment) or use the field\'s `*_file` form.' },
  UPSTREAM_CONFIG: { status: 400, rpc: -32602, doc: 'An `upstreams` entry cannot work as written: not exactly one of `command` and `url`, `env` on a `url` upstream or `headers` on a `command` one, a name used twice, `restart.min_ms` above `restart.max_ms`, a relative `cwd` that leads out of the manifest folder, a program that is not found; a credential (`auth`, `expose.auth`, an override\'s `auth`) on a `command` upstream, a `token_exchange` or `upstream_login` as the upstream\'s own `auth` (its requests are made for no caller), one for calls without an `auth` for the connection\'s own requests, a credential whose header `headers` also sets.' },
  EXTERNAL_ISSUER_CONFIG: { status: 400, rpc: -32602, doc: 'An `external_issuers` entry cannot work as written (an issuer or endpoint that is not https off loopback, an issuer listed twice, two client secrets); with `validate --network`, its discovery document or keys cannot be fetched or are unusable.' },
  VIEW_INVALID: { status: 400, rpc: -32602, doc: 'A tool\'s `ui` (an MCP Apps view, [apps.md](../apps.md)) cannot work as written: both or neither of `view` and `template` (neither is allowed only with `visibility: [app]`), a `view` that is not a relative `.html`/`.htm` path inside the manifest\'s folder (a symlink leaving it included), larger than 4 MiB or not HTML, a view URI that another view or a resource already has, or tools naming one view with different settings.' },
  VIEW_CSP_INVALID: { status: 400, rpc: -32602, doc: 'An entry of a view\'s `ui.csp` is not an origin: give `scheme://host[:port]` exactly as the URL standard writes it (https or http, also wss or ws in `connect_domains`), with no path, query, fragment or credentials; a wildcard only in `resource_domains`, as the whole leftmost label (`https://*.example.com`).' },
  VIEW_SCOPE_EXCEEDS_TOOL: { status: 400, rpc: -32602, doc: 'A view\'s `ui.required_scopes` names a scope that a tool naming the view does not require, so a caller of that tool could not read its view. Leave `required_scopes` out (the default is the scopes every such tool requires) or require the scope on the tool.' },
  OPENAPI_INVALID: { status: 400, rpc: -32602, doc: 'An `openapi` source\'s document cannot be used: not YAML or JSON, not OpenAPI 3.0, 3.1 or Swagger 2.0, larger than 64 MiB (with the files its `$ref`s name), YAML whose aliases stand for more nodes than its text could hold, its sha256 not the pinned one, a `$ref` that resolves nowhere, names a URL or a file outside the document\'s folder, or loops, or an operation whose tool would hold more than 1 MiB of JSON with every `$ref` inlined (all the tools of the manifest\'s sources: 32 MiB). Reported at the document\'s FILE:LINE:COL with the JSON pointer of the node.' },
  OPENAPI_CONFIG: { status: 400, rpc: -32602, doc: 'An `openapi` source cannot work as written: `naming` (or an override\'s `name`) makes a name that is not a tool name, `overrides` names an operation the document does not have, the document names no absolute server URL and `base_url` is not given, or `document` is a URL without `sha256`.' },
  LOCK_INVALID: { status: 400, rpc: -32602, doc: 'The pin lock file beside the manifest (`svc.lock.json` for `svc.yaml`) is not the JSON `fastsvc upstreams accept` writes: not JSON, an unknown member, or a definition whose digest does not match it (edited by hand). The message gives its line or JSON path; `fastsvc upstreams accept NAME` rewrites it.' },
  ENDPOINT_CONFIG: { status: 400, rpc: -32602, doc: 'An `endpoints` entry cannot work as written: a name that is reserved (`tools`, `resources`, `prompts`, `tasks`, `explain`, `default`: /svc\'s own paths and explain\'s name for the default endpoint) or not a path segment, `select.sources` naming a source the manifest does not declare (the message suggests the closest name), or `manifest` in `select.sources` while an `openapi` source or upstream is itself named `manifest`.' },
} as const satisfies Record<string, CodeInfo>;

/** A request's refusals and failures. */
export const REQUEST_CODES = {
  UNAUTHENTICATED: { status: 401, rpc: -32001, doc: 'No bearer token, or one that is unknown, expired, revoked or for another audience.' },
  INSUFFICIENT_SCOPE: { status: 403, rpc: -32003, doc: 'The caller lacks a scope the capability requires; `data` lists `required` and `missing`.' },
  ARGUMENT_BOUND: { status: 403, rpc: -32003, doc: 'An argument the tool binds to the credential (`bind: principal.claims.NAME`) was given a different value, or the credential lacks that claim.' },
  FORBIDDEN_ORIGIN: { status: 403, rpc: -32003, doc: 'Host or Origin header not allowed (DNS-rebinding protection).' },
  INVALID_HOST: { status: 400, rpc: -32600, doc: 'The `Host` header is not a valid `host[:port]` (answered before any route, `/ws` upgrade included).' },
  HEADER_REPEATED: { status: 400, rpc: -32600, doc: 'The request carries more than once a header that may appear once — `Authorization`, `DPoP`, `Host`, `Origin`, `Content-Type`, `Last-Event-ID` or any `Mcp-*` header (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); `data.header` names it. Answered before any route, public ones, the OAuth endpoints and the `/ws` upgrade included: a proxy reading another copy than this server would see another request.' },
  NOT_FOUND: { status: 404, rpc: -32602, doc: 'No capability, route or session by that name.' },
  CAPABILITY_WITHHELD: { status: 409, rpc: -32000, doc: 'A pinned upstream (`pin: true`) lists this capability, but not as the operator accepted it: changed since, new, or never accepted (`data.upstream`, `data.reason`: `changed`, `new`, `unpinned`, `duplicate`, `invalid`). It is not listed and not called until `fastsvc upstreams accept UPSTREAM` records it ([upstream-pinning.md](../upstream-pinning.md)).' },
  INVALID_INPUT: { status: 400, rpc: -32602, doc: 'Arguments do not match the input schema; `data.errors` lists the problems (`path`, `message`, `params` such as `allowedValues`), at most 10, and `data.omitted` counts the rest. Argument values are never echoed.' },
  INVALID_CURSOR: { status: 400, rpc: -32602, doc: 'An MCP list\'s `params.cursor` (or `GET /svc?cursor=`) is not one this server issued for that list, or the item it points at left the catalog (a reload): list again from the start.' },
  INVALID_REQUEST: { status: 400, rpc: -32600, doc: 'The request itself is malformed (bad JSON, wrong method, bad header).' },
  PAYLOAD_TOO_LARGE: { status: 413, rpc: -32600, doc: 'The body exceeds `server.body_limit`.' },
  HEADER_MISMATCH: { status: 400, rpc: -32020, doc: 'MCP 2026-07-28: an `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version` or `Mcp-Param-*` header is missing or differs from the body.' },
  MISSING_CLIENT_CAPABILITY: { status: 400, rpc: -32021, doc: 'The operation needs a client capability the caller did not declare; `data.requiredCapabilities` names it. MCP 2026-07-28: on the request itself. On any transport, an upstream tool that asked its caller (elicitation, sampling) what the caller\'s client cannot answer and then failed (`data.upstream`; a `/svc` caller never can answer: [upstreams.md](../upstreams.md#what-a-caller-is-asked)).' },
  UNSUPPORTED_PROTOCOL_VERSION: { status: 400, rpc: -32022, doc: 'MCP: the request names a protocol version this server does not serve that way; `data` lists `supported` and `requested`.' },
  METHOD_NOT_FOUND: { status: 404, rpc: -32601, doc: 'MCP 2026-07-28: no such method in this revision (`initialize`, `ping`, `logging/setLevel` and `resources/(un)subscribe` are 2025-era only).' },
  REQUEST_STATE_INVALID: { status: 400, rpc: -32602, doc: 'MCP 2026-07-28: `requestState` is tampered, expired, already used, or issued for another caller, tool or arguments; call again without it.' },
  INPUT_RESPONSES_INVALID: { status: 400, rpc: -32602, doc: 'MCP 2026-07-28: `inputResponses` is not an object of objects.' },
  TASK_REQUIRED: { status: 400, rpc: -32601, doc: 'MCP 2025-11-25: the tool declares `task: required` and the `tools/call` carried no `params.task` (2026-07-28 answers `MISSING_CLIENT_CAPABILITY` instead).' },
  TASK_LIMIT_REACHED: { status: 429, rpc: -32000, doc: 'Too many running tasks for this caller (`server.task_max_running_per_principal`) or for the server (`server.task_max_running`).' },
  RATE_LIMITED: { status: 429, rpc: -32000, doc: 'A quota (`limits`) is used up: retry after the `Retry-After` header (seconds; `data.retryAfterMs` in milliseconds, also on `/ws`, which has no header). Also too many unanswered requests on one WebSocket (`server.ws_max_in_flight`) or resource subscriptions on one MCP session.' },
  BACKEND_FAILED: { status: 502, rpc: -32000, doc: 'The backend answered with an error (non-2xx, non-zero exit, query error).' },
  BACKEND_TIMEOUT: { status: 504, rpc: -32000, doc: 'The backend did not answer within its timeout.' },
  CANCELLED: { status: 499, rpc: -32800, doc: 'The caller went away (disconnected or cancelled) before the answer; logged, rarely seen by anyone.' },
  NOT_READY: { status: 503, rpc: -32000, doc: 'The server is starting or draining.' },
  OUTBOUND_AUTH_FAILED: { status: 502, rpc: -32000, doc: 'The credential a backend needs could not be had: its token endpoint (`client_credentials`, `token_exchange`) refused the request, gave no usable token, or did not answer within `timeout_ms`; `data.reason` says which (and `data.error` the endpoint\'s OAuth error). The backend was not called.' },
  CALLER_CREDENTIAL_MISSING: { status: 403, rpc: -32003, doc: 'The tool calls its backend with a credential made from the caller\'s own, and this caller has none of that kind: `token_exchange` needs a token of an external issuer, `upstream_login` a sign-in through the named identity provider; `data.reason` says which.' },
  UPSTREAM_TOKEN_UNAVAILABLE: { status: 502, rpc: -32000, doc: 'The person\'s token at the identity provider they signed in at (`oauth.login.mode: upstream`) cannot be had: the grant has none, the provider was removed, the token expired without a refresh token, or the provider refused or did not answer the refresh; `data.reason` says which. Signing in again gets a fresh one.' },
  UPSTREAM_UNAVAILABLE: { status: 503, rpc: -32000, doc: 'The upstream MCP server (`upstreams`) that serves this capability is not connected: starting, restarting after its process ended (with backoff), or unreachable; `data.upstream` names it and `data.state` says which. Retry later.' },
  IDP_UNAVAILABLE: { status: 503, rpc: -32000, doc: 'An external issuer (`external_issuers`) could not be asked in time — its discovery document, its keys (none held that could check the token) or its introspection endpoint; the log and the audit reason say which. Retry later; the token may well be valid.' },
  STORE_UNAVAILABLE: { status: 503, rpc: -32000, doc: 'The shared store (PostgreSQL: the OAuth provider\'s or `state`) is down or did not answer within its statement timeout; retry later.' },
  INTERNAL: { status: 500, rpc: -32603, doc: 'A bug: logged with a request id, never with secrets.' },
} as const satisfies Record<string, CodeInfo>;

/** Every code: the one registry. */
export const CODES = { ...MANIFEST_CODES, ...REQUEST_CODES } as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof CODES;

export interface SourcePos {
  file?: string;
  line?: number;
  col?: number;
}

export class SvcError extends Error {
  readonly code: ErrorCode;
  /** JSON pointer-ish path into the manifest or the input, when there is one. */
  path?: string;
  file?: string;
  line?: number;
  col?: number;
  /** Extra machine-readable detail (schema errors, required/missing scopes). */
  data?: Record<string, unknown>;
  /**
   * Why, for the audit log and the server's log only — never part of the answer (toJSON leaves it out):
   * e.g. the check an external token failed (token_aud, introspection_inactive).
   */
  reason?: string;
  /**
   * What happened, in words, for the server's log only — never part of the answer (toJSON leaves it out): e.g. which
   * claim of an external token failed, while the answer's message stays the same for every such refusal.
   */
  detail?: string;

  constructor(code: ErrorCode, message: string, opts: { path?: string; data?: Record<string, unknown>; cause?: unknown; reason?: string; detail?: string } & SourcePos = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SvcError';
    this.code = code;
    this.path = opts.path;
    this.file = opts.file;
    this.line = opts.line;
    this.col = opts.col;
    this.data = opts.data;
    if (opts.reason !== undefined) this.reason = opts.reason;
    if (opts.detail !== undefined) this.detail = opts.detail;
  }

  get status(): number {
    return CODES[this.code].status;
  }

  get rpcCode(): number {
    return CODES[this.code].rpc;
  }

  /** `FILE:LINE:COL: CODE: message` — the compiler-style line the CLI prints. */
  format(): string {
    const where = this.file ? `${this.file}:${this.line ?? 1}:${this.col ?? 1}: ` : '';
    return `${where}${this.code}: ${this.message}`;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.path !== undefined && { path: this.path }),
      ...(this.file !== undefined && { file: this.file, line: this.line, col: this.col }),
      ...(this.data !== undefined && this.data),
    };
  }
}

/** Many manifest problems reported at once. */
export class ManifestError extends Error {
  readonly problems: SvcError[];
  constructor(problems: SvcError[]) {
    super(problems.map((p) => p.format()).join('\n'));
    this.name = 'ManifestError';
    this.problems = problems;
  }
}

export function isSvcError(e: unknown): e is SvcError {
  return e instanceof SvcError;
}
