// The input_required fixtures of examples/conformance served by the real `svc serve` to a 2025-era
// MCP SDK client: the same module handlers that answer input_required rounds in 2026-07-28 ask
// here through server→client requests (several at once from a Promise.all, and from a prompt).

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';

describe('input_required fixtures through 2025 server→client requests (svc serve)', () => {
  let server: Served;
  let client: Client;
  const asked: string[] = [];
  before(async () => {
    server = await serveManifest({ file: 'examples/conformance/svc.yaml' });
    client = new Client({ name: 'rounds-2025', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (r) => {
      asked.push(r.params.message);
      return r.params.message.startsWith('What context') ? { action: 'accept', content: { context: 'a demo' } } : { action: 'accept', content: { name: 'Ada', color: 'teal' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'Hello' }, model: 'test', stopReason: 'endTurn' }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('answers a tool that asks three things at once', async () => {
    const r = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Hello Ada (1 roots)' }]);
  });

  it('answers a tool that asks twice in sequence', async () => {
    asked.length = 0;
    const r = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
    assert.deepEqual(asked, ['What is your name?', 'What is your favourite color?']);
    assert.deepEqual(r.content, [{ type: 'text', text: 'Ada likes teal' }]);
  });

  it('answers a module prompt that elicits', async () => {
    const p = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    assert.deepEqual(p.messages, [{ role: 'user', content: { type: 'text', text: 'Context: a demo' } }]);
  });
});
