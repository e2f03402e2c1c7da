// The V8 heap a server retains, read through the inspector protocol: the harness starts the server with
// --inspect on a loopback port of its own (inspectorEnv) and asks it for two full garbage collections and then
// process.memoryUsage().heapUsed — what is still reachable, without the garbage that the opening traffic left
// (a heap "used" figure read without a collection mostly counts that garbage). Every call is bounded in time.
import net from 'node:net';
import WebSocket from 'ws';

/** A free loopback port and the environment that makes a child server listen for the inspector on it. */
export async function inspectorEnv() {
  const port = await new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  return { port, env: { NODE_OPTIONS: `--inspect=127.0.0.1:${port}` } };
}

/** Connects to the inspector on `port`; resolves { heapAfterGcMiB(), close() }. */
export async function openInspector(port, timeoutMs = 10_000) {
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(timeoutMs) })).json();
  const ws = new WebSocket(list[0].webSocketDebuggerUrl, { handshakeTimeout: timeoutMs });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let id = 0;
  const waiting = new Map();
  ws.on('message', (data) => {
    const m = JSON.parse(data);
    const w = m.id !== undefined && waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    clearTimeout(w.timer);
    if (m.error) w.reject(new Error(`inspector: ${m.error.message}`));
    else w.resolve(m.result);
  });
  const call = (method, params = {}) => new Promise((resolve, reject) => {
    const i = ++id;
    const timer = setTimeout(() => {
      waiting.delete(i);
      reject(new Error(`inspector: ${method} got no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    waiting.set(i, { resolve, reject, timer });
    ws.send(JSON.stringify({ id: i, method, params }));
  });
  return {
    async heapAfterGcMiB() {
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const r = await call('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
      return r.result.value / 2 ** 20;
    },
    close: () => ws.close(),
  };
}
