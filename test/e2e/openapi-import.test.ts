// `fastsvc import openapi DOC [filters] > tools.yaml` as operators run it (the built command, its stdout kept as a
// file), then served: for the Petstores (3.0, 3.1, 2.0, each with other filters and naming) and GitHub's whole
// description, one real `svc serve` with the `openapi:` source and one with the imported `tools:` list, side by
// side. Asserted: tools/list, every page, is the same on both (names, titles, descriptions, input and output
// schemas, annotations, in the same order) for the MCP SDK client 2.x — and for 1.x on the Petstores; the imported
// output says what it skipped; and for Petstore 3.0, calls through either server reach Prism as the same request
// (method, path and query, body, content type) and are accepted by it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parse } from 'yaml';
import { childEnv, ROOT, run } from '../helpers/cli.js';
import { startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type Exchange, type RecordingProxy } from '../helpers/recording-proxy.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { connectSdk, SDK_CLIENTS, type SdkClient } from '../helpers/sdk-clients.js';

type Json = Record<string, unknown>;
const FIXTURES = 'test/fixtures/openapi';
const GITHUB = 'node_modules/@octokit/openapi/generated/api.github.com.json';

interface Doc {
  label: string;
  /** The document, relative to the repository root. */
  file: string;
  /** The source's fields beyond name/document/base_url, and the import flags that say the same. */
  source: Json;
  flags: string[];
  /** Skipped operations the import's output must name. */
  skipped: string[];
  clients: readonly SdkClient[];
}

const DOCS: Doc[] = [
  {
    label: 'Petstore 3.0 (include by tag, a required scope)', file: `${FIXTURES}/petstore-3.0.yaml`,
    source: { include: { tags: ['pet', 'store'] }, required_scopes: ['api.use'] },
    flags: ['--include-tag', 'pet', '--include-tag', 'store', '--required-scope', 'api.use'],
    skipped: ['uploadFile'], clients: SDK_CLIENTS,
  },
  {
    label: 'Petstore 3.1 (naming by tag and operationId)', file: `${FIXTURES}/petstore-3.1.yaml`,
    source: { naming: '{tag}.{operationId}', required_scopes: ['api.use'] },
    flags: ['--naming', '{tag}.{operationId}', '--required-scope', 'api.use'],
    skipped: [], clients: SDK_CLIENTS,
  },
  {
    label: 'Petstore 2.0 (exclude a method and a path glob)', file: `${FIXTURES}/petstore-2.0.json`,
    source: { exclude: { methods: ['DELETE'], paths: ['/user/*'] }, required_scopes: ['api.use'] },
    flags: ['--exclude-method', 'DELETE', '--exclude-path', '/user/*', '--required-scope', 'api.use'],
    skipped: ['uploadFile'], clients: SDK_CLIENTS,
  },
  {
    // The 1.x client compiles a validator per output schema while listing (seconds per page of GitHub's): 2.x only.
    label: 'GitHub\'s REST description, whole', file: GITHUB,
    source: { required_scopes: ['api.use'] }, flags: ['--required-scope', 'api.use'],
    skipped: ['markdown/render-raw', 'repos/upload-release-asset'], clients: ['sdk 2.x (2026-07-28)'],
  },
];

const HEAD = { version: 1, server: { host: '127.0.0.1' }, profile: { scopes: ['api.use'] }, auth: { token: '${SVC_TOKEN}' } };

for (const doc of DOCS) {
  describe(`fastsvc import openapi, served, lists what the openapi source lists: ${doc.label}`, function () {
    this.timeout(180_000);
    const token = secret(randomBytes(24).toString('base64url'));
    const env = { SVC_TOKEN: token };
    let prism: Prism | undefined;
    let proxy: RecordingProxy | undefined;
    let viaSource: Served;
    let viaImport: Served;
    let imported: string;
    let stderr: string;
    const petstore30 = doc.file.endsWith('petstore-3.0.yaml');

    before(async () => {
      // Petstore 3.0's calls are compared at Prism; the others need only a base URL nobody calls.
      if (petstore30) {
        prism = await startPrism(join(ROOT, doc.file));
        proxy = await recordingProxy(prism.url);
      }
      const baseUrl = proxy?.url ?? 'http://127.0.0.1:9/api';
      const out = await run(['import', 'openapi', doc.file, '--base-url', baseUrl, ...doc.flags], { env: childEnv() });
      assert.equal(out.code, 0, out.stderr);
      imported = out.stdout;
      stderr = out.stderr;
      const ext = doc.file.slice(doc.file.lastIndexOf('.'));
      [viaSource, viaImport] = await Promise.all([
        serveManifest({ ...HEAD, name: 'via-source', openapi: [{ name: 'api', document: `api${ext}`, base_url: baseUrl, ...doc.source }] }, { copy: { [`api${ext}`]: doc.file }, env }),
        serveManifest(`${Object.entries({ ...HEAD, name: 'via-import' }).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')}\n${imported}`, { env }),
      ]);
    });
    after(async () => {
      await Promise.all([viaSource?.stop(), viaImport?.stop()]);
      await proxy?.close();
      await prism?.stop();
    });

    it('the import names what it skipped, on stderr and in the output', () => {
      const tools = (parse(imported) as { tools: Json[] }).tools;
      assert.ok(tools.length > 0);
      for (const n of doc.skipped) {
        assert.match(stderr, new RegExp(`OPENAPI_SKIPPED: .*operationId ${n}\\b`));
        assert.match(imported, new RegExp(`^# skipped: .*operationId ${n}\\b`, 'm'));
      }
      if (!doc.skipped.length) assert.doesNotMatch(stderr, /OPENAPI_SKIPPED/);
    });

    for (const kind of doc.clients) {
      it(`${kind}: tools/list, every page, is the same through both servers`, async () => {
        const list = async (srv: Served) => {
          const c = await connectSdk(kind, srv.url, token);
          try {
            return await c.listAll();
          } finally {
            await c.close();
          }
        };
        const [a, b] = await Promise.all([list(viaSource), list(viaImport)]);
        assert.ok(a.length > 0);
        assert.deepEqual(b.map((t) => t.name), a.map((t) => t.name));
        assert.deepEqual(b, a);
        if (doc.file === GITHUB) assert.ok(a.length > 1000, `${a.length} tools`);
        if (doc.source.exclude) {
          // Petstore 2.0's exclude: only the DELETEs under /user/* are left out.
          const names = a.map((t) => t.name);
          assert.ok(!names.includes('deleteUser') && names.includes('deleteOrder') && names.includes('getUserByName'), names.join(', '));
        }
      });
    }

    if (petstore30) {
      it('calls through either server reach Prism as the same request, which it accepts', async () => {
        // The store's operations: the document asks no credential for them (neither server has one to send).
        const calls: [string, Json][] = [
          ['getOrderById', { orderId: 5 }],
          ['placeOrder', { body: { id: 1, petId: 7, quantity: 1, status: 'placed' } }],
          ['deleteOrder', { orderId: 5 }],
        ];
        const via = async (srv: Served) => {
          const c = await connectSdk('sdk 2.x (2026-07-28)', srv.url, token);
          const sent: Exchange[] = [];
          try {
            for (const [name, args] of calls) {
              const before = proxy!.seen.length;
              const out = await c.call(name, args);
              assert.ok('result' in out && out.result.isError !== true, `${srv.url} ${name}: ${JSON.stringify(out).slice(0, 500)}`);
              assert.equal(proxy!.seen.length, before + 1);
              sent.push(proxy!.seen.at(-1)!);
            }
          } finally {
            await c.close();
          }
          return sent;
        };
        const shape = (x: Exchange) => ({ request: `${x.method} ${x.url}`, body: x.body, type: x.headers['content-type'], accept: x.headers.accept, violations: x.answerHeaders['sl-violations'] });
        const a = await via(viaSource);
        const b = await via(viaImport);
        assert.deepEqual(b.map(shape), a.map(shape));
        for (const x of a) assert.equal(x.answerHeaders['sl-violations'], undefined, `${x.method} ${x.url}: ${x.answer.slice(0, 200)}`);
      });
    }
  });
}

/** The import's output is what the README shows operators: a `tools:` list with a header comment. */
describe('fastsvc import openapi writes a paste-able tools list', () => {
  it('starts with a comment naming the command and the tools count, then `tools:`', async () => {
    const out = await run(['import', 'openapi', `${FIXTURES}/petstore-2.0.json`, '--include-operation', 'getPetById'], { env: childEnv() });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^# 1 tools? written by fastsvc import openapi /);
    const parsed = parse(out.stdout) as { tools: Json[] };
    assert.deepEqual(parsed.tools.map((t) => t.name), ['getPetById']);
    assert.deepEqual((parsed.tools[0]!.http as Json).url, 'https://petstore.swagger.io/v2/pet/{{petId}}');
  });
});
