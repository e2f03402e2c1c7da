// upstreams/credentials.ts without sockets: which credential's header each request to an upstream
// carries (the call's inside withCallHeader, through awaits and timers; the connection's outside it
// and under outsideCall, even when a call started the work), replace-not-add, the manifest's headers
// kept; which credential a call gets (override, then expose.auth, then none), built once per
// generation of the entry; a 401 to a fetched token renewed once (never for a static one); and the
// runtime refusing what validate refuses (UPSTREAM_CONFIG).

import assert from 'node:assert/strict';
import type { FetchLike } from '@modelcontextprotocol/client';
import { callCredentials, connectionCredential, credentialedFetch, outsideCall, withCallHeader } from '../../../src/upstreams/credentials.js';
import type { UpstreamSpec } from '../../../src/upstreams/spec.js';
import { SvcError } from '../../../src/errors.js';
import { ANONYMOUS } from '../../../src/policy/principals.js';

const BASE = { timeout_ms: 1000, connect_timeout_ms: 1000, max_in_flight: 1, max_bytes: '1mb', poll_ms: 0, restart: {}, pin: false, cwd: '.' };
const spec = (u: Record<string, unknown>) => ({ ...BASE, name: 'up', url: 'http://127.0.0.1:9/mcp', expose: {}, ...u }) as unknown as UpstreamSpec;

/** A fetch that records the headers of each request and answers 200. */
function recorder(): { fetch: FetchLike; seen: Headers[] } {
  const seen: Headers[] = [];
  return { seen, fetch: async (_url, init) => {
    seen.push(new Headers(init?.headers));
    return new Response('{}');
  } };
}

describe('upstreams/credentials: the header on each request', () => {
  const conn = connectionCredential(spec({ auth: { static: { bearer: 'connection-token' } } }), '.');
  const call = ['x-call-key', 'call-key-1'] as const;
  const callCredential = { header: async () => call };

  it('a request outside any call carries the connection\'s credential, beside the manifest\'s headers', async () => {
    const r = recorder();
    await credentialedFetch(r.fetch, conn)('http://u', { method: 'POST', headers: { 'x-fixed': 'yes' } });
    assert.equal(r.seen[0]!.get('authorization'), 'Bearer connection-token');
    assert.equal(r.seen[0]!.get('x-fixed'), 'yes');
  });

  it('a request made inside withCallHeader — after awaits and a timer — carries the call\'s header instead', async () => {
    const r = recorder();
    const f = credentialedFetch(r.fetch, conn);
    await withCallHeader(call, callCredential, ANONYMOUS, async () => {
      await Promise.resolve();
      await f('http://u', { method: 'POST' });
      await new Promise<void>((resolve) => setTimeout(() => void f('http://u', { method: 'GET' }).then(() => resolve()), 1));
    });
    assert.equal(r.seen.length, 2);
    for (const h of r.seen) assert.deepEqual([h.get('authorization'), h.get('x-call-key')], [null, 'call-key-1']);
  });

  it('work started by a call under outsideCall (a re-list, a reconnect timer) carries the connection\'s credential', async () => {
    const r = recorder();
    const f = credentialedFetch(r.fetch, conn);
    let timer: Promise<void> | undefined;
    await withCallHeader(call, callCredential, ANONYMOUS, async () => {
      await outsideCall(() => f('http://u', { method: 'POST' }));
      timer = outsideCall(() => new Promise<void>((resolve) => setTimeout(() => void f('http://u', {}).then(() => resolve()), 1)));
    });
    await timer;
    assert.equal(r.seen.length, 2);
    for (const h of r.seen) assert.deepEqual([h.get('authorization'), h.get('x-call-key')], ['Bearer connection-token', null]);
  });

  it('a 401 to a fetched token: the credential forgets it and the request goes once more with a new one (the call keeps it); a second 401 is the answer', async () => {
    let n = 1; // tok-1 is the header the call already has
    const forgotten: string[] = [];
    const fetched = { header: async () => ['authorization', `Bearer tok-${++n}`] as const, refused: (_c: unknown, h: readonly [string, string]) => void forgotten.push(h[1]) };
    const seen: string[] = [];
    const refusing = (bad: (t: string) => boolean): FetchLike => async (_url, init) => {
      const t = new Headers(init?.headers).get('authorization')!;
      seen.push(t);
      return new Response('{}', { status: bad(t) ? 401 : 200 });
    };
    const f = credentialedFetch(refusing((t) => t === 'Bearer tok-1'), conn);
    const statuses = await withCallHeader(['authorization', 'Bearer tok-1'], fetched, ANONYMOUS, async () => [
      (await f('http://u', { method: 'POST', body: '{"jsonrpc":"2.0"}' })).status,
      (await f('http://u', { method: 'POST', body: '{}' })).status,
    ]);
    assert.deepEqual(statuses, [200, 200]);
    assert.deepEqual(seen, ['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-2']);
    assert.deepEqual(forgotten, ['Bearer tok-1']);
    seen.length = 0;
    const always = credentialedFetch(refusing(() => true), fetched);
    assert.equal((await always('http://u', { method: 'POST', body: '{}' })).status, 401);
    assert.equal(seen.length, 2, 'once more, never twice');
  });

  it('a 401 to a static credential (nothing to renew) is the answer, sent once', async () => {
    let sent = 0;
    const f = credentialedFetch(async () => (sent++, new Response('{}', { status: 401 })), conn);
    assert.equal((await f('http://u', { method: 'POST', body: '{}' })).status, 401);
    assert.equal(sent, 1);
  });

  it('without a connection credential, a request outside a call carries none', async () => {
    const r = recorder();
    await credentialedFetch(r.fetch, undefined)('http://u', { method: 'POST' });
    assert.equal(r.seen[0]!.get('authorization'), null);
  });
});

describe('upstreams/credentials: which credential a call gets', () => {
  const s = spec({
    auth: { static: { bearer: 'connection-token' } },
    expose: { auth: { static: { bearer: 'every-call-token' } }, overrides: { special: { auth: { static: { header: 'X-Key', value: 'special-key-1' } } }, plain: { description: 'no auth' } } },
  });

  it('an override\'s, else expose.auth; resources and prompts get expose.auth', async () => {
    const c = callCredentials(s, '.');
    const header = async (tool?: string) => c.of(tool)?.header(ANONYMOUS, new AbortController().signal);
    assert.deepEqual(await header('special'), ['X-Key', 'special-key-1']);
    assert.deepEqual(await header('plain'), ['authorization', 'Bearer every-call-token']);
    assert.deepEqual(await header(), ['authorization', 'Bearer every-call-token']);
    const bare = callCredentials(spec({}), '.');
    assert.equal(bare.of('x'), undefined, 'no call credential: the connection\'s is used');
  });

  it('is built once per generation of the entry (a listing change reuses it, a reload builds anew)', () => {
    assert.equal(callCredentials(s, '.'), callCredentials(s, '.'));
    assert.notEqual(callCredentials(s, '.'), callCredentials({ ...s }, '.'));
  });

  it('refuses at run time what validate refuses (UPSTREAM_CONFIG at the field)', () => {
    const refused = (u: Record<string, unknown>, path: string) => assert.throws(() => callCredentials(spec(u), '.'), (e: unknown) => e instanceof SvcError && e.code === 'UPSTREAM_CONFIG' && e.path === path);
    const te = { token_exchange: { token_url: 'https://idp.example/token', client_id: 'gw', client_secret: 'secret-value', audience: 'vendor' } };
    refused({ expose: { auth: te } }, 'expose/auth');
    refused({ auth: te }, 'auth/token_exchange');
    refused({ url: undefined, command: ['node'], auth: { static: { bearer: 'connection-token' } } }, 'auth');
    refused({ headers: { Authorization: 'Bearer x' }, auth: { static: { bearer: 'connection-token' } } }, 'auth');
  });
});
