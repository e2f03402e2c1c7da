// The poll path behind the real `svc serve`: an upstream that announces no listChanged (test/helpers/
// feature-upstream.ts, a 1.x SDK low-level server) is listed again every poll_ms, so a tool it adds
// silently reaches /svc and an open 2025-11-25 session (tools/list_changed) through the policy swap, with
// one upstreams.catalog_changed line; a poll that finds nothing new changes nothing (no second line).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { getStreamWatch } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));

describe('upstreams: poll_ms for an upstream without listChanged', function () {
  this.timeout(30_000);
  let up: FeatureUpstream;
  let srv: Served;
  const names = async () => ((await (await fetch(`${srv.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();

  before(async () => {
    up = await startFeatureUpstream();
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['use'] },
      profile: { scopes: ['use'] },
      routes: { public: ['/readyz'], protected: ['/svc', '/mcp'] },
      upstreams: [{ name: 'feat', url: up.url, poll_ms: 200, expose: { prefix: 'f.', required_scopes: ['use'] } }],
    }, { env: { TOKEN } });
  });
  after(async () => {
    await srv?.stop();
    await up?.close();
  });

  it('a tool added without a notification reaches /svc and a session\'s list_changed by the next poll', async () => {
    assert.deepEqual(await names(), ['f.ask', 'f.hold', 'f.sample']);
    const stream = getStreamWatch();
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } }, fetch: stream.fetch });
    const client = new Client({ name: 'poll', version: '1' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await client.connect(transport);
    try {
      await stream.opened(); // the session's GET stream carries list_changed
      up.addTool('later');
      await waitFor(async () => ((await names()).includes('f.later') ? true : undefined), 'f.later on /svc');
      await waitFor(() => (changed > 0 ? true : undefined), 'tools/list_changed on the session');
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'f.later'));
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
    const seen = up.listed();
    await waitFor(() => (up.listed() >= seen + 3 ? true : undefined), 'three more polls');
    // They found the same listing: still exactly one catalog change (its line may still be in the pipe).
    await waitFor(() => srv.logs().find((l) => l.event === 'upstreams.catalog_changed'), 'the catalog_changed log line');
    const before = srv.logs().filter((l) => l.event === 'upstreams.catalog_changed');
    assert.equal(before.length, 1);
    assert.deepEqual((before[0]!.changes as { tools: { added: string[] } }).tools.added, ['f.later']);
  });
});
