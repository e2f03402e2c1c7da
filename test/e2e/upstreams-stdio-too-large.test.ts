// A stdio upstream's answer larger than max_bytes behind the real `svc serve` (a hand-written stdio server,
// test/fixtures/upstreams/big-line-stdio.mjs, whose answer is one long line): the call fails with
// BACKEND_FAILED reason too_large, not BACKEND_TIMEOUT (the line's id is read and its request answered at
// once), the connection survives it (no restart), and the next small answer passes.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const SERVER = join(ROOT, 'test', 'fixtures', 'upstreams', 'big-line-stdio.mjs');
const TOKEN = secret(randomBytes(24).toString('base64url'));

describe('upstreams: a stdio answer over max_bytes', function () {
  this.timeout(30_000);
  let srv: Served;
  const call = async (bytes: number) => {
    const r = await fetch(`${srv.url}/svc/tools/big.big`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ bytes }) });
    return { status: r.status, body: (await r.json()) as { error?: { code: string; reason?: string; max_bytes?: number }; content?: { text: string }[] } };
  };

  before(async () => {
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['use'] },
      profile: { scopes: ['use'] },
      routes: { public: ['/readyz'], protected: ['/svc'] },
      upstreams: [{ name: 'big', command: ['node', SERVER], env: {}, max_bytes: '64kb', timeout_ms: 20_000, expose: { prefix: 'big.', required_scopes: ['use'] } }],
    }, { env: { TOKEN } });
  });
  after(() => srv?.stop());

  it('fails with too_large at once, keeps the connection, and a small answer passes next', async () => {
    const big = await call(2 * 1024 * 1024);
    assert.equal(big.status, 502, JSON.stringify(big.body));
    assert.equal(big.body.error?.code, 'BACKEND_FAILED');
    assert.equal(big.body.error?.reason, 'too_large');
    const small = await call(10);
    assert.equal(small.status, 200);
    assert.equal(small.body.content?.[0]?.text, 'x'.repeat(10));
    const ready = (await (await fetch(`${srv.url}/readyz`)).json()) as { upstreams: { big: { state: string; restarts: number } } };
    assert.deepEqual([ready.upstreams.big.state, ready.upstreams.big.restarts], ['ready', 0]);
  });
});
