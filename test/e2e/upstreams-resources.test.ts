// An upstream's resources and completions behind the real `svc serve` (test/helpers/feature-upstream.ts, a
// 1.x SDK HTTP server with resources.subscribe and completions). resources/subscribe on an imported resource
// subscribes it upstream once however many callers subscribe; the upstream's notifications/resources/updated
// reaches each subscribed 2025-11-25 session and a 2026-07-28 subscriptions/listen stream — but not a
// subscriber whose token no longer reads it (its scopes changed by a reload); the last unsubscribe (or the
// session's end) unsubscribes upstream. completion/complete for an imported prompt's argument and a resource
// template's variable is answered by the upstream (asked under its own prompt name); a caller who may not see
// the prompt gets no values and the upstream is not asked.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { NOTE, NOTES, startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { getStreamWatch } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const ANN = secret(randomBytes(24).toString('base64url'));
const BEN = secret(randomBytes(24).toString('base64url'));
const NOBODY = secret(randomBytes(24).toString('base64url'));

const manifest = (benScopes: string[]) => ({
  version: 1,
  name: 'gateway',
  auth: { tokens: [{ name: 'ann', token: '${ANN}', scopes: ['use'] }, { name: 'ben', token: '${BEN}', scopes: benScopes }, { name: 'nobody', token: '${NOBODY}', scopes: [] }] },
  profile: { scopes: ['use'] },
  routes: { public: ['/readyz'], protected: ['/svc', '/mcp'] },
  upstreams: [{ name: 'feat', url: 'URL', expose: { prefix: 'f.', required_scopes: ['use'] } }],
});

describe('upstreams: resource subscriptions and completions proxied to the upstream', function () {
  this.timeout(60_000);
  let up: FeatureUpstream;
  let srv: Served;
  const doc = (benScopes: string[]) => {
    const m = manifest(benScopes);
    (m.upstreams[0] as { url: string }).url = up.url;
    return m;
  };
  const legacy = async (token: string) => {
    const stream = getStreamWatch();
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: stream.fetch });
    const client = new Client({ name: 'res', version: '1' });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.connect(transport);
    await stream.opened(); // the session's GET stream carries resource updates
    return { client, updated, close: async () => { await transport.terminateSession().catch(() => undefined); await client.close(); } };
  };

  before(async () => {
    up = await startFeatureUpstream();
    srv = await serveManifest(doc(['use']), { env: { ANN, BEN, NOBODY } });
  });
  after(async () => {
    await srv?.stop();
    await up?.close();
  });

  it('subscriptions: one upstream subscription for two sessions and a 2026 listen; updates reach those who may still read; the last unsubscribe ends it', async () => {
    const ann = await legacy(ANN);
    const ben = await legacy(BEN);
    const modern = new ModernClient({ name: 'res-modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const modernUpdates: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => void modernUpdates.push(n.params.uri));
    await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => ANN } }));
    try {
      await ann.client.subscribeResource({ uri: NOTE });
      await ben.client.subscribeResource({ uri: NOTE });
      const listening = await modern.listen({ resourceSubscriptions: [NOTE] });
      await waitFor(() => (up.subscribed.length ? true : undefined), 'the upstream subscription');
      assert.deepEqual(up.subscribed, [NOTE], 'subscribed upstream once');

      await up.update();
      await waitFor(() => (ann.updated.length && ben.updated.length && modernUpdates.length ? true : undefined), 'the update on every stream');
      assert.deepEqual([ann.updated, ben.updated, modernUpdates], [[NOTE], [NOTE], [NOTE]]);
      assert.deepEqual((await ann.client.readResource({ uri: NOTE })).contents, [{ uri: NOTE, mimeType: 'text/plain', text: 'note v2' }]);

      // Ben's token loses the scope: his session's principal is no longer current, so the next update skips him.
      const hash = ((await (await fetch(`${srv.url}/readyz`)).json()) as { config_hash: string }).config_hash;
      srv.write(doc([]));
      await waitFor(async () => (((await (await fetch(`${srv.url}/readyz`)).json()) as { config_hash: string }).config_hash !== hash ? true : undefined), 'the reload');
      await up.update();
      await waitFor(() => (ann.updated.length === 2 && modernUpdates.length === 2 ? true : undefined), 'the second update');
      await ben.client.ping(); // anything sent with the first ones has arrived by now
      assert.deepEqual(ben.updated, [NOTE], 'ben no longer reads it');

      await ann.client.unsubscribeResource({ uri: NOTE });
      await listening.close();
      assert.deepEqual(up.unsubscribed, [], 'ben is still subscribed');
    } finally {
      await ann.close();
      await ben.close();
      await modern.close();
    }
    await waitFor(() => (up.unsubscribed.length ? true : undefined), 'the upstream unsubscribe');
    assert.deepEqual(up.unsubscribed, [NOTE]);
  });

  it('completion/complete for an imported prompt and a resource template is the upstream\'s; a caller who may not see it gets nothing', async () => {
    const ann = await legacy(ANN);
    const nobody = await legacy(NOBODY);
    try {
      const langs = await ann.client.complete({ ref: { type: 'ref/prompt', name: 'f.greet' }, argument: { name: 'lang', value: 'e' } });
      assert.deepEqual(langs.completion.values, ['en', 'eo', 'es']);
      const ids = await ann.client.complete({ ref: { type: 'ref/resource', uri: NOTES }, argument: { name: 'id', value: '1' } });
      assert.deepEqual(ids.completion.values, ['1', '10']);
      assert.deepEqual(up.completions, [
        { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'lang', value: 'e' } },
        { ref: { type: 'ref/resource', uri: NOTES }, argument: { name: 'id', value: '1' } },
      ]);
      const none = await nobody.client.complete({ ref: { type: 'ref/prompt', name: 'f.greet' }, argument: { name: 'lang', value: 'e' } });
      assert.deepEqual(none.completion.values, []);
      assert.equal(up.completions.length, 2, 'the upstream was not asked for the caller who may not see the prompt');
    } finally {
      await ann.close();
      await nobody.close();
    }
  });
});
