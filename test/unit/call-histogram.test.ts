// The hot-path latency histogram and counters write exactly what prom-client's Histogram and Counter write for the
// same observations (so dashboards and alerts see no change), and a capability called on
// two transports is one series.

import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { CallHistogram } from '../../src/observe/call-histogram.js';
import { CounterFamily } from '../../src/observe/counter-family.js';
import { Metrics } from '../../src/observe/metrics.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const VALUES = [0.0001, 0.0005, 0.0007, 0.003, 0.003, 0.2, 4, 11, 0];

describe('CallHistogram', () => {
  it('exposes the same text as prom-client Histogram for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const h = new CallHistogram('x_seconds', 'Latency.', BUCKETS);
    ours.registerMetric(h as never);
    const ph = new Histogram({ name: 'x_seconds', help: 'Latency.', labelNames: ['kind', 'capability'], buckets: BUCKETS, registers: [theirs] });
    const a = h.series({ kind: 'tool', capability: 'a.b' });
    const b = h.series({ kind: 'prompt', capability: 'we"ird\\' });
    for (const v of VALUES) {
      a.observe(v);
      ph.labels('tool', 'a.b').observe(v);
    }
    b.observe(0.02);
    ph.labels('prompt', 'we"ird\\').observe(0.02);
    assert.equal(await ours.metrics(), await theirs.metrics());
    h.reset();
    ph.reset();
    assert.match(await ours.metrics(), /^x_seconds_count\{kind="tool",capability="a\.b"\} 0$/m);
  });

  it('CounterFamily exposes the same text as prom-client Counter for the same counts', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const c = new CounterFamily('x_total', 'Things.');
    ours.registerMetric(c as never);
    const pc = new Counter({ name: 'x_total', help: 'Things.', labelNames: ['kind', 'outcome'], registers: [theirs] });
    const ok = c.series({ kind: 'tool', outcome: 'ok' });
    const odd = c.series({ kind: 'we"ird\\', outcome: 'DENIED' });
    ok.n += 3;
    odd.n++;
    pc.labels('tool', 'ok').inc(3);
    pc.labels('we"ird\\', 'DENIED').inc();
    assert.equal(await ours.metrics(), await theirs.metrics());
    assert.match(await ours.metrics(), /^x_total\{kind="tool",outcome="ok"\} 3$/m);
  });

  it('one latency series per capability across transports', async () => {
    const m = new Metrics({ sessions: () => 0, tasks: () => 0 }, undefined);
    for (const t of ['svc', 'mcp']) {
      m.started();
      m.finished(m.bind('tool', 'a.b', t), 0.003, 'ok');
    }
    const text = (await m.text()).body;
    assert.deepEqual(text.match(/^fastsvc_call_duration_seconds_count.*$/gm), ['fastsvc_call_duration_seconds_count{kind="tool",capability="a.b"} 2']);
    assert.match(text, /^fastsvc_call_duration_seconds_bucket\{le="0\.005",kind="tool",capability="a\.b"\} 2$/m);
  });
});
