// What the benchmark runs, as data: the servers (each its own child process) and the scenarios measured on them.
// A scenario names its server and a `kind` the harness knows (http | mcp | ws | oauth-code | oauth-refresh, see
// lib/clients.mjs); an entry with
// `pending: '<reason>'` (on itself or its server) is listed in the report but not run — those are the hooks for
// work that has not landed yet. `--only a,b` selects entries by scenario name or by server name.
import { randomBytes } from 'node:crypto';

/** One token for every protected server in a run: passed as BENCH_TOKEN (peers) and SVC_TOKEN (fastsvc). */
export const TOKEN = randomBytes(24).toString('base64url');
export const TEXT = 'hello';
export const TOOL = 'bench.echo';

/** The fastsvc entry point; FASTSVC_CLI points the bench at another build of the same CLI. */
const FASTSVC_CLI = process.env.FASTSVC_CLI ?? 'dist/cli.js';
const fastsvc = (manifest) => [FASTSVC_CLI, 'serve', manifest, '--port', '0', '--no-watch'];

/** Issue 31's upstream: server-everything over stdio (bench/README.md, "Upstream MCP servers"); its echo tool's call and answer. */
const EVERYTHING = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';
const EVERYTHING_ECHO = { name: 'echo', arguments: { message: TEXT }, text: `Echo: ${TEXT}` };

/**
 * argv is run as `node ...argv` from the repository root; every server answers GET /healthz with 200 (`health`: another
 * path), except a `stdio` one, an MCP server on the harness's pipe (lib/stdio.mjs). `upstream`: the server proxies a stdio
 * MCP upstream it started itself, whose CPU per call the rounds read too (issue 31).
 */
export const SERVERS = {
  raw: { argv: ['bench/peers/raw-http.mjs'] },
  'ws-echo': { argv: ['bench/peers/ws-echo.mjs'] },
  express: { argv: ['bench/peers/express-echo.mjs'] },
  'express-auth': { argv: ['bench/peers/express-echo.mjs', 'auth'] },
  'sdk-stateful': { argv: ['bench/peers/sdk-server.mjs', 'stateful'] },
  'sdk-stateless': { argv: ['bench/peers/sdk-server.mjs', 'stateless'] },
  fastsvc: { argv: fastsvc('bench/fastsvc.svc.yaml'), hint: 'run `npm run build` first' },
  // The same manifest with /metrics unrouted, so metrics are off (issue 15: metrics-on vs metrics-off).
  'fastsvc-nometrics': { argv: fastsvc('bench/fastsvc-nometrics.svc.yaml'), hint: 'run `npm run build` first' },
  // The same with the audit log (a file in BENCH_DATA_DIR), metrics and tracing-off on, as a hosted server runs (issue 17).
  'fastsvc-observed': { argv: fastsvc('bench/fastsvc-observed.svc.yaml'), hint: 'run `npm run build` first' },
  // fastsvc with its OAuth server, one per provider (SQLite file in BENCH_DATA_DIR, a temp folder per run).
  'fastsvc-oauth-memory': { argv: fastsvc('bench/fastsvc-oauth-memory.svc.yaml'), hint: 'run `npm run build` first' },
  'fastsvc-oauth-sqlite': { argv: fastsvc('bench/fastsvc-oauth-sqlite.svc.yaml'), hint: 'run `npm run build` first' },
  // Resource-server mode (issue 30): tokens of two corporate IdPs (RS256 + introspection, ES256) that the harness
  // starts on loopback (bench/lib/idp.mjs) when one of these is picked.
  'fastsvc-external': { argv: fastsvc('bench/fastsvc-external.svc.yaml'), hint: 'run `npm run build` first', idp: true },
  // postgres: the harness starts a throwaway cluster (needs Debian's postgresql package) when one of these is picked.
  'fastsvc-oauth-postgres': { argv: fastsvc('bench/fastsvc-oauth-postgres.svc.yaml'), hint: 'run `npm run build` first', postgres: true },
  // N replicas on that cluster behind a loopback round-robin proxy (sticky by Mcp-Session-Id); the proxy's URL is the issuer.
  // noCpu: the work is done in the replicas' processes, so the proxy's own CPU time says nothing about a request's cost.
  ...Object.fromEntries([1, 2].map((n) => [`fastsvc-oauth-postgres-${n}x`, {
    argv: ['bench/peers/replicas-proxy.mjs', String(n), 'bench/fastsvc-oauth-replicas.svc.yaml'], hint: 'run `npm run build` first', postgres: true, noCpu: true,
  }])),
  // Issue 40: the same two replicas behind the same proxy without session affinity: a 2025 session's requests alternate.
  'fastsvc-oauth-postgres-2x-rr': {
    argv: ['bench/peers/replicas-proxy.mjs', '2', 'bench/fastsvc-oauth-replicas.svc.yaml', 'none'], hint: 'run `npm run build` first', postgres: true, noCpu: true,
  },
  // Issue 31: the same stdio upstream driven directly over its pipe, behind the two gateways on npm, and behind fastsvc
  // (its upstreams: section; the manifest also has fastsvc's own template tool, the native call the CPU target compares with).
  'upstream-direct': { argv: [EVERYTHING, 'stdio'], stdio: true, hint: 'run `npm ci`' },
  'mcp-proxy': { argv: ['bench/peers/stdio-gateway.mjs', 'mcp-proxy', EVERYTHING, 'stdio'], health: '/ping', upstream: true },
  supergateway: { argv: ['bench/peers/stdio-gateway.mjs', 'supergateway', EVERYTHING, 'stdio'], upstream: true },
  'fastsvc-upstream': { argv: fastsvc('bench/fastsvc-upstream.svc.yaml'), hint: 'run `npm run build` first', upstream: true },
};

const ECHO = '/echo';
const SVC = `/svc/tools/${TOOL}`;

/**
 * Throughput scenarios, measured in this order in every round (servers interleave A/B/A/B).
 * http: POST path with {"text": TEXT}, `auth` adds the bearer token. mcp: tools/call on path (default /mcp),
 * `session` runs the initialize handshake first. ws: MCP over WebSocket, `sockets` × `inFlight` calls outstanding.
 * `token: 'oauth'`: the bearer is an OAuth access token the harness gets through the real flow (lib/oauth.mjs).
 * `token: 'external-jwt' | 'external-opaque'`: an access token of the RS256 corporate IdP (lib/idp.mjs, client_credentials),
 * JWT or opaque, fresh for each run of the scenario and sent once before the clock starts, so the load measures cache hits.
 * oauth-code: POST /token code exchanges, 10 connections, from a pool of codes minted before the clock starts
 * (≈ `seconds` worth at the rate of the previous run; the run ends when the pool is spent). oauth-refresh: POST
 * /token refresh grants, 10 independent chains (one client and grant each), each on its own connection.
 */
export const SCENARIOS = [
  { name: 'raw', server: 'raw', kind: 'http', path: ECHO, label: 'raw node:http JSON echo' },
  // The raw echo sent exactly the /mcp requests below (headers and JSON-RPC body), answering each with its own
  // body: the machine's ceiling for that request, so a ratio to it leaves out what the protocol itself costs.
  { name: 'raw-mcp', server: 'raw', kind: 'mcp', path: ECHO, echo: true, label: 'raw node:http JSON echo of a /mcp 2025 session tools/call (same headers and body)' },
  { name: 'raw-mcp-2026', server: 'raw', kind: 'mcp', path: ECHO, echo: true, modern: true, label: 'raw node:http JSON echo of a /mcp 2026-07-28 tools/call (same headers and body)' },
  { name: 'ws-1x10', server: 'ws-echo', kind: 'ws', sockets: 1, inFlight: 10, label: 'bare ws echo, 1 socket × 10 in flight (the /ws ceiling)' },
  { name: 'ws-10x1', server: 'ws-echo', kind: 'ws', sockets: 10, inFlight: 1, label: 'bare ws echo, 10 sockets × 1 in flight (the /ws ceiling)' },
  { name: 'express', server: 'express', kind: 'http', path: ECHO, label: 'Express 5 + express.json() echo' },
  { name: 'express-auth', server: 'express-auth', kind: 'http', path: ECHO, auth: true, label: 'Express 5 + constant-time bearer + echo' },
  { name: 'sdk-stateful', server: 'sdk-stateful', kind: 'mcp', session: true, label: 'MCP SDK stateful (one session), JSON' },
  { name: 'sdk-stateless', server: 'sdk-stateless', kind: 'mcp', session: false, label: 'MCP SDK stateless, JSON' },
  // fastsvc, fastsvc-nometrics and fastsvc-observed carry the same traffic in the same order every round (/svc,
  // /mcp 2025, /mcp 2026-07-28, /ws × 2): a server's speed depends on what else it has served (the JIT optimises
  // for the shapes it has seen), so an on/off ratio between servers that served different mixes would measure the
  // mix, not the feature (bench/README.md, "Servers compared with each other carry the same traffic").
  // Interleaved kind by kind (svc on each server, then mcp on each, ...), so host drift hits the three alike.
  ...[
    ['svc', (what) => ({ kind: 'http', path: SVC, auth: true, label: `fastsvc /svc tool call, bearer + scope${what}` })],
    ['mcp', (what) => ({ kind: 'mcp', session: true, label: `fastsvc /mcp tools/call, one session, JSON${what}` })],
    ['mcp-2026', (what) => ({ kind: 'mcp', modern: true, label: `fastsvc /mcp tools/call, MCP 2026-07-28 (stateless, _meta), JSON${what}` })],
    ['ws-1x10', (what) => ({ kind: 'ws', sockets: 1, inFlight: 10, label: `fastsvc /ws, 1 socket × 10 in flight${what}` })],
    ['ws-10x1', (what) => ({ kind: 'ws', sockets: 10, inFlight: 1, label: `fastsvc /ws, 10 sockets × 1 in flight${what}` })],
  ].flatMap(([kind, scn]) => [
    ['fastsvc', '', ''],
    ['fastsvc-nometrics', '-nometrics', ', metrics off (/metrics not routed)'],
    ['fastsvc-observed', '-observed', ', audit log to a file + metrics + tracing off (as hosted)'],
  ].map(([server, suffix, what]) => ({ name: `fastsvc-${kind}${suffix}`, server, ...scn(what) }))
    // Issue 30: the same five calls, in the same order, on fastsvc-external with an external IdP's JWT (RS256,
    // client_credentials, verified on its first use and then cached), so its ratio to fastsvc's static-token
    // rows compares servers that carried the same traffic. Its one extra row, /svc with an opaque token on an
    // introspection cache hit, runs the same code as the JWT's /svc once cached (the same cache lookup, a
    // principal of the same shape).
    .concat({ name: `fastsvc-external-jwt-${kind}`, server: 'fastsvc-external', token: 'external-jwt', ...scn(', external IdP JWT (RS256, cached)') })
    .concat(kind === 'svc' ? [{ name: 'fastsvc-external-introspected-svc', server: 'fastsvc-external', token: 'external-opaque', ...scn(', external IdP opaque token (introspection cached)') }] : [])),
  // OAuth access tokens on /svc and /mcp: the token lookup (memory provider; SQLite for /svc too) is on every request.
  { name: 'fastsvc-oauth-svc', server: 'fastsvc-oauth-memory', kind: 'http', path: SVC, auth: true, token: 'oauth', label: 'fastsvc /svc, OAuth access token (memory provider)' },
  { name: 'fastsvc-oauth-mcp', server: 'fastsvc-oauth-memory', kind: 'mcp', session: true, token: 'oauth', label: 'fastsvc /mcp, OAuth access token (memory provider), one session' },
  { name: 'fastsvc-oauth-svc-sqlite', server: 'fastsvc-oauth-sqlite', kind: 'http', path: SVC, auth: true, token: 'oauth', label: 'fastsvc /svc, OAuth access token (SQLite provider)' },
  { name: 'fastsvc-oauth-svc-postgres', server: 'fastsvc-oauth-postgres', kind: 'http', path: SVC, auth: true, token: 'oauth', label: 'fastsvc /svc, OAuth access token (PostgreSQL provider)' },
  // Token endpoint throughput: each code is single-use and each refresh rotates, so these have their own kinds.
  ...['memory', 'sqlite', 'postgres'].flatMap((p) => [
    { name: `oauth-code-${p}`, server: `fastsvc-oauth-${p}`, kind: 'oauth-code', label: `POST /token authorization_code (${p}); codes pre-minted, one exchange each` },
    { name: `oauth-refresh-${p}`, server: `fastsvc-oauth-${p}`, kind: 'oauth-refresh', label: `POST /token refresh_token (${p}); 10 rotating chains` },
  ]),
  // Horizontal scale (issue 16): the same proxy in front of one and of two replicas. The calls are MCP 2026-07-28
  // (stateless), so the proxy spreads them per request; a 2025 session would stick to one replica. `vs`: the
  // scenario this one is reported as a ratio to (the Scaling table).
  { name: 'oauth-mcp-postgres-1x', server: 'fastsvc-oauth-postgres-1x', kind: 'mcp', modern: true, token: 'oauth', label: '/mcp tools/call (2026-07-28), OAuth token (postgres), proxy → 1 replica' },
  { name: 'oauth-mcp-postgres-2x', server: 'fastsvc-oauth-postgres-2x', kind: 'mcp', modern: true, token: 'oauth', vs: 'oauth-mcp-postgres-1x', label: '/mcp tools/call (2026-07-28), OAuth token (postgres), proxy → 2 replicas' },
  // Issue 40: one 2025 session through the proxy to 2 replicas, sticky (every request to the replica that opened it)
  // against round-robin without affinity (every other request to the other replica, which serves it from its cached copy
  // of the session record). Target: round-robin ≥ 0.8× sticky.
  { name: 'oauth-mcp2025-postgres-2x-sticky', server: 'fastsvc-oauth-postgres-2x', kind: 'mcp', session: true, token: 'oauth', label: '/mcp tools/call (2025 session), OAuth token (postgres), proxy → 2 replicas, sticky' },
  { name: 'oauth-mcp2025-postgres-2x-rr', server: 'fastsvc-oauth-postgres-2x-rr', kind: 'mcp', session: true, token: 'oauth', vs: 'oauth-mcp2025-postgres-2x-sticky', label: '/mcp tools/call (2025 session), OAuth token (postgres), proxy → 2 replicas, round-robin (no affinity)' },
  // Issue 31: one tools/call (server-everything's echo) through each way to the same stdio upstream. `ceiling`: the
  // upstream driven directly, 1 pipe × 10 calls in flight as the proxies get at most 10 from the 10 connections.
  // fastsvc-upstream serves its native template call and the proxied ones in the same order every round. `keepOpen`:
  // one session for the whole run (warm-up, rounds, pairs), as a gateway's client keeps its session: supergateway starts
  // an upstream process per session, so a session per round would measure a cold upstream and count its start as calls' CPU.
  { name: 'upstream-direct', server: 'upstream-direct', kind: 'stdio', inFlight: 10, call: EVERYTHING_ECHO, label: 'server-everything echo on its own stdio, 1 pipe × 10 in flight (no proxy: the ceiling)' },
  { name: 'mcp-proxy-mcp', server: 'mcp-proxy', kind: 'mcp', session: true, keepOpen: true, call: EVERYTHING_ECHO, ceiling: 'upstream-direct', label: 'mcp-proxy (npm) → stdio upstream, tools/call on one session' },
  { name: 'supergateway-mcp', server: 'supergateway', kind: 'mcp', session: true, keepOpen: true, call: EVERYTHING_ECHO, ceiling: 'upstream-direct', label: 'supergateway (npm, --stateful) → stdio upstream, tools/call on one session' },
  { name: 'fastsvc-upstream-native-mcp', server: 'fastsvc-upstream', kind: 'mcp', session: true, keepOpen: true, label: 'fastsvc /mcp tools/call of its own template tool, one session (same server as the proxied rows)' },
  { name: 'fastsvc-upstream-mcp', server: 'fastsvc-upstream', kind: 'mcp', session: true, keepOpen: true, call: { ...EVERYTHING_ECHO, name: 'ev.echo' }, ceiling: 'upstream-direct', label: 'fastsvc /mcp → stdio upstream (ev.echo), one session' },
  { name: 'fastsvc-upstream-native-mcp-2026', server: 'fastsvc-upstream', kind: 'mcp', modern: true, label: 'fastsvc /mcp 2026-07-28 tools/call of its own template tool (same server as the proxied rows)' },
  { name: 'fastsvc-upstream-mcp-2026', server: 'fastsvc-upstream', kind: 'mcp', modern: true, call: { ...EVERYTHING_ECHO, name: 'ev.echo' }, ceiling: 'upstream-direct', label: 'fastsvc /mcp 2026-07-28 → stdio upstream (ev.echo)' },
  { name: 'fastsvc-upstream-svc', server: 'fastsvc-upstream', kind: 'http', path: '/svc/tools/ev.echo', auth: true, call: { ...EVERYTHING_ECHO, name: 'ev.echo' }, ceiling: 'upstream-direct', label: 'fastsvc /svc → stdio upstream (ev.echo)' },
];

/**
 * The machine's ceiling for each fastsvc scenario (issue 17): raw node:http for /svc and /mcp, the bare ws echo
 * (same client loop, same sockets × in-flight shape) for /ws; a scenario's own `ceiling` (issue 31's proxied calls: the
 * upstream driven directly) comes first. Reported as the "× ceiling" column.
 */
export const CEILINGS = { http: 'raw', mcp: 'raw', ws: { '1x10': 'ws-1x10', '10x1': 'ws-10x1' } };
export function ceilingOf(scn) {
  if (scn.ceiling) return scn.ceiling;
  if (!scn.name.startsWith('fastsvc')) return null;
  const c = CEILINGS[scn.kind];
  return typeof c === 'string' ? c : c?.[`${scn.sockets}x${scn.inFlight}`] ?? null;
}

/** The raw echo of the same request (headers and body) as a fastsvc /mcp scenario: what the protocol itself costs. */
export const SAME_REQUEST = { 'fastsvc-mcp': 'raw-mcp', 'fastsvc-mcp-2026': 'raw-mcp-2026' };

/** The ratio columns: each scenario's req/s divided by these scenarios' req/s in the same run. */
export const BASELINES = ['express', 'sdk-stateful', 'sdk-stateless', 'fastsvc-mcp'];

/** Memory flatness (--memory): `calls` tools/call on one /mcp session (`modern`: stateless 2026-07-28 calls); RSS after warm-up vs at the end. */
export const MEMORY = [
  { name: 'memory-fastsvc-mcp', server: 'fastsvc', calls: 200_000, smokeCalls: 5_000 },
  { name: 'memory-fastsvc-mcp-2026', server: 'fastsvc', modern: true, calls: 200_000, smokeCalls: 5_000 },
  // The SDK 1.x stateful JSON mode keeps ~5.7 KiB per call (PERF-NOTES); capped so it cannot eat the machine.
  { name: 'memory-sdk-stateful', server: 'sdk-stateful', calls: 30_000, smokeCalls: 5_000 },
];

/**
 * Idle memory (issue 30): a fresh server per entry, listening for the inspector; every scenario of that server (all of
 * them, whatever --only picked, so the figure does not depend on which rows run) checked and warmed up in table
 * order. Read 1 s after its last warm-up: VmRSS "after load" (it still holds the garbage and the young generation
 * the load grew: V8 returns them only when its memory reducer runs, some 25 s later after a /token burst, or never
 * if no full collection starts it); then two full collections asked through the inspector and, 1 s later, the idle
 * VmRSS (what the memory reducer leaves), its file-backed part and the V8 heap retained. The RSS targets read these.
 */
export const IDLE = [
  { name: 'idle-raw', server: 'raw' },
  { name: 'idle-express', server: 'express' },
  { name: 'idle-fastsvc', server: 'fastsvc' },
  ...['memory', 'sqlite', 'postgres'].map((p) => ({ name: `idle-fastsvc-oauth-${p}`, server: `fastsvc-oauth-${p}` })),
];

/**
 * Reload latency (issue 5, bench/reload-latency.mjs): a watching server of its own; each edit flips a tool's
 * required scope in the manifest and is timed until the first request decided by the new policy; p50/p99.
 */
export const RELOAD = [
  { name: 'reload-fastsvc', server: 'fastsvc', edits: 50, smokeEdits: 5, label: 'svc.yaml write → first request under the new policy' },
];

/**
 * Revocation propagation (issue 16, bench/revocation-latency.mjs): a server of its own with two replicas; each
 * sample revokes a fresh token on replica A and times until replica B refuses it; p50/p99.
 */
export const REVOCATION = [
  { name: 'revocation-postgres-2x', server: 'fastsvc-oauth-postgres-2x', revocations: 100, smokeRevocations: 5, label: 'POST /revoke on replica A → first 401 from replica B' },
];

/**
 * External tokens cached (issue 30, bench/external-cache.mjs): a fresh fastsvc-external server, `tokens` distinct
 * valid JWTs per IdP minted beforehand; RSS and retained heap idle and with them all cached, the cache bound (the same
 * after (2 × `cycles` + 1) × `tokens` distinct tokens), and the server CPU a cold verification adds per call, RS256 and
 * ES256 (median over `cycles`).
 */
export const EXTERNAL_CACHE = [
  { name: 'external-cache-10k', server: 'fastsvc-external', tokens: 10_000, smokeTokens: 200, cycles: 3, label: 'distinct external JWTs per IdP (RS256, ES256), each sent to /svc' },
];

/**
 * Start-up with upstreams (issue 31, bench/upstream-startup.mjs): per sample a fresh fastsvc whose manifest lists
 * `upstreams` stdio upstreams (bench/peers/many-tools-stdio.mjs) of `tools` generated tools each; spawn → every imported
 * tool listed on /mcp, against spawn → the last upstream's first tools/list answer. `server` names the build it needs.
 */
export const UPSTREAM_STARTUP = [
  { name: 'upstream-startup-5x100', server: 'fastsvc-upstream', upstreams: 5, tools: 100, samples: 5, smokeSamples: 1, label: '5 stdio upstreams × 100 tools each: every imported tool listed on /mcp' },
];

/**
 * Issue 6's targets, checked against this run's figures in the report. ratio: scenario req/s ÷ baseline req/s ≥ min.
 * paired: the verdict is the median of back-to-back pairs (bench/run.mjs step 5), the table's ratio of medians shown beside it.
 * startup: the server's median start-up (ms) below max. idle: the IDLE entry's idle RSS (MB, or MiB with mib: true) below max. flat: memory entry's RSS delta ≤ max MB.
 * info: a ratio reported without a verdict (no target). cpu: scenario server CPU per request ÷ the other's ≤ max (rounds' medians).
 * upstreamStartup: the UPSTREAM_STARTUP entry's median ms from the upstreams' answer to every imported tool served ≤ max.
 */
export const TARGETS = [
  { what: '/svc authorized call ≥ 0.75× Express echo', ratio: ['fastsvc-svc', 'express'], min: 0.75 },
  { what: '/mcp tools/call ≥ 2× SDK stateful', ratio: ['fastsvc-mcp', 'sdk-stateful'], min: 2 },
  { what: '/mcp tools/call ≥ 4× SDK stateless', ratio: ['fastsvc-mcp', 'sdk-stateless'], min: 4 },
  { what: '/mcp memory flat: Δ RSS ≤ 50 MB over the run', flat: 'memory-fastsvc-mcp', max: 50 },
  { what: '/mcp 2026-07-28 tools/call ≥ 1× a call on a 2025 session (issue 11)', ratio: ['fastsvc-mcp-2026', 'fastsvc-mcp'], paired: true, min: 1 },
  { what: '/mcp 2026-07-28 memory flat: Δ RSS ≤ 50 MB over 200k calls (issue 11)', flat: 'memory-fastsvc-mcp-2026', max: 50 },
  { what: '/ws 1 socket × 10 in flight ≥ 1× Express echo', ratio: ['fastsvc-ws-1x10', 'express'], min: 1 },
  { what: 'OAuth-authorized /svc call ≥ 0.7× Express echo', ratio: ['fastsvc-oauth-svc', 'express'], min: 0.7 },
  { what: 'OAuth-authorized /mcp call ≥ 0.7× Express echo', ratio: ['fastsvc-oauth-mcp', 'express'], min: 0.7 },
  { what: '/svc call with metrics on ≥ 0.95× metrics off (issue 15)', ratio: ['fastsvc-svc', 'fastsvc-svc-nometrics'], paired: true, min: 0.95 },
  { what: '/mcp tools/call with metrics on ≥ 0.95× metrics off (issue 15)', ratio: ['fastsvc-mcp', 'fastsvc-mcp-nometrics'], paired: true, min: 0.95 },
  { what: '/svc authorized call ≥ 0.65× raw node:http echo (issue 17)', ratio: ['fastsvc-svc', 'raw'], paired: true, min: 0.65 },
  { what: '/mcp legacy-session tools/call ≥ 0.6× raw node:http echo (issue 17)', ratio: ['fastsvc-mcp', 'raw'], paired: true, min: 0.6 },
  { what: '/mcp 2026-07-28 tools/call ≥ 0.6× raw node:http echo (issue 17)', ratio: ['fastsvc-mcp-2026', 'raw'], paired: true, min: 0.6 },
  // Not targets: the same /mcp calls against the raw echo of the same request (see raw-mcp above).
  ...Object.entries(SAME_REQUEST).map(([scn, echo]) => (
    { what: `${scn === 'fastsvc-mcp' ? '/mcp legacy-session' : '/mcp 2026-07-28'} tools/call × raw echo of the same request`, ratio: [scn, echo], paired: true, info: true })),
  { what: '/svc with audit+metrics+tracing-off ≥ 0.9× them off (issue 17)', ratio: ['fastsvc-svc-observed', 'fastsvc-svc-nometrics'], paired: true, min: 0.9 },
  { what: '/mcp with audit+metrics+tracing-off ≥ 0.9× them off (issue 17)', ratio: ['fastsvc-mcp-observed', 'fastsvc-mcp-nometrics'], paired: true, min: 0.9 },
  { what: '/ws 1 socket × 10 in flight ≥ 0.85× bare ws echo (issue 17)', ratio: ['fastsvc-ws-1x10', 'ws-1x10'], paired: true, min: 0.85 },
  // The OAuth manifests (bench/fastsvc-oauth-*.svc.yaml) run the same tool and features as bench/fastsvc.svc.yaml;
  // only the credential differs, so the ratio is the cost of the OAuth token lookup (and of the two servers' different
  // traffic: the OAuth ones also serve their token endpoint, the static one 2026-07-28 /mcp and /ws; see bench/README.md).
  ...[['memory', 'fastsvc-oauth-svc'], ['SQLite', 'fastsvc-oauth-svc-sqlite'], ['PostgreSQL', 'fastsvc-oauth-svc-postgres']].map(([p, scn]) => (
    { what: `OAuth /svc (${p} provider) ≥ 0.95× static /svc (issue 17)`, ratio: [scn, 'fastsvc-svc'], paired: true, min: 0.95 })),
  // Issue 30: external IdP tokens once verified (fastsvc-external carries fastsvc's traffic: see SCENARIOS).
  { what: 'external IdP JWT /svc (cached) ≥ 0.95× static /svc (issue 30)', ratio: ['fastsvc-external-jwt-svc', 'fastsvc-svc'], paired: true, min: 0.95 },
  { what: 'external IdP JWT /mcp (cached) ≥ 0.95× static /mcp (issue 30)', ratio: ['fastsvc-external-jwt-mcp', 'fastsvc-mcp'], paired: true, min: 0.95 },
  { what: 'external IdP opaque token /svc (introspection cache hit) ≥ 0.9× static /svc (issue 30)', ratio: ['fastsvc-external-introspected-svc', 'fastsvc-svc'], paired: true, min: 0.9 },
  { what: '2025 session through 2 replicas round-robin (no affinity) ≥ 0.8× sticky (issue 40)', ratio: ['oauth-mcp2025-postgres-2x-rr', 'oauth-mcp2025-postgres-2x-sticky'], paired: true, min: 0.8 },
  ...['code', 'refresh'].map((k) => ({ what: `/token ${k} on SQLite ≥ 0.7× memory (issue 17)`, ratio: [`oauth-${k}-sqlite`, `oauth-${k}-memory`], paired: true, min: 0.7 })),
  { what: 'fastsvc start-up to ready < 500 ms', startup: 'fastsvc', max: 500 },
  { what: 'fastsvc idle RSS < 90 MB', idle: 'idle-fastsvc', max: 90 },
  { what: 'fastsvc start-up to ready ≤ 300 ms, no OAuth (issue 17)', startup: 'fastsvc', max: 300 },
  { what: 'fastsvc start-up to ready ≤ 450 ms, OAuth memory provider (issue 17)', startup: 'fastsvc-oauth-memory', max: 450 },
  { what: 'fastsvc start-up to ready ≤ 450 ms, OAuth SQLite provider (issue 17)', startup: 'fastsvc-oauth-sqlite', max: 450 },
  { what: 'fastsvc idle RSS after warm-up ≤ 80 MiB, no OAuth (issue 17)', idle: 'idle-fastsvc', max: 80, mib: true },
  // Issue 30: the OAuth server's weight, warmed up by /svc and /mcp with OAuth tokens and /token code and refresh grants.
  ...[['memory', 'fastsvc-oauth-memory'], ['SQLite', 'fastsvc-oauth-sqlite']].map(([p, server]) => (
    { what: `fastsvc idle RSS after warm-up ≤ 110 MiB, OAuth ${p} provider (issue 30)`, idle: `idle-${server}`, max: 110, mib: true })),
  { what: 'reload latency p50 < 150 ms (issue 5)', reload: 'reload-fastsvc', pct: 'p50', max: 150 },
  { what: 'reload latency p99 < 500 ms (issue 5)', reload: 'reload-fastsvc', pct: 'p99', max: 500 },
  // Issue 31: a proxied tools/call. CPU is fastsvc's own process (its stdio upstream, a child, is not in its /proc/PID/stat),
  // against its native template call on the same server (fastsvc-upstream serves both, same order every round). Issue 38
  // judges it against 2×: the inbound leg (the native call's work) plus an outbound leg no dearer than it.
  ...[['/mcp', ''], ['/mcp 2026-07-28', '-2026']].map(([what, v]) => (
    { what: `proxied ${what} tools/call: fastsvc's server CPU per call ≤ 2× its native template call's (issue 31), 2× since issue 38`, cpu: [`fastsvc-upstream-mcp${v}`, `fastsvc-upstream-native-mcp${v}`], max: 2 })),
  ...['mcp-proxy', 'supergateway'].map((peer) => (
    { what: `proxied /mcp tools/call through fastsvc ≥ 3× ${peer} (issue 31)`, ratio: ['fastsvc-upstream-mcp', `${peer}-mcp`], paired: true, min: 3 })),
  { what: 'proxied /mcp tools/call through fastsvc × the upstream driven directly on its stdio', ratio: ['fastsvc-upstream-mcp', 'upstream-direct'], info: true },
  { what: 'start-up, 5 stdio upstreams and 500 imported tools: all served ≤ 1 s after the upstreams answer (issue 31)', upstreamStartup: 'upstream-startup-5x100', max: 1000 },
];
