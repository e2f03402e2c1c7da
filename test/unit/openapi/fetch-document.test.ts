// A document at a URL (fetch-document.ts): fetched from a loopback server (in a child process:
// the fetch blocks this one) when its sha256 is pinned, refused without a pin, with another
// sha256, with a non-2xx answer, past the size bound, or over http off loopback; not fetched offline.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { fetchDocument } from '../../../src/openapi/fetch-document.js';
import { expandOpenApiCached } from '../../../src/openapi/expand-cache.js';
import { expandFixture, FIXTURES, problemsOf } from './helpers.js';

const SERVER = `
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');
const doc = readFileSync(process.argv[1]);
let served = 0;
createServer((req, res) => {
  if (req.url === '/petstore.yaml') { served++; res.setHeader('content-type', 'application/yaml'); res.end(doc); }
  else if (req.url === '/served') res.end(String(served));
  else if (req.url === '/moved') { res.statusCode = 302; res.setHeader('location', '/petstore.yaml'); res.end(); }
  else { res.statusCode = 404; res.end('no'); }
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
`;


describe('openapi document at a URL', () => {
  const file = join(FIXTURES, 'petstore-3.0.yaml');
  const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
  let server: ChildProcess;
  let base: string;
  before(async () => {
    server = spawn(process.execPath, ['-e', SERVER, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [chunk] = await once(server.stdout!, 'data');
    base = `http://127.0.0.1:${String(chunk).trim()}`;
  });
  after(() => void server.kill());

  it('is fetched and expanded when its sha256 is pinned', () => {
    const x = expandFixture(`${base}/petstore.yaml`, { sha256: sha });
    assert.equal(x.tools.length, 18);
    assert.equal(x.tools.find((t) => t.name === 'getPetById')!.http.url, 'https://petstore3.swagger.io/api/v3/pet/{{petId}}');
  });

  it('is fetched once for any number of loads with the same sources (the pin fixes its bytes: a reload waits on no fetch)', async () => {
    const served = async () => Number(await (await fetch(`${base}/served`)).text());
    const sources = [{ name: 'api', document: `${base}/petstore.yaml`, sha256: sha, naming: '{operationId}', required_scopes: [] }];
    const opts = { file: 'svc.yaml', baseDir: FIXTURES, locate: () => ({ line: 1, col: 1 }) };
    const before = await served();
    const first = expandOpenApiCached(sources, opts);
    assert.equal(first.tools.length, 18);
    assert.equal(expandOpenApiCached(sources.map((s) => ({ ...s })), opts), first);
    assert.equal(await served() - before, 1);
    const other = expandOpenApiCached([{ ...sources[0]!, naming: 'x.{operationId}' }], opts);
    assert.notEqual(other, first, 'other sources: expanded (and fetched) again');
    assert.equal(await served() - before, 2);
  });

  it('offline (validate without --network) it is not fetched: no tools, an OPENAPI_NOT_FETCHED warning', () => {
    const x = expandFixture(`${base}/petstore.yaml`, { sha256: sha }, { offline: true });
    assert.equal(x.tools.length, 0);
    assert.deepEqual(x.warnings.map((w) => w.code), ['OPENAPI_NOT_FETCHED']);
  });

  it('needs a pinned sha256, and refuses another', () => {
    assert.equal(problemsOf(() => expandFixture(`${base}/petstore.yaml`))[0]!.code, 'OPENAPI_CONFIG');
    assert.equal(problemsOf(() => expandFixture(`${base}/petstore.yaml`, { sha256: 'f'.repeat(64) }))[0]!.code, 'OPENAPI_INVALID');
  });

  it('a non-2xx answer, a redirect, a body past the bound and http off loopback are FILE_UNREADABLE', () => {
    const [missing] = problemsOf(() => fetchDocument(`${base}/nope.yaml?token=s3cret`, 1 << 20));
    assert.equal(missing!.code, 'FILE_UNREADABLE');
    assert.match(missing!.message, /HTTP 404/);
    assert.doesNotMatch(missing!.message, /s3cret/);
    assert.equal(problemsOf(() => fetchDocument(`${base}/moved`, 1 << 20))[0]!.code, 'FILE_UNREADABLE');
    assert.match(problemsOf(() => fetchDocument(`${base}/petstore.yaml`, 100))[0]!.message, /larger than 100 bytes/);
    assert.match(problemsOf(() => fetchDocument('http://192.0.2.1/api.yaml', 1 << 20))[0]!.message, /only https/);
  });
});
