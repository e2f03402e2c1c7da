// `fastsvc explain --capability up.NAME` offline agrees with the running gateway (issue 37): a
// second `fastsvc serve` is the upstream, the gateway imports it with `pin: true`, prefix `up.` and
// an override that makes `add` need up.admin. Before the lock, the CLI says CAPABILITY_WITHHELD
// (exit 1) and the gateway refuses the call with that code (409); after `upstreams accept`, for
// each token and tool, the CLI's exit code (0 allowed, 1 refused) is the gateway's verdict on
// GET /svc/explain?capability=… and on the call itself (200, or 403 for the missing scope).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { childEnv, run } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN_TOKEN = secret(randomBytes(24).toString('base64url'));
const READER_TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

const upstream = {
  version: 1,
  name: 'upstream',
  auth: { token: '${UP_TOKEN}' },
  routes: { public: ['/healthz'], protected: ['/mcp'] },
  tools: [
    { name: 'echo', description: 'Echoes.', input_schema: { type: 'object', properties: { message: { type: 'string' } } }, template: '{{message}}' },
    { name: 'add', description: 'Adds.', input_schema: { type: 'object', properties: { a: { type: 'number' } } }, template: '{{a}}' },
  ],
};

describe('e2e: explain by an upstream\'s prefixed names agrees with the gateway', function () {
  this.timeout(90_000);
  let up: Served;
  let gw: Served;
  const env = childEnv({ ADMIN_TOKEN, READER_TOKEN, UP_TOKEN });
  const tokens: Record<string, string> = { admin: ADMIN_TOKEN, reader: READER_TOKEN };
  const cli = (...args: string[]) => run(args, { env, cwd: gw.dir });
  const call = (token: string, tool: string) => fetch(`${gw.url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });

  before(async () => {
    up = await serveManifest(upstream, { env: { UP_TOKEN } });
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: {
        token: '${ADMIN_TOKEN}', subject: 'admin', scopes: ['up.use', 'up.admin'],
        tokens: [{ name: 'reader', token: '${READER_TOKEN}', scopes: ['up.use'] }],
      },
      profile: { scopes: ['up.use', 'up.admin'] },
      routes: { public: ['/healthz'], protected: ['/svc'] },
      upstreams: [{
        name: 'up', url: `${up.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, pin: true, poll_ms: 300,
        expose: { prefix: 'up.', required_scopes: ['up.use'], overrides: { add: { required_scopes: ['up.admin'] } } },
      }],
    }, { env: { ADMIN_TOKEN, READER_TOKEN, UP_TOKEN } });
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
  });

  it('before the lock: the CLI says withheld, the gateway refuses the call with CAPABILITY_WITHHELD', async () => {
    const offline = await cli('explain', gw.file, '--token', 'admin', '--capability', 'up.echo');
    assert.equal(offline.code, 1, offline.stderr);
    assert.match(offline.stdout, /^tool:up\.echo: refused — upstream up, its tool echo: holds up\.use; CAPABILITY_WITHHELD: pinned, and there is no svc\.lock\.json \(fastsvc upstreams accept up\)/);
    // The gateway has listed the upstream (and withheld everything) once a call is refused as withheld.
    const refused = await waitFor(async () => {
      const r = await call(ADMIN_TOKEN, 'up.echo');
      return r.status === 409 ? r : undefined;
    }, 'the gateway to list the upstream and withhold echo', 15_000);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'CAPABILITY_WITHHELD');
  });

  it('after accept: for each token and tool, the CLI\'s verdict is the gateway\'s explain and call', async () => {
    assert.equal((await cli('upstreams', 'accept', 'up', gw.file)).code, 0);
    await waitFor(async () => ((await call(ADMIN_TOKEN, 'up.echo')).status === 200 ? true : undefined), 'the accepted tools to be served', 15_000);
    const seen: string[] = [];
    for (const [name, token] of Object.entries(tokens)) {
      for (const tool of ['up.echo', 'up.add']) {
        const offline = await cli('explain', gw.file, '--token', name, '--capability', tool, '--json');
        const verdict = JSON.parse(offline.stdout) as { allowed: boolean; reasons: string[]; upstreams: { locked?: boolean }[] };
        assert.equal(offline.code, verdict.allowed ? 0 : 1);
        assert.equal(verdict.upstreams[0]!.locked, true, `${name} ${tool}: the lock lists it`);
        const served = (await (await fetch(`${gw.url}/svc/explain?capability=${encodeURIComponent(`tool:${tool}`)}&args=%7B%7D`, { headers: { authorization: `Bearer ${token}` } })).json()) as { allowed: boolean };
        assert.equal(verdict.allowed, served.allowed, `${name} ${tool}: offline ${JSON.stringify(verdict.reasons)}`);
        assert.equal((await call(token, tool)).status, served.allowed ? 200 : 403, `${name} ${tool}: the call`);
        seen.push(`${name} ${tool} ${verdict.allowed ? 'allowed' : 'refused'}`);
      }
    }
    assert.deepEqual(seen, ['admin up.echo allowed', 'admin up.add allowed', 'reader up.echo allowed', 'reader up.add refused']);
  });
});
