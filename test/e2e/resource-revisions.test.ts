// A reload that changes only what a resource's contents are made from (its `text` here) tells that
// resource's subscribers — a 2025-11-25 session (SDK 1.x resources/subscribe) and a 2026-07-28
// subscriptions/listen stream (SDK 2.x) — with notifications/resources/updated, through the real `svc serve`;
// the other subscribed resource, unchanged, is not named: its own change, made next, is the anchor that
// shows nothing else arrived in between. The list is unchanged throughout (no resources/list_changed needed).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const A = 'notes://a';
const B = 'notes://b';

const manifest = (a: string, b: string) => ({
  version: 1,
  name: 'revisions',
  auth: { token: '${SVC_TOKEN}' },
  resources: [{ name: 'a', uri: A, text: a }, { name: 'b', uri: B, text: b }],
});

describe('a reload that changes only a resource\'s text tells its subscribers (svc serve, both MCP revisions)', function () {
  this.timeout(60_000);
  let srv: Served;
  before(async () => {
    srv = await serveManifest(manifest('a1', 'b1'), { env: { SVC_TOKEN: TOKEN } });
  });
  after(() => srv?.stop());

  it('resources/updated names exactly the resource whose text changed, on a 2025 session and a 2026 listen stream', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const legacy = new Client({ name: 'revisions-legacy', version: '1' });
    const legacyUpdates: string[] = [];
    legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void legacyUpdates.push(n.params.uri));
    await legacy.connect(transport);
    const modern = new ModernClient({ name: 'revisions-modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const modernUpdates: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => void modernUpdates.push(n.params.uri));
    await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => TOKEN } }));
    try {
      await legacy.listTools(); // lets the session's GET stream open
      await legacy.subscribeResource({ uri: A });
      await legacy.subscribeResource({ uri: B });
      const listening = await modern.listen({ resourceSubscriptions: [A, B] });

      srv.write(manifest('a2', 'b1'));
      await waitFor(() => (legacyUpdates.length >= 1 && modernUpdates.length >= 1 ? true : undefined), 'the update of a', 30_000);
      srv.write(manifest('a2', 'b2'));
      await waitFor(() => (legacyUpdates.length >= 2 && modernUpdates.length >= 2 ? true : undefined), 'the update of b', 30_000);
      assert.deepEqual([legacyUpdates, modernUpdates], [[A, B], [A, B]], 'each change named its own resource only');
      assert.deepEqual((await legacy.readResource({ uri: A })).contents.map((c) => ('text' in c ? c.text : '')), ['a2']);
      await listening.close();
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await legacy.close();
      await modern.close();
    }
  });
});
