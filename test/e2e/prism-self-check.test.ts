// Prism alone (test/helpers/prism.ts, behind test/helpers/recording-proxy.ts), before any fastsvc test leans on it:
// the OpenAPI end-to-end tests count "Prism accepted the call" as proof that fastsvc built the request the document
// describes, which means something only if Prism, started as the helper starts it (--errors), refuses requests that
// break the document. Asserted with plain fetch against a small document whose 4xx answers Prism writes itself
// (test/e2e/fixtures/prism-check.openapi.json, PRISM_CHECK): a conforming request of each kind gets the mock answer
// (2xx, the example); a wrong path parameter type, a missing required query parameter, a query array value outside
// its enum, a JSON body missing a required property, a form body with a wrong type, a missing api_key header and an
// unknown path are each refused with a 4xx whose problem+json names the violation; the proxy forwards exactly and
// records every exchange; Prism's own log counts the requests it received.
import assert from 'node:assert/strict';
import { PRISM_CHECK, startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';

describe('Prism as the OpenAPI tests start it refuses what breaks the document (no fastsvc)', function () {
  this.timeout(90_000);
  let prism: Prism;
  let proxy: RecordingProxy;

  before(async () => {
    prism = await startPrism(PRISM_CHECK);
    proxy = await recordingProxy(prism.url);
  });
  after(async () => {
    await proxy?.close();
    await prism?.stop();
  });

  const send = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
    const res = await fetch(`${proxy.url}${path}`, { method, headers: init.headers, body: init.body });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) as Record<string, unknown> };
  };

  it('answers conforming requests of each kind with the mock answer', async () => {
    const got = await send('GET', '/pet/7', { headers: { api_key: 'k' } });
    assert.equal(got.status, 200, `${got.text}\n${prism.tail()}`);
    assert.deepEqual(got.json(), { id: 7, name: 'rex' });
    const found = await send('GET', '/pet/findByStatus?status=available&status=sold');
    assert.equal(found.status, 200, `${found.text}\n${prism.tail()}`);
    const added = await send('POST', '/pet', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'rex' }) });
    assert.equal(added.status, 200, `${added.text}\n${prism.tail()}`);
    const form = await send('POST', '/pet/7', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=rex&age=3' });
    assert.equal(form.status, 200, `${form.text}\n${prism.tail()}`);
  });

  const refusals: { what: string; method: string; path: string; headers?: Record<string, string>; body?: string; status: number; names: RegExp }[] = [
    { what: 'a path parameter of the wrong type', method: 'GET', path: '/pet/rex', headers: { api_key: 'k' }, status: 422, names: /path parameter petid must be integer/i },
    { what: 'a required query parameter missing', method: 'GET', path: '/pet/findByStatus', status: 422, names: /must have required property 'status'/ },
    { what: 'a query array value outside its enum', method: 'GET', path: '/pet/findByStatus?status=lost', status: 422, names: /must be equal to one of the allowed values/ },
    { what: 'a query array sent as one comma-joined value where explode is true', method: 'GET', path: '/pet/findByStatus?status=available,sold', status: 422, names: /must be equal to one of the allowed values/ },
    { what: 'a JSON body missing a required property', method: 'POST', path: '/pet', headers: { 'content-type': 'application/json' }, body: '{"id":1}', status: 422, names: /must have required property 'name'/ },
    { what: 'a form body with a wrong type', method: 'POST', path: '/pet/7', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=rex&age=old', status: 422, names: /age must be integer/ },
    { what: 'the api_key header missing', method: 'GET', path: '/pet/7', status: 401, names: /Invalid security scheme used|unauthorized/i },
    { what: 'an unknown path', method: 'GET', path: '/owner/1', status: 404, names: /hasn't been found/ },
  ];
  for (const r of refusals) {
    it(`refuses ${r.what} with ${r.status} naming the violation`, async () => {
      const got = await send(r.method, r.path, { headers: r.headers, body: r.body });
      assert.equal(got.status, r.status, `${got.text}\n${prism.tail()}`);
      assert.match(got.type, /application\/problem\+json/);
      assert.match(got.text, r.names);
    });
  }

  it('the proxy recorded every exchange as sent, and Prism logged every request it received', () => {
    const all = proxy.seen.map((s) => `${s.method} ${s.url} ${s.status}`);
    assert.equal(all.length, 4 + refusals.length, all.join('\n'));
    assert.ok(all.includes('GET /pet/findByStatus?status=available&status=sold 200'), all.join('\n'));
    const form = proxy.seen.find((s) => s.method === 'POST' && s.url === '/pet/7' && s.status === 200);
    assert.equal(form?.body, 'name=rex&age=3');
    assert.equal(form?.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(prism.received().map((r) => `${r.method.toUpperCase()} ${r.path}`), proxy.seen.map((s) => `${s.method} ${s.url.split('?')[0]}`));
  });
});
