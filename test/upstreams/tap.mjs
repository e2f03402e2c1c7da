// Preloaded (`node --import …/tap.mjs?records=FILE SERVER.js …`) into an MCP server this project did not
// write, so tests can start it on loopback port 0 and see what reached it, without changing what it does.
// Guarantees: a TCP listen given no host binds 127.0.0.1 (never every interface), and the first listening
// port is printed on stderr as `tap listening on http://127.0.0.1:PORT`; every HTTP request it receives is
// appended to FILE as one JSON line (the first line, {kind: 'start', pid}, when the process starts) {kind: 'http', method, path, headers} before the server sees it; every
// JSON-RPC message it reads on stdin is appended as {kind: 'message', message}. The preload adds no listener
// to stdin and no handler to any request: it only watches (FILE is named in the URL, not the environment,
// so an environment allow-list in front of the server cannot drop it).
import { appendFileSync } from 'node:fs';
import dc from 'node:diagnostics_channel';
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

const records = new URL(import.meta.url).searchParams.get('records');
if (!records) throw new Error('tap.mjs: name the records file in the import URL (?records=FILE)');
const record = (r) => appendFileSync(records, `${JSON.stringify(r)}\n`);
record({ kind: 'start', pid: process.pid });

const listen = net.Server.prototype.listen;
let announced = false;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const portOnly = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  if (portOnly && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (first && typeof first === 'object' && 'port' in first && !first.host) args[0] = { ...first, host: '127.0.0.1' };
  this.once('listening', () => {
    if (announced) return;
    announced = true;
    process.stderr.write(`tap listening on http://127.0.0.1:${this.address().port}\n`);
  });
  return listen.apply(this, args);
};

dc.subscribe('http.server.request.start', ({ request }) => {
  record({ kind: 'http', method: request.method, path: request.url, headers: request.headers });
});

let rest = '';
const decoder = new StringDecoder('utf8');
const emit = process.stdin.emit;
process.stdin.emit = function (event, ...args) {
  if (event === 'data') {
    const lines = (rest + (typeof args[0] === 'string' ? args[0] : decoder.write(args[0]))).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      try {
        if (line.trim()) record({ kind: 'message', message: JSON.parse(line) });
      } catch {
        record({ kind: 'message', unparsed: line });
      }
    }
  }
  return emit.call(this, event, ...args);
};
