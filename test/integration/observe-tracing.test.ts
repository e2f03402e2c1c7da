// OpenTelemetry traces of a call over /svc, /mcp and /ws, down to the service the http
// backend calls. Why in-process (loadManifest + serve, the pieces `svc serve` runs, minus
// the watcher): the SDK's InMemorySpanExporter lives in the test's process, and a tracer
// provider is registered exactly as an operator's two-line set-up does
// (NodeTracerProvider.register()). Each client sends its own trace id — /svc in the
// `traceparent` header, /mcp in the request's `_meta.traceparent` (MCP 2026-07-28), /ws in
// the upgrade request's header — and the tree must be: client span → SERVER span
// "tools/call NAME" (capability, transport, outcome) → INTERNAL span "backend NAME" →
// the downstream request's traceparent.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadManifest } from '../../src/manifest/index.js';
import { serve, type Served } from '../../src/server/listen.js';
import { RawWs } from '../helpers/mcp-app.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(18).toString('base64url'));
const hex = (n: number) => randomBytes(n).toString('hex');

describe('tracing: a span tree per call on /svc, /mcp and /ws', function () {
  this.timeout(30_000);
  const exporter = new InMemorySpanExporter();
  let provider: NodeTracerProvider;
  let downstream: http.Server;
  const received: (string | undefined)[] = [];
  let served: Served;
  let dir: string;

  before(async () => {
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    downstream = http.createServer((req, res) => {
      received.push(req.headers.traceparent as string | undefined);
      res.end('pong');
    });
    await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', r));
    const port = (downstream.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-trace-'));
    writeFileSync(join(dir, 'svc.yaml'), `version: 1
name: trace-test
auth: { token: "\${TRACE_TOKEN}", scopes: [ping] }
profile: { scopes: [ping] }
tools:
  - name: net.ping
    description: Calls the downstream service.
    required_scopes: [ping]
    http: { method: GET, url: "http://127.0.0.1:${port}/ping" }
`);
    const loaded = await loadManifest(join(dir, 'svc.yaml'), { ...process.env, TRACE_TOKEN: TOKEN });
    served = await serve(loaded.svc, loaded.config, { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await served?.close();
    await new Promise((r) => downstream?.close(r));
    await provider?.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    exporter.reset();
    received.length = 0;
  });

  /** The call's spans, checked against the client's trace id and span id; returns the server span. */
  async function assertTree(traceId: string, parentId: string, transport: string): Promise<ReadableSpan> {
    const spans = await waitFor(() => {
      const s = exporter.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
      return s.length >= 2 ? s : undefined;
    }, 'two finished spans');
    const server = spans.find((s) => s.name === 'tools/call net.ping')!;
    const backend = spans.find((s) => s.name === 'backend net.ping')!;
    assert.ok(server && backend, `spans: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(server.parentSpanContext?.spanId, parentId, 'the server span is a child of the client span');
    assert.equal(backend.parentSpanContext?.spanId, server.spanContext().spanId, 'the backend span is a child of the server span');
    assert.deepEqual(server.attributes, { 'fastsvc.capability': 'net.ping', 'fastsvc.kind': 'tool', 'fastsvc.transport': transport, 'mcp.method.name': 'tools/call', 'fastsvc.outcome': 'ok' });
    assert.equal(backend.attributes['fastsvc.outcome'], 'ok');
    assert.equal(received.length, 1);
    assert.equal(received[0], `00-${traceId}-${backend.spanContext().spanId}-01`, 'the downstream service got the backend span as its parent');
    return server;
  }

  it('/svc: parent from the traceparent header', async () => {
    const [t, s] = [hex(16), hex(8)];
    const res = await fetch(`${served.url}/svc/tools/net.ping`, {
      method: 'POST', body: '{}',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', traceparent: `00-${t}-${s}-01` },
    });
    assert.equal(res.status, 200);
    await assertTree(t, s, 'svc');
  });

  it('/mcp: parent from the request _meta.traceparent (SDK client)', async () => {
    const [t, s] = [hex(16), hex(8)];
    const client = new Client({ name: 'trace-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    try {
      const r = await client.callTool({ name: 'net.ping', arguments: {}, _meta: { traceparent: `00-${t}-${s}-01` } });
      assert.deepEqual(r.content, [{ type: 'text', text: 'pong' }]);
    } finally {
      await client.close();
    }
    await assertTree(t, s, 'mcp');
  });

  it('/ws: parent from the upgrade request traceparent header', async () => {
    const [t, s] = [hex(16), hex(8)];
    const ws = RawWs.open(served.url, TOKEN, { headers: { traceparent: `00-${t}-${s}-01` } });
    try {
      await ws.initialize();
      const r = await ws.call('tools/call', { name: 'net.ping', arguments: {} });
      assert.deepEqual((r.result as { content: unknown }).content, [{ type: 'text', text: 'pong' }]);
    } finally {
      ws.socket.close();
    }
    await assertTree(t, s, 'ws');
  });

  it('a refused call ends its span with the error code as outcome and status', async () => {
    const [t, s] = [hex(16), hex(8)];
    const res = await fetch(`${served.url}/svc/tools/net.ping`, {
      method: 'POST', body: '[]',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', traceparent: `00-${t}-${s}-01` },
    });
    assert.equal(res.status, 400);
    const [span] = await waitFor(() => {
      const x = exporter.getFinishedSpans().filter((y) => y.spanContext().traceId === t);
      return x.length ? x : undefined;
    }, 'the span');
    assert.equal(span!.attributes['fastsvc.outcome'], 'INVALID_INPUT');
    assert.equal(span!.status.code, 2);
    assert.equal(received.length, 0, 'no backend ran');
  });
});
