// One request, one policy snapshot: the snapshot a /svc tool call is authenticated
// with is the one the runtime decides it with, even when the policy changes while
// the request body is still on its way. Runs serve() in-process (not `svc serve`)
// because the test swaps the policy store at an exact point of the request: after
// the server took the request (the 100 Continue it sends before its handler runs)
// and before the body arrives.

import assert from 'node:assert/strict';
import http from 'node:http';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { serve, type Served } from '../../src/server/listen.js';

const TOKEN = 'snapshot-reader-token';

/** probe.version answers its policy's name and requires that policy's scope. */
function policy(name: 'A' | 'B', scope: string): FastSvc {
  const svc = new FastSvc({ name: 'snapshot-test', description: 'One snapshot per request.' });
  svc.tool({ name: 'probe.version', description: 'Names its policy.', required_scopes: [scope], handler: () => name });
  return svc;
}

/** POST with Expect: 100-continue; `between` runs once the server has taken the request, before the body is sent. */
function postWithPause(url: string, path: string, between: () => void): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = '{}';
    const req = http.request(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
    });
    req.on('continue', () => {
      between();
      req.end(body);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('a request sees one policy snapshot', () => {
  let served: Served;

  before(async () => {
    served = await serve(policy('A', 'p.read'), {
      server: { host: '127.0.0.1', port: 0 },
      profile: { scopes: ['p.read', 'p.write'] },
      auth: { tokens: [{ name: 'reader', token: TOKEN, scopes: ['p.read'] }] },
    }, {}, { logger: pino({ level: 'silent' }) });
  });
  after(() => served.close());

  it('a policy swapped in mid-request does not decide it; the next request gets the new policy', async () => {
    const { store } = served.handle;
    const a = store.current();
    const r = await postWithPause(served.url, '/svc/tools/probe.version', () => store.swap({ ...a, catalog: buildCatalog(policy('B', 'p.write')) }));
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).result, 'A');

    const next = await postWithPause(served.url, '/svc/tools/probe.version', () => {});
    assert.equal(next.status, 403, 'policy B requires p.write, which the reader lacks');
    assert.equal(JSON.parse(next.body).error.code, 'INSUFFICIENT_SCOPE');
  });
});
