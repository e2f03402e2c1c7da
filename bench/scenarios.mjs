// What the benchmark runs, as data: the servers (each its own child process) and the scenarios measured on them.
// A scenario names its server and a `kind` the harness knows (http | mcp | ws, see lib/clients.mjs); an entry with
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

/** argv is run as `node ...argv` from the repository root; every server answers GET /healthz with 200. */
export const SERVERS = {
  raw: { argv: ['bench/peers/raw-http.mjs'] },
  express: { argv: ['bench/peers/express-echo.mjs'] },
  'express-auth': { argv: ['bench/peers/express-echo.mjs', 'auth'] },
  'sdk-stateful': { argv: ['bench/peers/sdk-server.mjs', 'stateful'] },
  'sdk-stateless': { argv: ['bench/peers/sdk-server.mjs', 'stateless'] },
  fastsvc: { argv: fastsvc('bench/fastsvc.svc.yaml'), hint: 'run `npm run build` first' },
  // Hooks: fastsvc with its OAuth server, one per provider. Needs bench/fastsvc-oauth-*.svc.yaml and a token source.
  'fastsvc-oauth-memory': { argv: fastsvc('bench/fastsvc-oauth-memory.svc.yaml'), pending: 'OAuth has not landed' },
  'fastsvc-oauth-sqlite': { argv: fastsvc('bench/fastsvc-oauth-sqlite.svc.yaml'), pending: 'OAuth has not landed' },
};

const ECHO = '/echo';
const SVC = `/svc/tools/${TOOL}`;

/**
 * Throughput scenarios, measured in this order in every round (servers interleave A/B/A/B).
 * http: POST path with {"text": TEXT}, `auth` adds the bearer token. mcp: tools/call on path (default /mcp),
 * `session` runs the initialize handshake first. ws: MCP over WebSocket, `sockets` × `inFlight` calls outstanding.
 */
export const SCENARIOS = [
  { name: 'raw', server: 'raw', kind: 'http', path: ECHO, label: 'raw node:http JSON echo' },
  { name: 'express', server: 'express', kind: 'http', path: ECHO, label: 'Express 5 + express.json() echo' },
  { name: 'express-auth', server: 'express-auth', kind: 'http', path: ECHO, auth: true, label: 'Express 5 + constant-time bearer + echo' },
  { name: 'sdk-stateful', server: 'sdk-stateful', kind: 'mcp', session: true, label: 'MCP SDK stateful (one session), JSON' },
  { name: 'sdk-stateless', server: 'sdk-stateless', kind: 'mcp', session: false, label: 'MCP SDK stateless, JSON' },
  { name: 'fastsvc-svc', server: 'fastsvc', kind: 'http', path: SVC, auth: true, label: 'fastsvc /svc tool call, bearer + scope' },
  { name: 'fastsvc-mcp', server: 'fastsvc', kind: 'mcp', session: true, label: 'fastsvc /mcp tools/call, one session, JSON' },
  { name: 'fastsvc-ws-1x10', server: 'fastsvc', kind: 'ws', sockets: 1, inFlight: 10, label: 'fastsvc /ws, 1 socket × 10 in flight' },
  { name: 'fastsvc-ws-10x1', server: 'fastsvc', kind: 'ws', sockets: 10, inFlight: 1, label: 'fastsvc /ws, 10 sockets × 1 in flight' },
  // Hooks: OAuth access tokens on /svc and /mcp (token: 'oauth' needs a token source in lib/clients.mjs).
  { name: 'fastsvc-oauth-svc', server: 'fastsvc-oauth-memory', kind: 'http', path: SVC, auth: true, token: 'oauth', label: 'fastsvc /svc, OAuth access token' },
  { name: 'fastsvc-oauth-mcp', server: 'fastsvc-oauth-memory', kind: 'mcp', session: true, token: 'oauth', label: 'fastsvc /mcp, OAuth access token' },
  // Hooks: token endpoint throughput (each code is single-use, so these need their own load kinds).
  ...['memory', 'sqlite'].flatMap((p) => [
    { name: `oauth-code-${p}`, server: `fastsvc-oauth-${p}`, kind: 'oauth-code', label: `POST /token authorization_code (${p})`, pending: 'kind oauth-code not written yet' },
    { name: `oauth-refresh-${p}`, server: `fastsvc-oauth-${p}`, kind: 'oauth-refresh', label: `POST /token refresh_token (${p})`, pending: 'kind oauth-refresh not written yet' },
  ]),
];

/** The ratio columns: each scenario's req/s divided by these scenarios' req/s in the same run. */
export const BASELINES = ['express', 'sdk-stateful', 'sdk-stateless'];

/** Memory flatness (--memory): `calls` tools/call on one /mcp session; RSS after warm-up vs at the end. */
export const MEMORY = [
  { name: 'memory-fastsvc-mcp', server: 'fastsvc', calls: 200_000, smokeCalls: 5_000 },
  // The SDK 1.x stateful JSON mode keeps ~5.7 KiB per call (PERF-NOTES); capped so it cannot eat the machine.
  { name: 'memory-sdk-stateful', server: 'sdk-stateful', calls: 30_000, smokeCalls: 5_000 },
];

/**
 * Hook: reload latency (issue 5) — write an edit to a copy of the manifest under a watching server, time until
 * the first request decided by the new policy; p50/p99 over ≥ 50 edits.
 */
export const RELOAD = [
  { name: 'reload-fastsvc', server: 'fastsvc', edits: 50, smokeEdits: 3, pending: 'hot reload has not landed' },
];
