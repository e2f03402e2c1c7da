// Sampling bridged behind the real `svc serve`: server-everything over stdio (2025-11-25) sends
// sampling/createMessage from its trigger-sampling-request tool; it reaches a 2025-11-25 client in front as a
// server→client request and a 2026-07-28 client as an input_required round (the upstream call run again with
// the answer), and the client's answer is what the upstream's tool result carries. A client that declares no
// sampling capability is never asked: the upstream gets an error and the call is an error result.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const TOKEN = secret(randomBytes(24).toString('base64url'));
const reply = (text: string) => ({ role: 'assistant' as const, content: { type: 'text' as const, text }, model: 'test-model', stopReason: 'endTurn' });

describe('upstreams: an upstream\'s sampling/createMessage reaches 2025-11-25 and 2026-07-28 clients', function () {
  this.timeout(60_000);
  let srv: Served;

  before(async () => {
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['use'] },
      profile: { scopes: ['use'] },
      routes: { public: ['/readyz'], protected: ['/mcp'] },
      upstreams: [{ name: 'everything', command: ['node', EVERYTHING, 'stdio'], env: { PATH: '${PATH}' }, expose: { prefix: 'ev.', include: ['trigger-sampling-request'], required_scopes: ['use'] } }],
    }, { env: { TOKEN } });
  });
  after(() => srv?.stop());

  it('a 2025-11-25 client is asked (a server→client request) and its answer is in the result', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: 'sample-legacy', version: '1' }, { capabilities: { sampling: {} } });
    const prompts: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      prompts.push(JSON.stringify(req.params.messages));
      return reply('legacy says hi');
    });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'ev.trigger-sampling-request', arguments: { prompt: 'wave', maxTokens: 10 } });
      assert.match(JSON.stringify(res.content), /legacy says hi/);
      assert.equal(prompts.length, 1);
      assert.match(prompts[0]!, /wave/);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('a 2026-07-28 client is asked in an input_required round and its answer is in the result', async () => {
    const client = new ModernClient({ name: 'sample-modern', version: '1' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: 'auto' } });
    const prompts: string[] = [];
    client.setRequestHandler('sampling/createMessage', async (req) => {
      prompts.push(JSON.stringify((req.params as { messages: unknown }).messages));
      return reply('modern says hi') as never;
    });
    await client.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => TOKEN } }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const res = await client.callTool({ name: 'ev.trigger-sampling-request', arguments: { prompt: 'nod', maxTokens: 10 } });
      assert.match(JSON.stringify(res.content), /modern says hi/);
      assert.equal(prompts.length, 1);
      assert.match(prompts[0]!, /nod/);
    } finally {
      await client.close();
    }
  });

  it('a client without the sampling capability is not asked: the call is an error result', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: 'sample-none', version: '1' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'ev.trigger-sampling-request', arguments: { prompt: 'no', maxTokens: 10 } });
      assert.equal(res.isError, true, JSON.stringify(res));
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });
});
