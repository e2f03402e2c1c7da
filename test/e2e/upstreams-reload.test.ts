// Hot reload of an upstream's `expose` behind the real `svc serve` (a recording SDK 1.x upstream,
// test/helpers/recording-upstream.ts): a tool filtered out disappears and a tool whose scope was raised is
// refused — on /svc and to an open 2025-11-25 session, which gets tools/list_changed — without a restart and
// without the refused call reaching the upstream; a connection edit (the `url`) is listed in
// restart_required: [upstreams] on /readyz, and calls keep going to the upstream connected at start-up.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { secret } from '../helpers/secrets.js';
import { getStreamWatch } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const READER = secret(randomBytes(24).toString('base64url'));
const ADMIN = secret(randomBytes(24).toString('base64url'));

const manifest = (url: string, expose: Record<string, unknown>) => ({
  version: 1,
  name: 'gateway',
  auth: { tokens: [{ name: 'reader', token: '${READER}', scopes: ['rec.use'] }, { name: 'admin', token: '${ADMIN}', scopes: ['rec.use', 'rec.admin'] }] },
  profile: { scopes: ['rec.use', 'rec.admin'] },
  routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
  upstreams: [{ name: 'rec', url, expose: { prefix: 'rec.', required_scopes: ['rec.use'], ...expose } }],
});

interface Ready { restart_required: string[]; last_reload: { ok: boolean; hash: string } | null; config_hash: string }

describe('upstreams: expose edits applied on hot reload, connection edits listed in restart_required', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let other: RecordingUpstream;
  let srv: Served;
  const svc = (path: string, token: string, body?: unknown) => fetch(`${srv.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const names = async (token: string) => ((await (await svc('/svc', token)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
  const ready = async () => (await (await fetch(`${srv.url}/readyz`)).json()) as Ready;
  /** Writes the manifest and waits until a reload with a new hash has been applied. */
  const reload = async (doc: Record<string, unknown>) => {
    const before = (await ready()).config_hash;
    srv.write(doc);
    return waitFor(async () => {
      const r = await ready();
      return r.last_reload && r.config_hash !== before ? r : undefined;
    }, 'the reload', 10_000);
  };

  before(async () => {
    up = await startRecordingUpstream();
    other = await startRecordingUpstream();
    srv = await serveManifest(manifest(up.url, { exclude: ['big'] }), { env: { READER, ADMIN } });
  });

  after(async () => {
    await srv?.stop();
    await up?.close();
    await other?.close();
  });

  it('a tool filtered out and a scope raised apply at once: /svc, a 2025 session (list_changed), and the refusal never reaches the upstream', async () => {
    assert.deepEqual(await names(READER), ['rec.admin_op', 'rec.chatty', 'rec.echo', 'rec.slow']);
    const client = new Client({ name: 'up-reload', version: '1' });
    const stream = getStreamWatch();
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${READER}` } }, fetch: stream.fetch });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await client.connect(transport);
    try {
      await stream.opened(); // the session's GET stream carries list_changed
      const r = await reload(manifest(up.url, { exclude: ['big', 'chatty'], overrides: { echo: { required_scopes: ['rec.admin'] } } }));
      assert.equal(r.last_reload?.ok, true);
      assert.deepEqual(r.restart_required, [], 'expose applies live');
      assert.deepEqual(await names(READER), ['rec.admin_op', 'rec.slow']);
      assert.deepEqual(await names(ADMIN), ['rec.admin_op', 'rec.echo', 'rec.slow']);
      await waitFor(() => (changed > 0 ? true : undefined), 'tools/list_changed on the session');
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(listed, ['rec.admin_op', 'rec.slow']);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
    const denied = await svc('/svc/tools/rec.echo', READER, { text: 'not now' });
    assert.equal(denied.status, 403);
    assert.equal((await svc('/svc/tools/rec.chatty', ADMIN, {})).status, 404, 'a filtered tool is gone for everyone');
    assert.equal(up.calls.length, 0, 'neither refusal reached the upstream');
    const allowed = await svc('/svc/tools/rec.echo', ADMIN, { text: 'admin now' });
    assert.equal(allowed.status, 200);
    assert.deepEqual(up.calls, [{ name: 'echo', args: { text: 'admin now' } }]);
  });

  it('a connection edit (url) is listed in restart_required: [upstreams]; the start-up connection keeps serving', async () => {
    const r = await reload(manifest(other.url, { exclude: ['big', 'chatty'], overrides: { echo: { required_scopes: ['rec.admin'] } } }));
    assert.deepEqual(r.restart_required, ['upstreams']);
    const res = await svc('/svc/tools/rec.echo', ADMIN, { text: 'still the first' });
    assert.equal(res.status, 200);
    assert.equal(up.calls.at(-1)?.args.text, 'still the first');
    assert.equal(other.calls.length, 0);
  });
});
