// How the harness talks to each scenario kind: `http` (one JSON POST), `mcp` (Streamable HTTP: initialize
// handshake when the scenario has a session, then tools/call; `modern`: 2026-07-28, stateless, _meta and headers), `ws` (MCP over WebSocket, subprotocol "mcp"),
// `oauth-code` (POST /token code exchanges from a pool minted before the clock starts), `oauth-refresh`
// (POST /token refresh grants, one rotating chain per connection) and `stdio` (tools/call on a stdio MCP server's
// own pipe, the connection the harness started it with). Each kind is open → check → load → close.
// check sends one call and throws unless the right answer comes back (an echoed text; for the token kinds, a
// validated token answer whose access token then echoes on /svc), so a server that answers fast but wrong never
// gets a number.
import http from 'node:http';
import WebSocket from 'ws';
import { TEXT, TOOL } from '../scenarios.mjs';
import { autocannonLoad, closedLoad, CONNECTIONS, wsLoad } from './load.mjs';
import { FORM_HEADERS, OAuthFlow } from './oauth.mjs';

export const MCP_VERSION = '2025-11-25';
const JSON_HEADERS = { 'content-type': 'application/json' };
const MCP_ACCEPT = 'application/json, text/event-stream';
const callParams = { name: TOOL, arguments: { text: TEXT } };
/** The tools/call a scenario makes and the text its answer must hold: bench.echo, unless the scenario names its own (`call`). */
const callOf = (scn) => scn.call ?? { ...callParams, text: TEXT };
const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
/** MCP 2026-07-28 (`modern: true`): no handshake; every call carries its version and capabilities in _meta and the standard headers. */
export const MODERN_VERSION = '2026-07-28';
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'fastsvc-bench', version: '1.0.0' } };
/** A session id shaped like fastsvc's (a UUID), for the echo of a 2025 session call. */
const ECHO_SESSION_ID = '6f1c2a4e-8d3b-4f5a-9c7e-2b1d0e3f4a5b';
export const initParams = { protocolVersion: MCP_VERSION, capabilities: {}, clientInfo: { name: 'fastsvc-bench', version: '1.0.0' } };

/** One HTTP request on a fresh connection; resolves { status, headers, body } (body as text). */
export function request(url, { method = 'GET', headers = {}, body } = {}, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

function expectStatus(res, ok, what) {
  if (!ok(res.status)) throw new Error(`${what}: HTTP ${res.status} ${res.body.slice(0, 160)}`);
}
const is2xx = (s) => s >= 200 && s < 300;

/** The JSON-RPC message in a Streamable HTTP answer, whether sent as JSON or as an SSE stream. */
function rpcAnswer(res) {
  if (!String(res.headers['content-type']).startsWith('text/event-stream')) return JSON.parse(res.body);
  const data = res.body.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  return data.find((m) => 'result' in m || 'error' in m) ?? {};
}

function expectEcho(msg, raw, text = TEXT) {
  const r = msg.result;
  if (r?.isError || r?.content?.[0]?.type !== 'text' || r.content[0].text !== text) {
    throw new Error(`tools/call answered ${String(raw).slice(0, 160)}`);
  }
}

/** True when some string anywhere in a JSON value equals text (the /svc answer's exact shape is fastsvc's). */
const containsText = (v, text = TEXT) =>
  v === text || (v !== null && typeof v === 'object' && Object.values(v).some((x) => containsText(x, text)));

const bearer = (token) => ({ authorization: `Bearer ${token}` });

const httpKind = {
  async open(scn, base, token) {
    const headers = { ...JSON_HEADERS, ...(scn.auth ? bearer(token) : {}) };
    const { text, arguments: args } = callOf(scn);
    return { url: base + scn.path, method: 'POST', headers, body: JSON.stringify(args), text };
  },
  async check(t) {
    const res = await request(t.url, t);
    expectStatus(res, is2xx, `POST ${t.url}`);
    if (!containsText(JSON.parse(res.body), t.text)) throw new Error(`POST ${t.url} answered ${res.body.slice(0, 160)}`);
  },
  load: (t, opts) => autocannonLoad(t, opts),
  async close() {},
};

const mcpKind = {
  async open(scn, base, token) {
    const url = base + (scn.path ?? '/mcp');
    const headers = { ...JSON_HEADERS, accept: MCP_ACCEPT, ...bearer(token), 'mcp-protocol-version': MCP_VERSION };
    const { text, ...params } = callOf(scn);
    // `echo`: the same request (headers and body) sent to an echo server, which answers it with its own body.
    if (scn.echo && !scn.modern) {
      headers['mcp-session-id'] = ECHO_SESSION_ID;
      return { url, method: 'POST', headers, bodyFor: (n) => rpc(n, 'tools/call', params), session: false, echo: true };
    }
    if (scn.modern) {
      Object.assign(headers, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': params.name });
      return { url, method: 'POST', headers, bodyFor: (n) => rpc(n, 'tools/call', { ...params, _meta: modernMeta }), session: false, echo: Boolean(scn.echo), text };
    }
    if (scn.session) {
      const { 'mcp-protocol-version': _, ...initHeaders } = headers;
      const init = await request(url, { method: 'POST', headers: initHeaders, body: rpc(0, 'initialize', initParams) });
      expectStatus(init, (s) => s === 200, 'initialize');
      const sid = init.headers['mcp-session-id'];
      if (!sid) throw new Error('initialize: no Mcp-Session-Id header');
      const version = rpcAnswer(init).result?.protocolVersion;
      if (!version) throw new Error(`initialize answered ${init.body.slice(0, 160)}`);
      Object.assign(headers, { 'mcp-session-id': sid, 'mcp-protocol-version': version });
      const body = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expectStatus(await request(url, { method: 'POST', headers, body }), (s) => s === 202, 'notifications/initialized');
    }
    // Concurrent calls on one session need distinct JSON-RPC ids: bodyFor(n) gives each request its own.
    return { url, method: 'POST', headers, bodyFor: (n) => rpc(n, 'tools/call', params), session: scn.session, text };
  },
  async check(t) {
    const body = t.bodyFor(0);
    const res = await request(t.url, { ...t, body });
    expectStatus(res, (s) => s === 200, 'tools/call');
    if (!t.echo) return expectEcho(rpcAnswer(res), res.body, t.text);
    if (res.body !== body) throw new Error(`echo of tools/call answered ${res.body.slice(0, 160)}`);
  },
  load: (t, opts) => autocannonLoad(t, opts),
  async close(t) {
    if (t.session) await request(t.url, { method: 'DELETE', headers: t.headers }).catch(() => {});
  },
};

/** One MCP connection over WebSocket: callbacks keyed by JSON-RPC id, no promise on the hot path. */
/** One JSON-RPC request on a connection with send(method, params, cb): its answer, or an error after timeoutMs. */
export function callOn(conn, method, params, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
    conn.send(method, params, (msg) => {
      clearTimeout(timer);
      if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error).slice(0, 160)}`));
      else resolve(msg);
    });
  });
}

export class WsConn {
  constructor(ws) {
    this.ws = ws;
    this.waiting = new Map();
    this.nextId = 1;
    this.closed = false;
    ws.on('message', (data) => {
      const msg = JSON.parse(data);
      const cb = msg.id !== undefined && this.waiting.get(msg.id);
      if (!cb) return; // notifications and strays
      this.waiting.delete(msg.id);
      cb(msg);
    });
    ws.on('close', () => {
      this.closed = true;
      for (const cb of this.waiting.values()) cb({ error: { message: 'socket closed' }, transport: true });
      this.waiting.clear();
    });
  }
  send(method, params, cb) {
    if (this.closed) return void queueMicrotask(() => cb({ error: { message: 'socket closed' }, transport: true }));
    const id = this.nextId++;
    this.waiting.set(id, cb);
    this.ws.send(rpc(id, method, params));
  }
  call(method, params, timeoutMs = 5000) {
    return callOn(this, method, params, timeoutMs);
  }
}

/** A WebSocket to url with the "mcp" subprotocol and the bearer token; resolves a WsConn once open. */
export function openSocket(url, token, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'mcp', { headers: bearer(token), handshakeTimeout: timeoutMs });
    ws.once('open', () => resolve(new WsConn(ws)));
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      reject(new Error(`WebSocket upgrade answered HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
}

const wsKind = {
  async open(scn, base, token) {
    const url = `${base.replace(/^http/, 'ws')}${scn.path ?? '/ws'}`;
    const conns = [];
    try {
      for (let i = 0; i < scn.sockets; i++) {
        const conn = await openSocket(url, token);
        conns.push(conn);
        await conn.call('initialize', initParams);
        conn.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      }
    } catch (err) {
      for (const c of conns) c.ws.terminate();
      throw err;
    }
    const { text, ...params } = callOf(scn);
    return { conns, inFlight: scn.inFlight, params, text };
  },
  async check(t) {
    const msg = await t.conns[0].call('tools/call', t.params);
    expectEcho(msg, JSON.stringify(msg), t.text);
  },
  load: (t, opts) => wsLoad(t.conns, t.inFlight, 'tools/call', t.params, opts),
  async close(t) {
    for (const c of t.conns) c.ws.close();
  },
};

const stdioKind = {
  /** The server's own pipe (lib/stdio.mjs, opened by lib/proc.mjs's startServer): `inFlight` calls outstanding on it. */
  async open(scn, _base, _token, server) {
    const { text, ...params } = callOf(scn);
    return { conns: [server.conn], inFlight: scn.inFlight, params, text };
  },
  async check(t) {
    const msg = await t.conns[0].call('tools/call', t.params);
    expectEcho(msg, JSON.stringify(msg), t.text);
  },
  load: (t, opts) => wsLoad(t.conns, t.inFlight, 'tools/call', t.params, opts),
  async close() {}, // the pipe is the server's: it closes when the server stops
};

/** POST /svc/tools/bench.echo with `token`; throws unless the text comes back. */
async function expectSvcEcho(base, token) {
  const t = await httpKind.open({ path: `/svc/tools/${TOOL}`, auth: true }, base, token);
  await httpKind.check(t);
}

/** The parsed answer of POST /token when it is a bearer token answer with a refresh token, else null. */
function tokenAnswer(body) {
  try {
    const t = JSON.parse(body);
    return String(t.token_type).toLowerCase() === 'bearer' && t.access_token && t.refresh_token ? t : null;
  } catch {
    return null;
  }
}

const MAX_CODE_POOL = 10_000;
const codeRate = new Map(); // scenario name → exchanges/s in its last run, to size the next pool

const oauthCodeKind = {
  /** load() mints its pool of codes (authorize requests) before the clock starts: the server's CPU time over it is not the exchanges'. */
  setupInLoad: true,
  async open(scn, base) {
    const flow = await OAuthFlow.open(base);
    return { name: scn.name, base, flow, client: await flow.register(), resource: `${base}/mcp` };
  },
  async check(t) {
    const tokens = await t.flow.exchange(t.client, await t.flow.authorize(t.client, t.resource), t.resource);
    await expectSvcEcho(t.base, tokens.access_token);
  },
  /** Codes are single-use: mint about `seconds` worth (at the last run's rate) first, then time their exchange. */
  async load(t, { seconds }) {
    const n = Math.max(20, Math.min(MAX_CODE_POOL, Math.ceil((codeRate.get(t.name) ?? 50) * seconds)));
    const forms = await t.flow.mintCodeForms(t.client, t.resource, n);
    const res = await closedLoad(CONNECTIONS, {
      next: () => {
        const body = forms.pop();
        return body ? { url: t.flow.tokenUrl, headers: FORM_HEADERS, body } : null;
      },
      done: (_i, status, body) => status === 200 && tokenAnswer(body) !== null,
    }, { timeoutMs: seconds * 5000 + 30_000 });
    if (res.rps > 0) codeRate.set(t.name, res.rps);
    return res;
  },
  async close() {},
};

const oauthRefreshKind = {
  /** One registered client and one grant per connection, so the chains are independent. */
  async open(_scn, base) {
    const flow = await OAuthFlow.open(base);
    const resource = `${base}/mcp`;
    const chains = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const client = await flow.register();
      const tokens = await flow.exchange(client, await flow.authorize(client, resource), resource);
      chains.push({ client, refreshToken: tokens.refresh_token });
    }
    return { base, flow, resource, chains };
  },
  async check(t) {
    const chain = t.chains[0];
    const tokens = await t.flow.refresh(chain.client, chain.refreshToken, t.resource);
    if (tokens.refresh_token === chain.refreshToken) throw new Error('refresh: the refresh token did not rotate');
    chain.refreshToken = tokens.refresh_token;
    await expectSvcEcho(t.base, tokens.access_token);
  },
  load(t, { seconds }) {
    return closedLoad(t.chains.length, {
      next: (i) => ({ url: t.flow.tokenUrl, headers: FORM_HEADERS, body: t.flow.refreshForm(t.chains[i].client, t.chains[i].refreshToken, t.resource) }),
      done: (i, status, body) => {
        const rt = status === 200 ? tokenAnswer(body)?.refresh_token : undefined;
        if (!rt || rt === t.chains[i].refreshToken) return false;
        t.chains[i].refreshToken = rt;
        return true;
      },
    }, { seconds, timeoutMs: seconds * 1000 + 30_000 });
  },
  async close() {},
};

/** Scenario kinds the harness can run; a scenario of any other kind is reported as pending. */
export const KINDS = { http: httpKind, mcp: mcpKind, ws: wsKind, stdio: stdioKind, 'oauth-code': oauthCodeKind, 'oauth-refresh': oauthRefreshKind };
