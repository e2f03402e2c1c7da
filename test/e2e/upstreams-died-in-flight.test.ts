// A call in flight when its HTTP upstream dies fails at once with UPSTREAM_UNAVAILABLE (503), instead of
// waiting out the upstream's timeout_ms (here the longest there is, 600 s, so a call that waited would
// outlive the test). Two upstreams the gateway reaches over Streamable HTTP, each killed (SIGKILL, as a
// crash) while a call of a tool that would run for minutes is in flight on it: the fastmcp recorder
// (2025-11-25: the call's answer is an SSE stream of its POST, cut with the process) and a second
// `svc serve` (2026-07-28). The call answers UPSTREAM_UNAVAILABLE, /readyz says restarting, and once
// the upstream is back on its URL it serves again. The other upstream is unaffected meanwhile.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { serveManifest, type Served } from '../helpers/serve.js';
import { svcCall } from '../helpers/gateway-front.js';
import { recorderHttp, type HttpUpstream, type Recorder } from '../helpers/upstreams.js';
import { freePort } from '../helpers/postgres.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import type { UpstreamRecord } from '../upstreams/records.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

const slowStarted = (up: { recorded(): UpstreamRecord[] }) => up.recorded().filter((r) => r.kind === 'call' && r.tool === 'slow').length;

describe('upstreams: a call in flight when its HTTP upstream dies fails promptly with UPSTREAM_UNAVAILABLE', function () {
  this.timeout(60_000);
  let rec: HttpUpstream & Recorder;
  let fast: Served;
  let gw: Served;
  let fastPort = 0;
  let fastDir = '';
  const readyz = async () => (await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: Record<string, { state: string; protocol_version?: string }> };
  const fastManifest = () => ({
    version: 1,
    name: 'fast',
    auth: { token: '${UP_TOKEN}' },
    audit: { to: 'stderr' },
    routes: { public: ['/healthz'], protected: ['/mcp'] },
    tools: [
      { name: 'slow', description: 'Runs for ten minutes.', exec: { argv: [process.execPath, '-e', 'setTimeout(() => {}, 600000)'], timeout_ms: 600000 }, task: 'forbidden' },
      { name: 'echo', description: 'Echoes.', input_schema: { type: 'object', properties: { text: { type: 'string' } } }, template: '{{text}}' },
    ],
  });

  before(async () => {
    rec = await recorderHttp();
    fastPort = await freePort();
    // Served in place from a folder of the test's own, which a killed server does not take with it.
    fastDir = mkdtempSync(join(tmpdir(), 'svc-died-in-flight-'));
    writeFileSync(join(fastDir, 'svc.yaml'), stringify(fastManifest()));
    fast = await serveManifest({ file: join(fastDir, 'svc.yaml') }, { port: fastPort, env: { UP_TOKEN } });
    const upstream = (name: string, url: string, more: Record<string, unknown> = {}) => ({
      name, url, timeout_ms: 600000, restart: { min_ms: 250, max_ms: 1000 }, expose: { prefix: `${name}.`, include: ['slow', 'echo'] }, ...more,
    });
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc'] },
      upstreams: [upstream('rec', rec.url), upstream('fast', `http://127.0.0.1:${fastPort}/mcp`, { headers: { authorization: 'Bearer ${UP_TOKEN}' } })],
    }, { env: { TOKEN, UP_TOKEN } });
    const r = await readyz();
    assert.deepEqual([r.upstreams.rec?.protocol_version, r.upstreams.fast?.protocol_version], ['2025-11-25', '2026-07-28']);
  });

  after(async () => {
    await gw?.stop();
    await fast?.stop();
    await rec?.stop();
    if (fastDir) rmSync(fastDir, { recursive: true, force: true });
  });

  it('2025-11-25 (the fastmcp recorder): the call in flight answers UPSTREAM_UNAVAILABLE when the upstream is killed; back on its URL it serves again', async () => {
    const before = slowStarted(rec);
    const inFlight = svcCall(gw.url, TOKEN, 'rec.slow', { ms: 600000 });
    await waitFor(() => (slowStarted(rec) > before ? true : undefined), 'the slow call to reach the recorder');
    await rec.kill();
    const r = await inFlight;
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal((r.body.error as { code: string }).code, 'UPSTREAM_UNAVAILABLE');
    assert.equal((await readyz()).upstreams.rec?.state, 'restarting');
    assert.equal((await svcCall(gw.url, TOKEN, 'fast.echo', { text: 'unaffected' })).status, 200, 'the other upstream serves on');
    await rec.restart();
    await waitFor(async () => ((await readyz()).upstreams.rec?.state === 'ready' ? true : undefined), 'the recorder ready again', 15_000, 100);
    assert.equal((await svcCall(gw.url, TOKEN, 'rec.echo', { text: 'back' })).status, 200);
  });

  it('2026-07-28 (a second svc serve): the call in flight answers UPSTREAM_UNAVAILABLE when the upstream is killed; back on its URL it serves again', async () => {
    const started = () => fast.logs().filter((l) => l.audit === true && l.decision === 'allow' && l.capability === 'tool:slow').length;
    const inFlight = svcCall(gw.url, TOKEN, 'fast.slow', {});
    await waitFor(() => (started() > 0 ? true : undefined), 'the slow call to reach the second fastsvc');
    fast.proc.kill('SIGKILL');
    await fast.exit;
    const r = await inFlight;
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal((r.body.error as { code: string }).code, 'UPSTREAM_UNAVAILABLE');
    assert.equal((await readyz()).upstreams.fast?.state, 'restarting');
    assert.equal((await svcCall(gw.url, TOKEN, 'rec.echo', { text: 'unaffected' })).status, 200, 'the other upstream serves on');
    fast = await fast.again({ port: fastPort, env: { UP_TOKEN } });
    await waitFor(async () => ((await readyz()).upstreams.fast?.state === 'ready' ? true : undefined), 'the second fastsvc ready again', 15_000, 100);
    assert.equal((await svcCall(gw.url, TOKEN, 'fast.echo', { text: 'back' })).status, 200);
  });
});
