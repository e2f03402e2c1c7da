// `node bench/peers/replicas-proxy.mjs N MANIFEST [sticky|none]`: N `svc serve` replicas of MANIFEST (all on the
// DATABASE_URL of the environment) behind a small loopback round-robin proxy, for bench/run.mjs. Guarantees: the proxy
// listens first and its URL is every replica's PUBLIC_URL (issuer and base_url), as a load balancer's would be; each
// request goes to the next replica, except, with `sticky` (the default), one carrying an Mcp-Session-Id, which goes
// where that session was opened (session affinity); with `none` every request goes to the next replica, 2025 sessions'
// too (issue 40: any replica serves any session), so the two modes differ only in where a session's requests land. It prints
// `listening on http://127.0.0.1:PORT` only once every replica listens; GET /.bench/replicas (answered by the proxy,
// never forwarded) lists the replicas' own URLs. SIGTERM/SIGINT stop the replicas, then the proxy.
import { spawn } from 'node:child_process';
import http from 'node:http';

const [count, manifest, affinity = 'sticky'] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
if (!(count >= 1 && count <= 8) || !manifest || !['sticky', 'none'].includes(affinity)) {
  console.error('usage: node bench/peers/replicas-proxy.mjs N(1..8) MANIFEST [sticky|none]');
  process.exit(2);
}
const FASTSVC_CLI = process.env.FASTSVC_CLI ?? 'dist/cli.js';
const upstreams = [];
const sessions = new Map(); // Mcp-Session-Id → replica URL
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let next = 0;

const proxy = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/.bench/replicas') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(upstreams));
    return;
  }
  const sid = req.headers['mcp-session-id'];
  const chosen = (affinity === 'sticky' && typeof sid === 'string' && sessions.get(sid)) || upstreams[next++ % upstreams.length];
  const target = new URL(chosen);
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
    const opened = r.headers['mcp-session-id'];
    if (affinity === 'sticky' && typeof opened === 'string' && req.method === 'POST') sessions.set(opened, chosen);
    if (affinity === 'sticky' && req.method === 'DELETE' && typeof sid === 'string') sessions.delete(sid);
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(up);
});

const children = [];
/** Start one replica; resolves its URL once it prints its listening line. */
function replica(publicUrl) {
  const child = spawn(process.execPath, [...process.execArgv, FASTSVC_CLI, 'serve', manifest, '--port', '0', '--no-watch'], {
    env: { ...process.env, PUBLIC_URL: publicUrl }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out = (out + d).slice(-4000);
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code, sig) => reject(new Error(`replica exited (${code ?? sig}) before listening`)));
  });
}

function stop() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  proxy.close();
  agent.destroy();
}
process.on('SIGTERM', () => stop());
process.on('SIGINT', () => stop());
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

proxy.listen(0, '127.0.0.1', async () => {
  const url = `http://127.0.0.1:${proxy.address().port}`;
  try {
    upstreams.push(...await Promise.all(Array.from({ length: count }, () => replica(url)))); // together: one migration
  } catch (err) {
    console.error(err.message);
    stop();
    process.exitCode = 1;
    return;
  }
  console.log(`listening on ${url}`);
});
