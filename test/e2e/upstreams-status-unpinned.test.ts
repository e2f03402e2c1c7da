// `fastsvc upstreams status` with an upstream that has `pin: false`, through the real command line
// against a real upstream (a second `svc serve`): it is listed like a pinned one — connected as
// the server would, "not pinned", its state and protocol version, and what it serves kind by
// kind (after expose's exclude) — in text and in --json, beside a pinned upstream; exit 3 while
// the pinned one has something withheld; an unpinned upstream that is down makes it exit 1.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { childEnv, run } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

describe('e2e: upstreams status lists an unpinned upstream (state, counts, not pinned)', function () {
  this.timeout(60_000);
  let up: Served;
  let dir: string;
  const env = childEnv({ UP_TOKEN });

  const gateway = (freeUrl: string) => stringify({
    version: 1,
    name: 'gateway',
    auth: { token: '${GW_TOKEN:-x}' },
    upstreams: [
      { name: 'pinned', url: `${up.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, pin: true, expose: { prefix: 'p.' } },
      { name: 'free', url: freeUrl, headers: { authorization: 'Bearer ${UP_TOKEN}' }, expose: { prefix: 'f.', exclude: ['secret'] } },
    ],
  });

  before(async () => {
    up = await serveManifest({
      version: 1,
      name: 'upstream',
      auth: { token: '${UP_TOKEN}' },
      routes: { public: ['/healthz'], protected: ['/mcp'] },
      tools: [
        { name: 'echo', description: 'Echoes.', input_schema: { type: 'object', properties: { m: { type: 'string' } } }, template: '{{m}}' },
        { name: 'add', description: 'Adds.', template: 'sum' },
        { name: 'secret', description: 'Left out by exclude.', template: 'no' },
      ],
      resources: [{ uri_template: 'notes://{id}', name: 'note', description: 'A note.', text: 'note {{id}}' }],
      prompts: [{ name: 'greet', description: 'Greets.', messages: [{ role: 'user', text: 'hello' }] }],
    }, { env: { UP_TOKEN } });
    dir = mkdtempSync(join(tmpdir(), 'svc-status-unpinned-'));
  });

  after(async () => {
    await up?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('text: the unpinned upstream is listed with its state, protocol version and counts; exit 3 for the pinned one\'s withheld tools', async () => {
    writeFileSync(join(dir, 'svc.yaml'), gateway(`${up.url}/mcp`));
    const r = await run(['upstreams', 'status', join(dir, 'svc.yaml')], { env });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /^pinned: pinned — 0 served, 5 withheld$/m);
    assert.match(r.stdout, /^free: not pinned — ready \(\d{4}-\d{2}-\d{2}\), 4 served: 2 tools, 0 resources, 1 resource template, 1 prompt; everything it lists is served \(pin: true to pin it\)$/m);
  });

  it('--json: the same, as {pinned: false, state, protocol_version, served, counts}', async () => {
    const r = await run(['upstreams', 'status', '--json', join(dir, 'svc.yaml')], { env });
    assert.equal(r.code, 3, r.stderr);
    const free = (JSON.parse(r.stdout) as { upstreams: Record<string, Record<string, unknown>> }).upstreams.free!;
    assert.deepEqual({ ...free, protocol_version: typeof free.protocol_version }, {
      pinned: false, state: 'ready', protocol_version: 'string', served: 4, counts: { tools: 2, resources: 0, templates: 1, prompts: 1 },
    });
  });

  it('an unpinned upstream that is down: "cannot be listed", exit 1', async () => {
    // Port 9 (discard) on loopback: nothing listens there, the connection is refused.
    writeFileSync(join(dir, 'svc.yaml'), gateway('http://127.0.0.1:9/mcp'));
    const r = await run(['upstreams', 'status', join(dir, 'svc.yaml')], { env });
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /^free: cannot be listed: UPSTREAM_UNAVAILABLE: /m);
  });
});
