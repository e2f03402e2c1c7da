// A 2026-07-28 elicitation round end to end: the real `svc serve` on examples/conformance
// (open /mcp) and @modelcontextprotocol/client 2.4, which negotiates 2026-07-28, receives
// `input_required`, asks its own elicitation handler and retries with the answer and the
// signed requestState; a tampered requestState is refused.
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serveManifest, type Served } from '../helpers/serve.js';

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';

describe('MCP 2026-07-28 multi-round-trip input through svc serve (client 2.4)', function () {
  this.timeout(60_000);
  let srv: Served;

  before(async () => {
    srv = await serveManifest({ file: 'examples/conformance/svc.yaml' }, { args: ['--no-watch'] });
  });
  after(async () => {
    await srv?.stop();
  });

  it('completes an elicitation round: the client is asked once and the tool sees its answer', async () => {
    const asked: unknown[] = [];
    const client = new Client({ name: 'mrtr-e2e', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const r = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      assert.deepEqual(r.content, [{ type: 'text', text: 'Hello, Ada!' }]);
      assert.equal(asked.length, 1, 'one elicitation round');
    } finally {
      await client.close();
    }
  });

  it('refuses a tampered requestState with a JSON-RPC error', async () => {
    const call = async (id: number, extra: Record<string, unknown> = {}) => {
      const params = { name: 'test_input_required_result_elicitation', arguments: {}, _meta: { [META_VERSION]: '2026-07-28', [META_CAPS]: { elicitation: { form: {} } } }, ...extra };
      const res = await fetch(`${srv.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_input_required_result_elicitation' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      });
      return (await res.json()) as { result?: Record<string, any>; error?: { code: number } };
    };
    const first = await call(1);
    assert.equal(first.result?.resultType, 'input_required');
    const state = first.result?.requestState as string;
    const key = Object.keys(first.result?.inputRequests ?? {})[0]!;
    const answers = { [key]: { action: 'accept', content: { name: 'Eve' } } };
    const tampered = await call(2, { inputResponses: answers, requestState: `${state.slice(0, -2)}xx` });
    assert.equal(tampered.error?.code, -32602, JSON.stringify(tampered));
    const good = await call(3, { inputResponses: answers, requestState: state });
    assert.equal(good.result?.content?.[0]?.text, 'Hello, Eve!');
    const replayed = await call(4, { inputResponses: answers, requestState: state });
    assert.equal(replayed.error?.code, -32602, 'a requestState works once');
  });
});
