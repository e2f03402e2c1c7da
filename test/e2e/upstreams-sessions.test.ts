// What fastsvc opens at an HTTP upstream, it closes — behind the real `svc serve`, against an SDK 1.x
// low-level Server (test/helpers/sessions-upstream.ts) that counts its sessions and TCP connections:
// - an upstream that declares resources and answers resources/templates/list with -32601 (the SDK's answer
//   without a handler) connects, its templates an empty list;
// - a connect that fails after initialize DELETEs the session it opened before the next attempt, and the
//   attempts leave no TCP connection behind;
// - a reconnect (the connection broke below HTTP, the upstream and its session alive) DELETEs the old session;
// - removing an upstream from the manifest (hot reload) ends its connection: its session DELETEd, its sockets
//   closed, and it leaves /readyz; a call in flight on it ends normally first; put back, it connects again;
// - at shutdown every session is DELETEd and every connection closed.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { serveManifest, type Served } from '../helpers/serve.js';
import { svcCall } from '../helpers/gateway-front.js';
import { PAGE, startSessionsUpstream, type SessionsUpstream } from '../helpers/sessions-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));

interface Readyz { upstreams: Record<string, { state: string; last_error?: string; resources: number }> }

describe('upstreams: the sessions and connections fastsvc opens at an HTTP upstream are closed', function () {
  this.timeout(60_000);
  let good: SessionsUpstream;
  let bad: SessionsUpstream;
  let srv: Served;
  const readyz = async () => (await (await fetch(`${srv.url}/readyz`)).json()) as Readyz;
  // The failing upstream is tried again every second: time enough to see it between two attempts.
  const upstream = (name: string, url: string) => ({ name, url, restart: name === 'bad' ? { min_ms: 1000, max_ms: 1000 } : { min_ms: 100, max_ms: 400 }, expose: { prefix: `${name}.`, required_scopes: ['use'] } });
  const manifest = (ups: ReturnType<typeof upstream>[]) => ({
    version: 1,
    name: 'gateway',
    auth: { token: '${TOKEN}', scopes: ['use'] },
    profile: { scopes: ['use'] },
    routes: { public: ['/readyz'], protected: ['/svc'] },
    upstreams: ups,
  });

  before(async () => {
    good = await startSessionsUpstream();
    bad = await startSessionsUpstream();
    bad.failLists(true);
    srv = await serveManifest(manifest([upstream('good', good.url), upstream('bad', bad.url)]), { env: { TOKEN } });
  });
  after(async () => {
    await srv?.stop();
    await good?.close();
    await bad?.close();
  });

  it('an upstream whose resources/templates/list is -32601 connects: its resources are served, its templates are none', async () => {
    const st = await waitFor(async () => ((await readyz()).upstreams.good?.state === 'ready' ? (await readyz()).upstreams.good : undefined), 'the upstream ready', 10_000);
    assert.equal(st.resources, 1);
    assert.equal(good.opened.length, 1, 'one session, opened once');
    const res = await fetch(`${srv.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const listing = (await res.json()) as { resources: { uri: string }[]; resource_templates?: unknown[] };
    assert.ok(listing.resources.some((r) => r.uri === PAGE), JSON.stringify(listing));
    assert.equal((await svcCall(srv.url, TOKEN, 'good.echo', { text: 'hi' })).status, 200);
  });

  it('a connect that fails after initialize DELETEs its session before the next attempt, and closes its TCP connections', async () => {
    await waitFor(() => (bad.opened.length >= 3 ? true : undefined), 'three connect attempts', 15_000);
    for (const id of bad.opened.slice(0, -1)) assert.ok(bad.deleted.includes(id), `session ${id} of a failed attempt was not DELETEd (opened ${bad.opened.length}, deleted ${bad.deleted.length})`);
    // Between two attempts nothing of the last one is left: its session DELETEd, no TCP connection open.
    await waitFor(() => (bad.deleted.length === bad.opened.length && bad.sockets() === 0 ? true : undefined),
      `a moment between two attempts with every session DELETEd and no connection open (opened ${bad.opened.length}, deleted ${bad.deleted.length}, sockets ${bad.sockets()})`, 10_000);
    const st = (await readyz()).upstreams.bad!;
    assert.equal(st.state, 'starting');
    assert.match(st.last_error ?? '', /not available/);
  });

  it('a reconnect DELETEs the session it leaves (the connection broke below HTTP; the upstream is alive)', async () => {
    const first = good.opened[0]!;
    const dropped = await svcCall(srv.url, TOKEN, 'good.drop', {});
    assert.equal(dropped.status, 503, JSON.stringify(dropped.body));
    await waitFor(() => (good.opened.length === 2 ? true : undefined), 'a new session', 10_000);
    await waitFor(() => (good.deleted.includes(first) ? true : undefined), 'the old session DELETEd', 10_000);
    await waitFor(async () => ((await readyz()).upstreams.good?.state === 'ready' ? true : undefined), 'the upstream ready again', 10_000);
    assert.equal((await svcCall(srv.url, TOKEN, 'good.echo', { text: 'again' })).status, 200);
  });

  it('an upstream removed on reload is disconnected: its session DELETEd, its connections closed, gone from /readyz', async () => {
    bad.failLists(false);
    srv.write(manifest([upstream('good', good.url)]));
    await waitFor(async () => ((await readyz()).upstreams.bad === undefined ? true : undefined), 'bad gone from /readyz', 10_000);
    await waitFor(() => (bad.opened.every((id) => bad.deleted.includes(id)) && bad.sockets() === 0 ? true : undefined), `every session of the removed upstream DELETEd and its sockets closed (opened ${bad.opened.length}, deleted ${bad.deleted.length}, sockets ${bad.sockets()})`, 10_000);
    const attempts = bad.opened.length;
    assert.equal((await svcCall(srv.url, TOKEN, 'good.echo', { text: 'still here' })).status, 200);
    assert.equal(bad.opened.length, attempts, 'no attempt after the removal');
  });

  it('an upstream removed with a call in flight: the call ends normally, then its session is DELETEd; put back, it connects again', async () => {
    const live = good.opened.filter((id) => !good.deleted.includes(id));
    assert.equal(live.length, 1);
    const held = svcCall(srv.url, TOKEN, 'good.hold', {});
    await waitFor(() => (good.holding() === 1 ? true : undefined), 'the held call at the upstream');
    srv.write(manifest([]));
    await waitFor(async () => ((await readyz()).upstreams.good === undefined ? true : undefined), 'good gone from /readyz', 10_000);
    assert.ok(!good.deleted.includes(live[0]!), 'not DELETEd while its call is in flight');
    good.release();
    assert.equal((await held).status, 200);
    await waitFor(() => (good.deleted.includes(live[0]!) ? true : undefined), 'its session DELETEd once the call ended', 10_000);
    srv.write(manifest([upstream('good', good.url)]));
    await waitFor(async () => ((await readyz()).upstreams.good?.state === 'ready' ? true : undefined), 'good back and ready', 10_000);
    assert.equal((await svcCall(srv.url, TOKEN, 'good.echo', { text: 'back' })).status, 200);
  });

  it('at shutdown every session is DELETEd and every connection closed', async () => {
    const live = good.opened.filter((id) => !good.deleted.includes(id));
    assert.equal(live.length, 1);
    await srv.stop();
    assert.ok(good.deleted.includes(live[0]!), 'the live session was DELETEd at shutdown');
    await waitFor(() => (good.sockets() === 0 ? true : undefined), 'no connection left open', 5000);
  });
});
