// The observability pieces on their own: tracing is off until an SDK registers a
// provider (and off again after trace.disable()), spans go to the provider registered
// now even after an earlier one was used and replaced, an app without metrics or tracing does
// not time calls, label children are cached per capability (no allocation per call),
// and the start-up line says what was loaded without any secret.

import assert from 'node:assert/strict';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resolveConfig } from '../../src/core/config.js';
import { Metrics } from '../../src/observe/metrics.js';
import { Observer } from '../../src/observe/observer.js';
import { startupLine } from '../../src/observe/startup-line.js';
import { endSpan, startCallSpan, tracingOn } from '../../src/observe/tracing.js';

describe('observe', () => {
  it('tracing is on only while an SDK tracer provider is registered', () => {
    assert.equal(tracingOn(), false);
    assert.equal(Observer.NONE.timed(), false, 'no metrics, no tracing: calls are not timed');
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    try {
      assert.equal(tracingOn(), true);
      assert.equal(Observer.NONE.timed(), true);
    } finally {
      trace.disable();
    }
    assert.equal(tracingOn(), false);
  });

  it('sends spans to the provider registered now, not to one used before and replaced', () => {
    const first = new InMemorySpanExporter();
    const second = new InMemorySpanExporter();
    try {
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(first)] }));
      endSpan(startCallSpan('tools/call', 'a', 'tool', 'svc', ROOT_CONTEXT).span, 'ok');
      trace.disable();
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(second)] }));
      endSpan(startCallSpan('tools/call', 'b', 'tool', 'svc', ROOT_CONTEXT).span, 'ok');
    } finally {
      trace.disable();
    }
    assert.deepEqual(first.getFinishedSpans().map((s) => s.name), ['tools/call a']);
    assert.deepEqual(second.getFinishedSpans().map((s) => s.name), ['tools/call b']);
  });

  it('caches label children per transport, kind and capability', async () => {
    const m = new Metrics({ sessions: () => 0, tasks: () => 0 }, 'abc');
    const b = m.bind('tool', 'a.b', 'svc');
    assert.equal(m.bind('tool', 'a.b', 'svc'), b);
    assert.notEqual(m.bind('tool', 'a.b', 'mcp'), b);
    m.started();
    m.finished(b, 0.002, 'ok');
    m.started();
    m.finished(b, 0.002, 'ok');
    const text = (await m.text()).body;
    assert.match(text, /^fastsvc_calls_total\{kind="tool",capability="a\.b",transport="svc",outcome="ok"\} 2$/m);
    assert.match(text, /^fastsvc_calls_in_flight 0$/m);
    assert.match(text, /^fastsvc_config_info\{config_hash="abc"\} 1$/m);
  });

  it('the start-up line names counts, auth, audit sink, metrics route and the watched file', () => {
    const config = resolveConfig({ auth: { token: 'do-not-print-me-123' }, audit: { to: 'stderr' }, routes: { public: ['/metrics'], protected: ['/svc'] } });
    const line = startupLine({ name: 'demo', url: 'http://127.0.0.1:1', tools: 1, resources: 2, prompts: 0, config, watching: 'svc.yaml' });
    assert.equal(line, 'fastsvc: serving demo on http://127.0.0.1:1: 1 tool, 2 resources, 0 prompts; auth bearer; audit to stderr; metrics at /metrics (public); watching svc.yaml');
    assert.ok(!line.includes('do-not-print-me'));
  });
});
