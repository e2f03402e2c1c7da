// Hot reload, what a reload does: an edit to svc.yaml under a running server changes
// who may call what with no restart; a broken edit keeps the last good policy and shows
// the error; fields only a restart can apply are reported, the rest is applied; each
// reload logs one line with the hashes, the changes and who gains or loses access; MCP sessions
// hear list_changed.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { callSvc, getJson, manifest, plainLayout, startServer, TOKENS, waitFor, wsSession, type Layout, type TestServer } from '../helpers/reload.js';
import { getStreamWatch } from '../helpers/sse.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('hot reload: policy', () => {
  let layout: Layout;
  let s: TestServer;

  beforeEach(async () => {
    layout = plainLayout(manifest({ policy: 'A' }));
    s = await startServer(layout.file);
  });
  afterEach(async () => {
    await s.close();
    rmSync(layout.dir, { recursive: true, force: true });
  });

  it('tightening a tool\'s scopes refuses a caller without the new scope (403), loosening allows it again, with no restart', async () => {
    assert.equal((await callSvc(s.url, TOKENS.reader)).status, 200);
    layout.write(manifest({ policy: 'B' }));
    const denied = await waitFor(async () => {
      const d = await callSvc(s.url, TOKENS.reader);
      return d.status === 403 ? d : undefined;
    }, 'the reader to be refused');
    assert.equal(denied.code, 'INSUFFICIENT_SCOPE');
    assert.deepEqual(denied.required, ['p.write']);
    assert.deepEqual(await callSvc(s.url, TOKENS.writer), { status: 200, ok: true, output: 'B', required: undefined, code: undefined });

    layout.write(manifest({ policy: 'A' }));
    const allowed = await waitFor(async () => {
      const d = await callSvc(s.url, TOKENS.reader);
      return d.status === 200 ? d : undefined;
    }, 'the reader to be allowed again');
    assert.equal(allowed.output, 'A');
    assert.equal(s.served.server.listening, true);
  });

  it('adds and removes a tool: 404 ↔ 200, and GET /svc lists it only while it exists', async () => {
    const listed = async () => ((await getJson(`${s.url}/svc`, TOKENS.reader)).body.tools as { name: string }[]).map((t) => t.name);
    assert.equal((await callSvc(s.url, TOKENS.reader, 'extra.hello')).status, 404);
    assert.ok(!(await listed()).includes('extra.hello'));

    layout.write(manifest({ policy: 'A', tools: [{ name: 'extra.hello', scopes: ['p.read'], output: 'hello' }] }));
    const added = await waitFor(async () => {
      const d = await callSvc(s.url, TOKENS.reader, 'extra.hello');
      return d.status === 200 ? d : undefined;
    }, 'extra.hello to appear');
    assert.equal(added.output, 'hello');
    assert.ok((await listed()).includes('extra.hello'));

    layout.write(manifest({ policy: 'A' }));
    await waitFor(async () => ((await callSvc(s.url, TOKENS.reader, 'extra.hello')).status === 404 ? true : undefined), 'extra.hello to go');
    assert.ok(!(await listed()).includes('extra.hello'));
  });

  const broken: [string, string, (good: string) => string][] = [
    ['YAML syntax', 'YAML_SYNTAX', (good) => good.replace('tools:', 'tools:\n  - name: [unclosed')],
    ['a schema violation', 'SCHEMA_VIOLATION', (good) => good.replace('version: 1', 'version: 1\nunknown_field: true')],
    ['an undeclared scope', 'SCOPE_UNDECLARED', () => manifest({ policy: 'A', tools: [{ name: 'extra.nope', scopes: ['p.undeclared'] }] })],
  ];
  for (const [what, code, breakIt] of broken) {
    it(`a broken edit (${what}) keeps the last good policy and shows FILE:LINE:COL: ${code} in /metadata; /readyz stays 200`, async () => {
      const good = readFileSync(layout.file, 'utf8');
      const hash = (await getJson(`${s.url}/metadata`)).body.config_hash;
      assert.equal(hash, sha256(good));
      const bad = breakIt(good);
      layout.write(bad);
      const meta = await waitFor(async () => {
        const m = (await getJson(`${s.url}/metadata`)).body;
        return m.last_reload?.ok === false ? m : undefined;
      }, 'the failed reload to show');
      assert.equal(meta.config_hash, hash, 'the active config is still the last good one');
      assert.equal(meta.last_reload.hash, sha256(bad));
      const escaped = layout.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.match(meta.last_reload.error, new RegExp(`^${escaped}:\\d+:\\d+: ${code}: `, 'm'));
      const ready = await getJson(`${s.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(ready.body.config_hash, hash);
      assert.equal(ready.body.last_reload.ok, false);
      assert.deepEqual(await callSvc(s.url, TOKENS.reader), { status: 200, ok: true, output: 'A', required: undefined, code: undefined });
      assert.ok(s.logs.some((l) => l.event === 'config.reload_failed' && typeof l.problem === 'string' && l.problem.includes(`: ${code}: `)));

      // Fixing the file applies it and clears the error.
      layout.write(manifest({ policy: 'B' }));
      await waitFor(async () => ((await callSvc(s.url, TOKENS.writer)).output === 'B' ? true : undefined), 'the fixed edit to apply');
      assert.equal((await getJson(`${s.url}/metadata`)).body.last_reload.ok, true);
    });
  }

  it('reverting a broken edit to the running bytes clears the error without rebuilding', async () => {
    const good = readFileSync(layout.file, 'utf8');
    layout.write(good.replace('tools:', 'tools: [unclosed'));
    await waitFor(async () => ((await getJson(`${s.url}/metadata`)).body.last_reload?.ok === false ? true : undefined), 'the failed reload');
    layout.write(good);
    const meta = await waitFor(async () => {
      const m = (await getJson(`${s.url}/metadata`)).body;
      return m.last_reload?.ok === true ? m : undefined;
    }, 'the recovery');
    assert.equal(meta.last_reload.hash, sha256(good));
    assert.equal(meta.config_hash, sha256(good));
    assert.equal(s.logs.filter((l) => l.event === 'config.reloaded').length, 0, 'nothing was swapped');
    assert.equal(s.logs.filter((l) => l.event === 'config.reload_recovered').length, 1);
  });

  it('restart-required fields (server.port) are reported and held while the rest of the edit applies; reverting clears them', async () => {
    const port = new URL(s.url).port;
    layout.write(manifest({ policy: 'B', port: 1 }));
    await waitFor(async () => ((await callSvc(s.url, TOKENS.writer)).output === 'B' ? true : undefined), 'the live part (tool scopes) to apply');
    const meta = (await getJson(`${s.url}/metadata`)).body;
    assert.deepEqual(meta.restart_required, ['server.port']);
    assert.equal(meta.last_reload.ok, true);
    assert.equal((await getJson(`${s.url}/readyz`)).body.restart_required[0], 'server.port');
    assert.equal(new URL(s.url).port, port);
    assert.equal(s.served.server.listening, true);

    layout.write(manifest({ policy: 'A', port: 0 }));
    await waitFor(async () => ((await callSvc(s.url, TOKENS.reader)).output === 'A' ? true : undefined), 'the revert to apply');
    assert.deepEqual((await getJson(`${s.url}/metadata`)).body.restart_required, []);
  });

  it('token scopes and profile are applied live: a token given p.write is allowed under policy B; /metadata shows the new scopes', async () => {
    layout.write(manifest({ policy: 'B' }));
    await waitFor(async () => ((await callSvc(s.url, TOKENS.reader)).status === 403 ? true : undefined), 'policy B');
    layout.write(manifest({ policy: 'B', readerScopes: ['p.read', 'p.write'], scopes: ['p.read', 'p.write', 'p.admin', 'p.extra'] }));
    const d = await waitFor(async () => {
      const r = await callSvc(s.url, TOKENS.reader);
      return r.status === 200 ? r : undefined;
    }, 'the reader token to gain p.write');
    assert.equal(d.output, 'B');
    const meta = (await getJson(`${s.url}/metadata`)).body;
    assert.deepEqual(meta.restart_required, []);
    assert.deepEqual(meta.profile.scopes, ['p.read', 'p.write', 'p.admin', 'p.extra'], 'profile applied live');
  });

  it('logs ONE structured line per reload: hashes before/after, capabilities changed, who gains and loses access (svc diff\'s verdict)', async () => {
    const before = sha256(readFileSync(layout.file, 'utf8'));
    const next = manifest({ policy: 'B', tools: [{ name: 'extra.open', output: 'x' }] });
    layout.write(next);
    await waitFor(() => (s.logs.some((l) => l.event === 'config.reloaded') ? true : undefined), 'the reload line');
    const lines = s.logs.filter((l) => l.event === 'config.reloaded');
    assert.equal(lines.length, 1);
    const line = lines[0] as Record<string, any>;
    assert.equal(line.hash_before, before);
    assert.equal(line.hash_after, sha256(next));
    assert.deepEqual(line.changes.tools, { added: ['extra.open'], removed: [], changed: ['probe.version'] });
    const pairs = (list: { capability: string; key: string }[]) => list.map((c) => `${c.capability} ${c.key}`);
    assert.equal(line.access.widened, true);
    assert.deepEqual(pairs(line.access.widenings), ['tool:extra.open any', 'tool:extra.open token:reader', 'tool:extra.open token:writer', 'tool:probe.version any', 'tool:probe.version token:writer']);
    assert.equal(line.access.widenings.at(-1).why, 'requires p.read → p.write');
    assert.deepEqual(pairs(line.access.narrowings), ['tool:probe.version any', 'tool:probe.version token:reader']);
    assert.match(line.msg, /; access widened/);
    assert.deepEqual(line.restart_required, []);
    assert.ok(!JSON.stringify(s.logs).includes(TOKENS.reader), 'no token value in the logs');
  });

  it('open MCP sessions on /mcp and /ws receive notifications/tools/list_changed when their list changes', async () => {
    const client = new Client({ name: 'reload-test', version: '1' });
    let heard = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);
    const stream = getStreamWatch();
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS.reader}` } }, fetch: stream.fetch }));
    const ws = await wsSession(s.url, TOKENS.reader);
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['probe.version']);
      await stream.opened(); // the session's GET stream carries list_changed
      layout.write(manifest({ policy: 'A', tools: [{ name: 'extra.new', scopes: ['p.read'] }] }));
      await waitFor(async () => ((await callSvc(s.url, TOKENS.reader, 'extra.new')).status === 200 ? true : undefined), 'extra.new');
      await waitFor(() => (heard > 0 ? true : undefined), 'list_changed on /mcp');
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['extra.new', 'probe.version']);
      await waitFor(() => (ws.notifications.includes('notifications/tools/list_changed') ? true : undefined), 'list_changed on /ws');
    } finally {
      ws.close();
      await client.close();
    }
  });
});
