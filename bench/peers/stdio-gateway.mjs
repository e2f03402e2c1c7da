// Peer (issue 31): a stdio MCP server exposed over Streamable HTTP by one of the gateways on npm, run in this
// process so that the harness's pid, and so the CPU it reads from /proc, is the gateway's own (the stdio upstream is
// the gateway's child: its CPU is not in the gateway's /proc/PID/stat, which is what "added CPU per call" needs).
//   node bench/peers/stdio-gateway.mjs mcp-proxy|supergateway UPSTREAM_SCRIPT [ARGS...]
// mcp-proxy: one upstream client shared by every session (`--server stream`, `--no-eventStore`: the option its help
// gives request/response deployments). supergateway: `--stateful`, one upstream child per session (its stateless mode
// spawns a child per request), `--logLevel none` (info logs every message). Neither prints the port it got nor lets
// the bind address be chosen in both, so this picks a free loopback port, makes every listen() of the process bind
// 127.0.0.1, waits until the gateway answers its health path (mcp-proxy GET /ping, supergateway GET /healthz) and
// prints `listening on http://127.0.0.1:PORT`.
import net from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const [peer, upstream, ...upstreamArgs] = process.argv.slice(2);
const GATEWAYS = {
  'mcp-proxy': {
    bin: 'mcp-proxy/dist/bin/mcp-proxy.mjs',
    health: '/ping',
    args: (port) => ['--host', '127.0.0.1', '--port', String(port), '--server', 'stream', '--no-eventStore', '--', process.execPath, upstream, ...upstreamArgs],
  },
  supergateway: {
    bin: 'supergateway/dist/index.js',
    health: '/healthz',
    // supergateway runs this string through a shell (its own choice): the paths here have no spaces or quotes.
    args: (port) => ['--stdio', [process.execPath, upstream, ...upstreamArgs].join(' '), '--outputTransport', 'streamableHttp', '--stateful',
      '--port', String(port), '--healthEndpoint', '/healthz', '--logLevel', 'none'],
  },
};
const gateway = GATEWAYS[peer];
if (!gateway || !upstream) {
  console.error(`usage: stdio-gateway.mjs ${Object.keys(GATEWAYS).join('|')} UPSTREAM_SCRIPT [ARGS...]`);
  process.exit(2);
}

/** A port free on 127.0.0.1 right now (the gateway binds it a moment later). */
const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer().once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

const port = await freePort();
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  // listen(port[, host][, backlog][, cb]) or listen({ port, host }): keep the port and the callback, bind loopback.
  const cb = args.find((a) => typeof a === 'function');
  const p = typeof args[0] === 'object' && args[0] !== null ? args[0].port : args[0];
  return listen.call(this, { port: p, host: '127.0.0.1' }, cb);
};

const require = createRequire(import.meta.url);
const bin = join(dirname(require.resolve(`${gateway.bin.split('/')[0]}/package.json`)), gateway.bin.split('/').slice(1).join('/'));
process.argv = [process.execPath, bin, ...gateway.args(port)];
import(bin);

const base = `http://127.0.0.1:${port}`;
const deadline = Date.now() + 15_000;
for (;;) {
  const ok = await fetch(base + gateway.health, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false);
  if (ok) break;
  if (Date.now() > deadline) throw new Error(`${peer}: ${gateway.health} did not answer within 15 s`);
  await new Promise((r) => setTimeout(r, 20));
}
console.log(`listening on ${base}`);
