// A 2026-07-28 upstream's list changes and resource updates reach the gateway on the subscriptions/listen stream
// it keeps open, behind the real `svc serve`: the upstream is a second fastsvc ("inner", which itself imports
// test/helpers/feature-upstream.ts's subscribable feat://note), the gateway polls nothing (poll_ms: 0). A tool
// added to inner's manifest reaches the gateway's /svc and an open 2025-11-25 session (tools/list_changed); a
// gateway caller's subscription to feat://note becomes part of the gateway's listen filter — inner then
// watches it, so the feature server sees one resources/subscribe — and the feature server's update reaches a
// 2025 session and a 2026 listen on the gateway; the last unsubscribe takes it out of the filter (the feature
// server sees the resources/unsubscribe). When inner restarts, the gateway opens its listen stream again (with
// the URIs still watched) and reads inner's lists again, and changes after that are heard as before.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { NOTE, startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { getStreamWatch } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const GW_TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

const tool = (name: string) => ({ name, description: `Says ${name}.`, input_schema: { type: 'object', properties: {} }, template: name });

describe('upstreams: a 2026-07-28 upstream heard on its subscriptions/listen stream (list changes, resource updates, a restart)', function () {
  this.timeout(90_000);
  let feat: FeatureUpstream;
  let inner: Served;
  let gw: Served;
  const innerManifest = (tools: string[]) => ({
    version: 1,
    name: 'inner',
    auth: { token: '${UP_TOKEN}' },
    routes: { public: ['/healthz', '/readyz'], protected: ['/mcp'] },
    tools: tools.map(tool),
    upstreams: [{ name: 'feat', url: feat.url, poll_ms: 0, expose: { prefix: 'f.', include: ['hold', NOTE] } }],
  });
  const names = async () => ((await (await fetch(`${gw.url}/svc`, { headers: { authorization: `Bearer ${GW_TOKEN}` } })).json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
  const legacy = async () => {
    const stream = getStreamWatch();
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${GW_TOKEN}` } }, fetch: stream.fetch });
    const client = new Client({ name: 'listen-legacy', version: '1' });
    const seen = { changed: 0, updated: [] as string[] };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen.changed++);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.updated.push(n.params.uri));
    await client.connect(transport);
    await stream.opened(); // the session's GET stream carries list_changed and resource updates
    return { client, seen, close: async () => { await transport.terminateSession().catch(() => undefined); await client.close(); } };
  };

  before(async () => {
    feat = await startFeatureUpstream();
    inner = await serveManifest(innerManifest(['hello']), { env: { UP_TOKEN } });
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${GW_TOKEN}' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
      upstreams: [{ name: 'inner', url: `${inner.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, poll_ms: 0, restart: { min_ms: 100, max_ms: 1000 }, expose: { prefix: 'in.' } }],
    }, { env: { GW_TOKEN, UP_TOKEN } });
  });

  after(async () => {
    await gw?.stop();
    await inner?.stop();
    await feat?.close();
  });

  it('a tool added upstream reaches /svc and a 2025 session (tools/list_changed) with no poll', async () => {
    const r = (await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: Record<string, { protocol_version: string }> };
    assert.equal(r.upstreams.inner?.protocol_version, '2026-07-28');
    assert.deepEqual(await names(), ['in.f.hold', 'in.hello']);
    const session = await legacy();
    try {
      inner.write(innerManifest(['hello', 'later']));
      await waitFor(async () => ((await names()).includes('in.later') ? true : undefined), 'in.later on the gateway\'s /svc', 15_000);
      await waitFor(() => (session.seen.changed > 0 ? true : undefined), 'tools/list_changed on the gateway session');
      assert.ok((await session.client.listTools()).tools.some((t) => t.name === 'in.later'));
    } finally {
      await session.close();
    }
    // The log line follows the swap the calls above observed; it may still be in the pipe.
    await waitFor(() => (gw.logs().some((l) => l.event === 'upstreams.catalog_changed') ? true : undefined), 'the catalog_changed log line');
    const changes = gw.logs().filter((l) => l.event === 'upstreams.catalog_changed');
    assert.equal(changes.length, 1);
    assert.deepEqual((changes[0]!.changes as { tools: { added: string[] } }).tools.added, ['in.later']);
  });

  it('a subscription to an imported resource rides the listen filter: updates reach a 2025 session and a 2026 listen; the last unsubscribe leaves it', async () => {
    const session = await legacy();
    const modern = new ModernClient({ name: 'listen-modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const modernUpdates: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => void modernUpdates.push(n.params.uri));
    await modern.connect(new ModernTransport(new URL(`${gw.url}/mcp`), { authProvider: { token: async () => GW_TOKEN } }));
    try {
      await session.client.subscribeResource({ uri: NOTE });
      const listening = await modern.listen({ resourceSubscriptions: [NOTE] });
      await waitFor(() => (feat.subscribed.length ? true : undefined), 'inner subscribing feat://note at the feature server');
      assert.deepEqual(feat.subscribed, [NOTE]);

      await feat.update();
      await waitFor(() => (session.seen.updated.length && modernUpdates.length ? true : undefined), 'the update at both gateway callers');
      assert.deepEqual(session.seen.updated, [NOTE]);
      assert.deepEqual(modernUpdates, [NOTE]);
      assert.deepEqual((await session.client.readResource({ uri: NOTE })).contents, [{ uri: NOTE, mimeType: 'text/plain', text: 'note v2' }]);

      await session.client.unsubscribeResource({ uri: NOTE });
      await modern.callTool({ name: 'in.hello', arguments: {} }); // the gateway still watches it for the 2026 listen
      assert.deepEqual(feat.unsubscribed, []);
      await listening.close();
      await waitFor(() => (feat.unsubscribed.length ? true : undefined), 'the gateway\'s filter without feat://note (inner unsubscribes it)');
      assert.deepEqual(feat.unsubscribed, [NOTE]);
    } finally {
      await session.close();
      await modern.close();
    }
    assert.equal(gw.logs().filter((l) => l.event === 'upstream.subscribe_failed').length, 0);
  });

  it('after inner restarts, the listen stream is opened again (with the URIs still watched) and the lists read again', async () => {
    const session = await legacy();
    try {
      await session.client.subscribeResource({ uri: NOTE });
      await waitFor(() => (feat.subscribed.length === 2 ? true : undefined), 'the second subscription at the feature server');
      const port = Number(new URL(inner.url).port);
      const reopened = () => gw.logs().filter((l) => l.event === 'upstream.listen_reopened').length;
      const before = reopened();
      inner = await inner.restart({ port });
      // Whatever inner lists now is read once the stream is open again; an edit after that is heard on it.
      await waitFor(() => (reopened() > before ? true : undefined), 'the listen stream opened again', 15_000);
      // At least once more: the stream may be opened twice over (its end seen on the old connection and on a new one).
      await waitFor(() => (feat.subscribed.length >= 3 ? true : undefined), 'feat://note watched again through the new stream')
        .catch((e: Error) => assert.fail(`${e.message}; the feature server saw ${JSON.stringify({ subscribed: feat.subscribed, unsubscribed: feat.unsubscribed })}; the gateway logged ${JSON.stringify(gw.logs().filter((l) => String(l.event).startsWith('upstream')).map((l) => l.event))}`));
      inner.write(innerManifest(['hello', 'later', 'after']));
      await waitFor(async () => ((await names()).includes('in.after') ? true : undefined), 'in.after on the gateway\'s /svc', 15_000);
      await feat.update();
      await waitFor(() => (session.seen.updated.length ? true : undefined), 'an update after the restart');
      assert.deepEqual(session.seen.updated, [NOTE]);
    } finally {
      await session.close();
    }
    const r = (await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: Record<string, { state: string; restarts: number }> };
    assert.equal(r.upstreams.inner?.state, 'ready');
  });
});
