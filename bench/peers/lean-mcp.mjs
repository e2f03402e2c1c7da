// Reference peer: the leanest bare node:http server that still does what a 2026-07-28 tools/call asks of a
// server — the bearer token in constant time (BENCH_TOKEN), Accept and Content-Type, a body limit, the JSON-RPC
// envelope, the Mcp-Method / MCP-Protocol-Version / Mcp-Name headers against the body and its _meta, the tool's
// scope, its input schema (ajv, compiled once), and the answer with resultType and the serverInfo _meta — all in
// one synchronous function, for one tool (bench.echo: the text back). It is what the protocol's checks cost
// written as one straight line, without a policy store, observer, quotas, tasks or a second transport: a bound
// on what a general server can reach, not a product. GET /healthz answers 200. Listens on 127.0.0.1, port PORT
// or 0, and prints `listening on http://127.0.0.1:PORT` when ready.
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import Ajv from 'ajv';

if (!process.env.BENCH_TOKEN) throw new Error('lean-mcp: BENCH_TOKEN is not set');
const expected = Buffer.from(`Bearer ${process.env.BENCH_TOKEN}`);
const LIMIT = 1024 * 1024;
const VERSION = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_META = Object.freeze({ 'io.modelcontextprotocol/serverInfo': Object.freeze({ name: 'lean-mcp', version: '1.0.0' }) });
const GRANTED = new Set(['bench.run']);
const TOOLS = new Map([['bench.echo', {
  scopes: ['bench.run'],
  validate: new Ajv({ strict: true }).compile({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }),
}]]);

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, ['Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(text))]);
  res.end(text);
}
const fail = (res, status, id, code, message) => reply(res, status, { jsonrpc: '2.0', id, error: { code, message } });

/** The whole call, once the body is in: every check in the revision's order, then the tool. */
function call(h, text, res) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return fail(res, 400, null, -32700, 'the body is not valid JSON');
  }
  if (m === null || typeof m !== 'object' || m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (typeof m.id !== 'string' && typeof m.id !== 'number')) {
    return fail(res, 400, null, -32600, 'not a JSON-RPC request');
  }
  const id = m.id;
  const p = m.params !== null && typeof m.params === 'object' ? m.params : {};
  if (h['mcp-method'] !== m.method) return fail(res, 400, id, -32001, 'Mcp-Method does not match the body');
  const meta = p._meta;
  const version = meta?.[META_VERSION];
  const caps = meta?.[META_CAPS];
  if (typeof version !== 'string' || caps === null || typeof caps !== 'object') return fail(res, 400, id, -32602, '_meta lacks the protocol version or capabilities');
  if (h['mcp-protocol-version'] !== version) return fail(res, 400, id, -32001, 'MCP-Protocol-Version does not match _meta');
  if (version !== VERSION) return fail(res, 400, id, -32022, 'unsupported protocol version');
  if (m.method !== 'tools/call') return fail(res, 404, id, -32601, 'method not found');
  if (h['mcp-name'] !== p.name) return fail(res, 400, id, -32001, 'Mcp-Name does not match the body');
  const tool = TOOLS.get(p.name);
  if (!tool) return fail(res, 200, id, -32602, 'unknown tool');
  for (const s of tool.scopes) if (!GRANTED.has(s)) return fail(res, 403, id, -32600, 'insufficient scope');
  const args = p.arguments ?? {};
  if (!tool.validate(args)) return fail(res, 200, id, -32602, 'invalid arguments');
  reply(res, 200, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: args.text }], resultType: 'complete', _meta: SERVER_META } });
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return reply(res, 200, { ok: true });
  if (req.method !== 'POST' || req.url !== '/mcp') return fail(res, 404, null, -32600, 'not found');
  const h = req.headers;
  const got = Buffer.from(h.authorization ?? '');
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return fail(res, 401, null, -32600, 'invalid token');
  if (!/application\/json|\*\/\*/.test(h.accept ?? '*/*')) return fail(res, 406, null, -32600, 'Accept must include application/json');
  if (h['content-type'] !== 'application/json') return fail(res, 415, null, -32600, 'Content-Type must be application/json');
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= LIMIT) chunks.push(c);
  });
  req.on('end', () => {
    if (size > LIMIT) return fail(res, 413, null, -32600, 'body too large');
    call(h, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'), res);
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
