// Ceiling peer: a bare `ws` server on node:http, the machine's upper bound for /ws. It accepts the "mcp"
// subprotocol, parses each JSON-RPC message and answers `initialize` and `tools/call` with the shape fastsvc
// answers (the call's `arguments.text` echoed as one text content block); notifications get no answer.
// GET /healthz answers 200. No auth, no policy: driven by exactly the loop that drives fastsvc's /ws
// (bench/lib/load.mjs wsLoad). Prints `listening on http://127.0.0.1:PORT` when ready.
import http from 'node:http';
import { WebSocketServer } from 'ws';

const server = http.createServer((req, res) => {
  const ok = req.method === 'GET' && req.url === '/healthz';
  res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
  res.end(ok ? '{"ok":true}' : '{"error":"not found"}');
});
const wss = new WebSocketServer({ server, path: '/ws', handleProtocols: (set) => (set.has('mcp') ? 'mcp' : false) });

function answer(msg) {
  if (msg.method === 'initialize') {
    return { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'ws-echo', version: '1.0.0' } };
  }
  if (msg.method === 'tools/call') return { content: [{ type: 'text', text: String(msg.params?.arguments?.text ?? '') }] };
  return {};
}

wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return ws.send('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
    }
    if (msg.id === undefined) return;
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: answer(msg) }));
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
