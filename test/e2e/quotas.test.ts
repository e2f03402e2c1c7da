// Per-principal quotas through `svc serve`: a tool limited to 3 requests per hour for each
// principal. Token a uses its 3 calls on /svc, then is refused on every transport — /svc and
// /mcp with HTTP 429 and a Retry-After equal to data.retryAfterMs rounded up to seconds, /ws
// with a JSON-RPC RATE_LIMITED error carrying data.retryAfterMs — while token b, calling the
// same tool, is never throttled. The window opens at a's first call, so no clock boundary
// can reset it during the test.

import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { RawMcp, RawWs } from '../helpers/mcp-app.js';

const HOUR = 3_600_000;
const MANIFEST = `version: 1
name: quotas
auth:
  token: \${OPS}
  tokens:
    - { name: a, token: "\${A}", scopes: [] }
    - { name: b, token: "\${B}", scopes: [] }
profile: { scopes: [ops] }
tools:
  - name: echo
    description: Says the text back.
    input_schema: { type: object, properties: { text: { type: string } }, required: [text] }
    template: "{{text}}"
    limits: { requests: 3, window_ms: ${HOUR} }
`;
const A = 'token-a-0123456789';
const B = 'token-b-0123456789';

type Json = Record<string, any>;

describe('quotas per principal: one throttled, the other not (svc serve)', () => {
  let srv: Served;
  const call = (token: string) => fetch(`${srv.url}/svc/tools/echo`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"text":"hi"}' });

  before(async () => {
    srv = await serveManifest(MANIFEST, { args: ['--no-watch'], env: { OPS: 'ops-0123456789', A, B } });
  });
  after(() => srv?.stop());

  it('a: three calls pass on /svc, the fourth is 429 with Retry-After = ceil(retryAfterMs / 1000), within the hour', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await call(A)).status, 200);
    const res = await call(A);
    assert.equal(res.status, 429);
    const body = (await res.json()) as Json;
    assert.equal(body.error.code, 'RATE_LIMITED');
    const ms = body.error.retryAfterMs as number;
    assert.ok(ms > 0 && ms <= HOUR, String(ms));
    assert.equal(res.headers.get('retry-after'), String(Math.ceil(ms / 1000)));
  });

  it('a on /mcp: HTTP 429 with Retry-After and a JSON-RPC RATE_LIMITED error', async () => {
    const m = new RawMcp(srv.url, A);
    await m.initialize();
    const { res, answer } = await m.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    assert.equal(res.status, 429);
    const seconds = Number(res.headers.get('retry-after'));
    assert.ok(seconds >= 1 && seconds <= HOUR / 1000, String(seconds));
    assert.equal((answer as Json).error.data.code, 'RATE_LIMITED');
    assert.equal(Math.ceil((answer as Json).error.data.retryAfterMs / 1000), seconds);
  });

  it('a on /ws: a JSON-RPC RATE_LIMITED error with data.retryAfterMs', async () => {
    const w = RawWs.open(srv.url, A);
    try {
      await w.initialize();
      const answer = (await w.call('tools/call', { name: 'echo', arguments: { text: 'hi' } })) as Json;
      assert.equal(answer.error.data.code, 'RATE_LIMITED');
      assert.ok(answer.error.data.retryAfterMs > 0 && answer.error.data.retryAfterMs <= HOUR);
    } finally {
      w.socket.close();
    }
  });

  it('b is not throttled by a: its three calls pass on /svc, /mcp and /ws', async () => {
    assert.equal((await call(B)).status, 200);
    const m = new RawMcp(srv.url, B);
    await m.initialize();
    const { res, answer } = await m.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    assert.equal(res.status, 200);
    assert.equal((answer as Json).result.content[0].text, 'hi');
    const w = RawWs.open(srv.url, B);
    try {
      await w.initialize();
      assert.equal(((await w.call('tools/call', { name: 'echo', arguments: { text: 'hi' } })) as Json).result.content[0].text, 'hi');
    } finally {
      w.socket.close();
    }
    // b has now used its 3: its own budget, not a's, ran out.
    assert.equal((await call(B)).status, 429);
  });

  it('svc explain names the quota for a token', async () => {
    const res = await fetch(`${srv.url}/svc/explain`, { headers: { authorization: `Bearer ${A}` } });
    const view = (await res.json()) as Json;
    const echo = view.capabilities.find((c: Json) => c.id === 'tool:echo');
    assert.ok(echo.reasons.some((r: string) => r.startsWith('quota tool:echo per principal: 3 requests per 3600000 ms')), JSON.stringify(echo));
  });
});
