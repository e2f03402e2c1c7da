// Per-upstream metrics on the real `svc serve`'s /metrics, with a recording SDK 1.x upstream
// (test/helpers/recording-upstream.ts) and one that never answers: each upstream's state set (ready for
// one, starting for the other), its calls by method and outcome (ok, BACKEND_TIMEOUT) with their latency
// histogram, calls in flight, restarts and refused questions; a call fastsvc refuses (a missing scope)
// never reached the upstream and is not counted as one of its calls.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { parseProm, type Sample } from '../helpers/prom-text.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));

describe('upstreams: per-upstream metrics', function () {
  this.timeout(30_000);
  let up: RecordingUpstream;
  let silent: Server;
  let srv: Served;
  const call = (name: string, args: unknown) => fetch(`${srv.url}/svc/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });

  before(async () => {
    up = await startRecordingUpstream();
    // An HTTP server that accepts and never answers: its upstream stays `starting`.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['rec.use'] },
      profile: { scopes: ['rec.use', 'rec.admin'] },
      routes: { public: ['/metrics', '/readyz'], protected: ['/svc'] },
      upstreams: [
        { name: 'rec', url: up.url, expose: { prefix: 'rec.', required_scopes: ['rec.use'], overrides: { admin_op: { required_scopes: ['rec.admin'] }, slow: { timeout_ms: 300 } } } },
        { name: 'mute', url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, connect_timeout_ms: 200, restart: { min_ms: 60_000, max_ms: 60_000 } },
      ],
    }, { env: { TOKEN } });
  });
  after(async () => {
    await srv?.stop();
    await up?.close();
    silent?.closeAllConnections();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('states, calls by method and outcome, latency, in flight, restarts and refused questions, labelled by upstream', async () => {
    assert.equal((await call('rec.echo', { text: 'a' })).status, 200);
    assert.equal((await call('rec.echo', { text: 'b' })).status, 200);
    assert.equal((await call('rec.slow', { ms: 10_000 })).status, 504);
    assert.equal((await call('rec.admin_op', {})).status, 403);
    const res = await fetch(`${srv.url}/metrics`);
    assert.equal(res.status, 200);
    const prom = parseProm(await res.text());
    const value = (name: string, labels: Record<string, string>) => prom.samples.filter((s: Sample) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).map((s) => s.value);

    assert.equal(prom.types.get('fastsvc_upstream_state'), 'gauge');
    assert.deepEqual(value('fastsvc_upstream_state', { upstream: 'rec', state: 'ready' }), [1]);
    assert.deepEqual(value('fastsvc_upstream_state', { upstream: 'rec', state: 'restarting' }), [0]);
    assert.deepEqual(value('fastsvc_upstream_state', { upstream: 'mute', state: 'starting' }), [1]);
    assert.deepEqual(value('fastsvc_upstream_state', { upstream: 'mute', state: 'ready' }), [0]);

    assert.equal(prom.types.get('fastsvc_upstream_calls_total'), 'counter');
    assert.deepEqual(value('fastsvc_upstream_calls_total', { upstream: 'rec', method: 'tools/call', outcome: 'ok' }), [2]);
    assert.deepEqual(value('fastsvc_upstream_calls_total', { upstream: 'rec', method: 'tools/call', outcome: 'BACKEND_TIMEOUT' }), [1]);
    assert.equal(value('fastsvc_upstream_calls_total', { upstream: 'rec', outcome: 'INSUFFICIENT_SCOPE' }).length, 0, 'a refused call never reached the upstream');
    assert.deepEqual(up.calls.map((c) => c.name), ['echo', 'echo', 'slow']);

    assert.equal(prom.types.get('fastsvc_upstream_call_duration_seconds'), 'histogram');
    assert.deepEqual(value('fastsvc_upstream_call_duration_seconds_count', { upstream: 'rec', method: 'tools/call' }), [3]);
    assert.deepEqual(value('fastsvc_upstream_call_duration_seconds_bucket', { upstream: 'rec', method: 'tools/call', le: '+Inf' }), [3]);
    const [sum] = value('fastsvc_upstream_call_duration_seconds_sum', { upstream: 'rec', method: 'tools/call' });
    assert.ok(sum! > 0, 'the latencies were observed');

    assert.deepEqual(value('fastsvc_upstream_calls_in_flight', { upstream: 'rec' }), [0]);
    assert.deepEqual(value('fastsvc_upstream_restarts_total', { upstream: 'rec' }), [0]);
    assert.deepEqual(value('fastsvc_upstream_questions_refused_total', { upstream: 'mute' }), [0]);
  });
});
