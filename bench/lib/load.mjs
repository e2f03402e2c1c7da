// Load generators. All return { total, seconds, rps, p50, p99, non2xx, errors, errorKinds?, stopped } (latency in ms).
// autocannonLoad drives HTTP with `connections` (default CONNECTIONS, 10) connections for `seconds` or for `amount` requests; wsLoad keeps
// `inFlight` calls outstanding on each socket; closedLoad runs stateful request chains (OAuth codes and refresh
// tokens), one per connection. All record every call's latency (sorted-array percentiles) and are bounded in
// time: a run that does not finish by its deadline is stopped and reported as such.
import autocannon from 'autocannon';
import http from 'node:http';

export const CONNECTIONS = 10;
/** Distinct pre-built requests per connection when the request needs a distinct body (bodyFor). */
const RING = 16;

/** Percentiles of latencies in ms: sorts in place, nearest-rank. */
function percentiles(latencies) {
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { p50: pct(50), p99: pct(99) };
}

/**
 * req: { url, method, headers, body } and optionally bodyFor(n), which gives request n its own body (MCP needs a
 * distinct JSON-RPC id per in-flight call; autocannon 8's idReplacement miscomputes Content-Length, so not that;
 * see the RING below).
 * opts: { seconds } or { amount, timeoutMs }, optionally { connections } (default CONNECTIONS), and an optional onTick() called every 500 ms that may return a
 * reason to stop early. Latency is taken from every response's own timing (autocannon's histogram rounds to ms).
 */
export function autocannonLoad(req, { seconds, amount, connections = CONNECTIONS, timeoutMs = (seconds ?? 600) * 1000 + 30_000, onTick }) {
  return new Promise((resolve, reject) => {
    let stopped = null;
    const latencies = [];
    const opts = { url: req.url, method: req.method, headers: req.headers, body: req.body, connections };
    if (req.bodyFor) {
      // Each connection cycles through RING requests of its own, built once (ids client·RING+1 … (client+1)·RING):
      // a connection has one call in flight, so no two in-flight calls share an id, and the client costs what a
      // fixed body costs. A setupRequest hook instead rebuilds every request: measured, it held the raw echo to
      // 0.67× its rate with a fixed body, so it measured the load generator rather than the server.
      let client = 0;
      opts.setupClient = (c) => {
        const first = client++ * RING + 1;
        c.setRequests(Array.from({ length: RING }, (_, k) => ({ method: req.method, headers: req.headers, body: req.bodyFor(first + k) })));
      };
    }
    if (amount) opts.amount = amount;
    else opts.duration = seconds;
    // autocannon sees its deadline only when it samples (every second by default): a shorter run samples sooner.
    if (!amount && seconds < 1) opts.sampleInt = seconds * 1000;
    const stop = (reason) => {
      stopped ??= reason;
      inst.stop();
    };
    const inst = autocannon(opts, (err, r) => {
      clearTimeout(deadline);
      clearInterval(ticker);
      if (err) return reject(err);
      resolve({
        total: r.requests.total,
        seconds: r.duration,
        rps: r.requests.total / r.duration,
        ...percentiles(latencies),
        non2xx: r.non2xx,
        errors: r.errors, // includes timeouts
        errorKinds,
        stopped,
      });
    });
    const errorKinds = {};
    inst.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
    inst.on('reqError', (e) => (errorKinds[e.code ?? e.message] = (errorKinds[e.code ?? e.message] ?? 0) + 1));
    const deadline = setTimeout(() => stop(`deadline of ${timeoutMs} ms`), timeoutMs);
    const ticker = setInterval(() => {
      const reason = onTick?.();
      if (reason) stop(reason);
    }, 500);
  });
}

/** conns: WsConn[]. Error answers count as non2xx (the protocol's failure), transport failures as errors. */
export function wsLoad(conns, inFlight, method, params, { seconds }) {
  return new Promise((resolve) => {
    const latencies = [];
    let open = 0;
    let non2xx = 0;
    let errors = 0;
    let finished = false;
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    const finish = (stopped = null) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      const elapsed = (performance.now() - t0) / 1000;
      const total = latencies.length;
      resolve({ total, seconds: elapsed, rps: total / elapsed, ...percentiles(latencies), non2xx, errors: errors + open, stopped });
    };
    const fire = (conn) => {
      const start = performance.now();
      open++;
      conn.send(method, params, (msg) => {
        open--;
        const now = performance.now();
        if (msg.transport) errors++;
        else {
          latencies.push(now - start);
          if (msg.error || msg.result?.isError) non2xx++;
        }
        if (now < end && !conn.closed && !finished) fire(conn);
        else if (open === 0) finish();
      });
    };
    // Calls still unanswered 10 s after the end are counted as errors.
    const deadline = setTimeout(() => finish('unanswered calls at deadline'), seconds * 1000 + 10_000);
    for (const conn of conns) for (let i = 0; i < inFlight; i++) fire(conn);
  });
}

/**
 * Closed-loop load for requests that depend on state the server hands out (single-use codes, rotating refresh
 * tokens): `workers` loops, each on its own keep-alive connection. step.next(i) gives worker i its next request
 * { url, headers, body } (POST) or null when it has none left; step.done(i, status, body) says whether the answer is
 * right — a wrong answer counts as non2xx and ends that worker (its state can no longer be trusted). The run ends
 * when every worker has ended, `seconds` (if given) have passed, or at timeoutMs (reported as stopped).
 */
export function closedLoad(workers, step, { seconds = Infinity, timeoutMs = 120_000 }) {
  const latencies = [];
  const errorKinds = {};
  let non2xx = 0;
  let errors = 0;
  let stopped = null;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async (i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (!stopped && performance.now() < end) {
        const req = step.next(i);
        if (!req) return;
        const start = performance.now();
        let res;
        try {
          res = await post(agent, req);
        } catch (e) {
          errors++;
          errorKinds[e.code ?? e.message] = (errorKinds[e.code ?? e.message] ?? 0) + 1;
          return;
        }
        latencies.push(performance.now() - start);
        if (!step.done(i, res.status, res.body)) {
          non2xx++;
          return;
        }
      }
    } finally {
      agent.destroy();
    }
  };
  let timer;
  const deadline = new Promise((resolve) => (timer = setTimeout(() => resolve((stopped = `deadline of ${timeoutMs} ms`)), timeoutMs)));
  return Promise.race([Promise.all(Array.from({ length: workers }, (_, i) => worker(i))), deadline]).then(() => {
    clearTimeout(timer);
    const elapsed = (performance.now() - t0) / 1000;
    return { total: latencies.length, seconds: elapsed, rps: latencies.length / elapsed, ...percentiles(latencies), non2xx, errors, errorKinds, stopped };
  });
}

/** One POST on `agent`; resolves { status, headers, body } (body as text); bounded by a 10 s socket timeout. */
export function post(agent, { url, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
