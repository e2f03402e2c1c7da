// Ceiling peer: a bare node:http server. POST /echo parses the JSON body and answers it back as JSON;
// GET /healthz answers 200. Listens on 127.0.0.1, port PORT or 0, and prints
// `listening on http://127.0.0.1:PORT` when ready. No framework, no auth: the machine's upper bound.
import http from 'node:http';

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return reply(res, 200, '{"ok":true}');
  if (req.method !== 'POST' || req.url !== '/echo') return reply(res, 404, '{"error":"not found"}');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, '{"error":"invalid JSON"}');
    }
    reply(res, 200, JSON.stringify(body));
  });
});

function reply(res, status, json) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
