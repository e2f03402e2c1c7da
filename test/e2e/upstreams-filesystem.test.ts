// @modelcontextprotocol/server-filesystem over stdio as an upstream of the real `svc serve` (started under the tap,
// which records every message it reads): on /svc, /mcp (both eras) and /ws a caller lists its read tools and reads a
// file in its root through fastsvc, while the write tools `expose.exclude` names are neither listed nor callable and
// never reach it (the file is not written). Roots: the server takes its allowed folders from the client's roots when
// the client declares the roots capability and answers with some, and from its command line otherwise. fastsvc
// declares roots (it relays a caller's roots/list to the caller whose call asked), but has none of its own: the
// server asks right after initialize, when no call is in flight, and gets an empty list, so the command line's
// folder is still what it allows (a path outside is refused by the server itself).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveManifest, type Served } from '../helpers/serve.js';
import { callTool, FRONTS, listTools, svcCall } from '../helpers/gateway-front.js';
import { filesystemStdio, type StdioUpstream } from '../helpers/upstreams.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const WRITES = ['create_directory', 'edit_file', 'move_file', 'write_file'];
const READS = ['directory_tree', 'get_file_info', 'list_allowed_directories', 'list_directory', 'list_directory_with_sizes', 'read_file', 'read_media_file', 'read_multiple_files', 'read_text_file', 'search_files'];

const text = (result: Record<string, unknown>) => (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');

describe('upstreams: server-filesystem over stdio behind svc serve (reads in its root, writes excluded, no roots of fastsvc\'s own)', function () {
  this.timeout(60_000);
  let files: StdioUpstream & { root: string };
  let srv: Served;
  /** What the server read on stdin: fastsvc's messages. */
  const sent = () => files.recorded().flatMap((r) => (r.kind === 'message' && r.message ? [r.message] : []));

  before(async () => {
    files = filesystemStdio({ 'notes/hello.txt': 'hello from the root' });
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['files.read'] },
      profile: { scopes: ['files.read'] },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp', '/ws'] },
      upstreams: [{ name: 'files', command: files.command, env: files.env, expose: { prefix: 'fs.', exclude: WRITES, required_scopes: ['files.read'] } }],
    }, { env: { TOKEN } });
  });

  after(async () => {
    await srv?.stop();
    await files?.stop();
  });

  for (const front of FRONTS) {
    it(`${front}: lists the read tools only, reads a file in the root, and cannot call write_file (which never reaches the server)`, async () => {
      assert.deepEqual(await listTools(front, srv.url, TOKEN), READS.map((n) => `fs.${n}`));
      const read = await callTool(front, srv.url, TOKEN, 'fs.read_text_file', { path: join(files.root, 'notes', 'hello.txt') });
      assert.ok('result' in read, JSON.stringify(read));
      assert.equal(text(read.result), 'hello from the root');
      const target = join(files.root, `written-over-${front}.txt`);
      assert.deepEqual(await callTool(front, srv.url, TOKEN, 'fs.write_file', { path: target, content: 'no' }), { refused: 'NOT_FOUND' });
      assert.equal(existsSync(target), false);
      const names = sent().flatMap((m) => (m.method === 'tools/call' ? [(m.params as { name: string }).name] : []));
      assert.ok(names.length > 0 && names.every((n) => n === 'read_text_file'), names.join());
    });
  }

  it('asked for roots at initialize, fastsvc answers none: the server allows its command line\'s folder, nothing outside', async () => {
    const allowed = await svcCall(srv.url, TOKEN, 'fs.list_allowed_directories', {});
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.result, text(allowed.body), '/svc: a structured result whose text is not JSON has the text as its result');
    assert.match(text(allowed.body), new RegExp(`^Allowed directories:\\s*${files.root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`));
    const outside = await svcCall(srv.url, TOKEN, 'fs.read_text_file', { path: '/etc/hostname' });
    assert.equal(outside.status, 502, 'the server refuses it (isError), which /svc answers BACKEND_FAILED');
    assert.match((outside.body.error as { message: string }).message, /outside allowed directories/i);
    const messages = sent();
    const init = messages.find((m) => m.method === 'initialize');
    assert.ok(init, 'the server was initialized (2025-11-25: it does not speak 2026-07-28)');
    assert.deepEqual((init.params as { capabilities: Record<string, unknown> }).capabilities.roots, {}, 'roots declared, without listChanged');
    const answers = messages.flatMap((m) => ((m as { result?: { roots?: unknown } }).result?.roots !== undefined ? [(m as { result: unknown }).result] : []));
    assert.deepEqual(answers, [{ roots: [] }], 'the one roots/list (at initialize, no call in flight) was answered with no roots');
    assert.ok(!JSON.stringify(messages).includes(TOKEN), 'nor held the caller\'s token');
  });
});
