// `fastsvc import openapi` takes the source's credential and headers (issue 38, points 10 and 12), so
// imported tools call the API the way the source does. The Petstore 3.0 behind Prism (--errors: a
// request that breaks the document, or lacks the credential its security asks for, is refused):
// one `svc serve` with an `openapi` source whose `auth` sends the document's api_key header and whose
// `headers` add X-Trace-Id, one with the tools `fastsvc import openapi --auth … --header …` printed
// (the pet and store operations; getPetById and getInventory accept the api_key credential).
// Asserted: the printed tools carry the credential and header as ${VAR} references (no value, no
// `$${`), both list the same tools — deletePet without an api_key argument, the credential sets that
// header (the document declares it: point 10) — and their calls reach Prism as the same request,
// api_key and X-Trace-Id included, which it accepts; an import without the credential is refused by
// Prism (what the flags fix); a secret written in clear in --auth is refused before anything is printed.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parse } from 'yaml';
import { childEnv, ROOT, run } from '../helpers/cli.js';
import { startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type Exchange, type RecordingProxy } from '../helpers/recording-proxy.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { connectSdk } from '../helpers/sdk-clients.js';

const DOC = 'test/fixtures/openapi/petstore-3.0.yaml';
const HEAD = `version: 1\nauth:\n  token: \${SVC_TOKEN}\n`;
const AUTH = '{"static": {"header": "api_key", "value": "${PET_KEY}"}}';

describe('fastsvc import openapi --auth --header: imported tools call the API as the source does', function () {
  this.timeout(120_000);
  const token = secret(randomBytes(24).toString('base64url'));
  const petKey = secret(`pet-key-${randomBytes(12).toString('hex')}`);
  const env = { SVC_TOKEN: token, PET_KEY: petKey, TRACE: 'trace-42' };
  let prism: Prism;
  let proxy: RecordingProxy;
  let viaSource: Served;
  let viaImport: Served;
  let imported: string;

  before(async () => {
    prism = await startPrism(join(ROOT, DOC));
    proxy = await recordingProxy(prism.url);
    const out = await run(['import', 'openapi', DOC, '--base-url', proxy.url, '--include-tag', 'pet', '--include-tag', 'store', '--auth', AUTH, '--header', 'X-Trace-Id: ${TRACE}'], { env: childEnv() });
    assert.equal(out.code, 0, out.stderr);
    imported = out.stdout;
    const source = `openapi:\n  - name: pets\n    document: pets.yaml\n    base_url: ${proxy.url}\n    include: { tags: [pet, store] }\n    auth: ${AUTH}\n    headers: { X-Trace-Id: "\${TRACE}" }\n`;
    [viaSource, viaImport] = await Promise.all([
      serveManifest(`${HEAD}name: via-source\n${source}`, { copy: { 'pets.yaml': DOC }, env }),
      serveManifest(`${HEAD}name: via-import\n${imported}`, { env }),
    ]);
  });
  after(async () => {
    await Promise.all([viaSource?.stop(), viaImport?.stop()]);
    await proxy?.close();
    await prism?.stop();
  });

  it('prints the credential and the header as ${VAR} references, never their values', () => {
    const tools = (parse(imported) as { tools: { name: string; http: { auth?: unknown; headers?: Record<string, string> } }[] }).tools;
    const del = tools.find((t) => t.name === 'deletePet')!;
    assert.deepEqual(del.http.auth, { static: { header: 'api_key', value: '${PET_KEY}' } });
    assert.equal(del.http.headers!['X-Trace-Id'], '${TRACE}');
    assert.ok(!imported.includes(petKey) && !imported.includes('$${'), imported.slice(0, 400));
  });

  it('lists the same tools through both servers; deletePet takes no api_key (the credential sets it)', async () => {
    const list = async (srv: Served) => {
      const c = await connectSdk('sdk 2.x (2026-07-28)', srv.url, token);
      try {
        return await c.listAll();
      } finally {
        await c.close();
      }
    };
    const [a, b] = await Promise.all([list(viaSource), list(viaImport)]);
    assert.deepEqual(b, a);
    assert.deepEqual(Object.keys(a.find((t) => t.name === 'deletePet')!.inputSchema.properties as object), ['petId']);
  });

  it('calls through either server reach Prism as the same request, credential and header included, and are accepted', async () => {
    const via = async (srv: Served) => {
      const c = await connectSdk('sdk 2.x (2026-07-28)', srv.url, token);
      const sent: Exchange[] = [];
      try {
        for (const [name, args] of [['getPetById', { petId: 7 }], ['getInventory', {}]] as const) {
          const before = proxy.seen.length;
          const out = await c.call(name, args);
          assert.ok('result' in out && out.result.isError !== true, `${srv.url} ${name}: ${JSON.stringify(out).slice(0, 400)}`);
          assert.equal(proxy.seen.length, before + 1);
          sent.push(proxy.seen.at(-1)!);
        }
      } finally {
        await c.close();
      }
      return sent;
    };
    const shape = (x: Exchange) => ({ request: `${x.method} ${x.url}`, key: x.headers.api_key, trace: x.headers['x-trace-id'], status: x.status, violations: x.answerHeaders['sl-violations'] });
    const a = await via(viaSource);
    const b = await via(viaImport);
    assert.deepEqual(b.map(shape), a.map(shape));
    for (const x of a) {
      assert.equal(x.headers.api_key, petKey);
      assert.equal(x.headers['x-trace-id'], 'trace-42');
      assert.equal(x.status, 200, `${x.method} ${x.url}: ${x.answer.slice(0, 200)}`);
    }
  });

  it('without the credential, the imported tool\'s call is refused by Prism (401)', async () => {
    const out = await run(['import', 'openapi', DOC, '--base-url', proxy.url, '--include-operation', 'getPetById'], { env: childEnv() });
    assert.equal(out.code, 0, out.stderr);
    const bare = await serveManifest(`${HEAD}name: bare\n${out.stdout}`, { env });
    try {
      const c = await connectSdk('sdk 2.x (2026-07-28)', bare.url, token);
      try {
        const before = proxy.seen.length;
        await c.call('getPetById', { petId: 7 });
        assert.equal(proxy.seen.at(-1)!.status, 401);
        assert.equal(proxy.seen.length, before + 1);
      } finally {
        await c.close();
      }
    } finally {
      await bare.stop();
    }
  });

  it('a secret written in clear in --auth, or a malformed one, is refused before anything is printed', async () => {
    const clear = await run(['import', 'openapi', DOC, '--auth', '{"static": {"bearer": "sk-live-0123456789"}}'], { env: childEnv() });
    assert.equal(clear.code, 2);
    assert.equal(clear.stdout, '');
    assert.match(clear.stderr, /--auth: static\.bearer is written in clear; write \$\{VAR\} or use bearer_file/);
    assert.doesNotMatch(clear.stderr, /sk-live/);
    const header = await run(['import', 'openapi', DOC, '--header', 'no colon'], { env: childEnv() });
    assert.equal(header.code, 2);
    assert.match(header.stderr, /--header: "no colon" is not "Name: value"/);
    const bad = await run(['import', 'openapi', DOC, '--auth', '{"static": {"bearer": "${T}"}, "oops": 1}'], { env: childEnv() });
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /--auth: must NOT have more than 1 properties/);
    const both = await run(['import', 'openapi', DOC, '--auth', '{"static": {"bearer": "${T}", "header": "X-Key"}}'], { env: childEnv() });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--auth static: static takes a bearer token or a header with its value, not both/);
  });
});
