// Peer: the official MCP SDK server — McpServer with one tool `bench.echo` (string `text` → text), served by
// StreamableHTTPServerTransport through Express (createMcpExpressApp) behind the SDK's requireBearerAuth with a
// static, constant-time verifier of BENCH_TOKEN (scope bench.run). Mode argument: `stateless` (new server and
// transport per request, as the SDK's example does) or `stateful` (sessions; the harness opens one). Both use
// JSON responses. GET /healthz answers 200. Prints `listening on http://127.0.0.1:PORT` when ready.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const mode = process.argv[2];
if (mode !== 'stateless' && mode !== 'stateful') throw new Error('usage: sdk-server.mjs stateless|stateful');
if (!process.env.BENCH_TOKEN) throw new Error('sdk-server: BENCH_TOKEN is not set');
const expected = Buffer.from(process.env.BENCH_TOKEN);
const MAX_SESSIONS = 16;

const verifier = {
  async verifyAccessToken(token) {
    const got = Buffer.from(token);
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
      throw new InvalidTokenError('unknown token');
    }
    return { token, clientId: 'bench', scopes: ['bench.run'], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
  },
};

function getServer() {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  server.registerTool(
    'bench.echo',
    { description: 'Echo text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const jsonRpcError = (res, status, code, message) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

const app = createMcpExpressApp({ host: '127.0.0.1' });
app.get('/healthz', (_req, res) => res.json({ ok: true }));
app.use('/mcp', requireBearerAuth({ verifier, requiredScopes: ['bench.run'] }));

if (mode === 'stateless') {
  app.post('/mcp', async (req, res) => {
    const server = getServer();
    try {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
      res.on('close', () => {
        transport.close();
        server.close();
      });
    } catch {
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal server error');
    }
  });
} else {
  const sessions = new Map(); // session id → transport
  app.all('/mcp', async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) return jsonRpcError(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) return jsonRpcError(res, 400, -32000, 'No session');
      if (sessions.size >= MAX_SESSIONS) return jsonRpcError(res, 503, -32000, 'Too many open sessions');
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await getServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
}

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
