// An `openapi` source served by the real `svc serve`: the MCP SDK client (1.x) lists the Petstore
// 3.0 operations as tools with their input schemas, output schemas and annotations; `fastsvc
// import openapi` (the built command) prints tools that, served, list exactly the same; `fastsvc
// validate` names the skipped operation as a warning at the source's line; hot reload re-expands
// the source on an edit of the manifest and on an edit of the document alone (both watched),
// once per edit; a document at a URL (sha256 pinned) is fetched at start and not again on a
// reload that keeps the sources.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { run, ROOT } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'openapi-e2e-token-0123456789';
const DOC = join(ROOT, 'test/fixtures/openapi/petstore-3.0.yaml');
const HEAD = `version: 1\nname: petstore\nauth:\n  token: \${SVC_TOKEN}\nprofile:\n  scopes: [pets.read, pets.write]\n`;
const SOURCE = `openapi:\n  - name: petstore\n    document: petstore-3.0.yaml\n    base_url: http://127.0.0.1:9/api/v3\n    required_scopes: [pets.read]\n`;

async function listTools(url: string): Promise<Tool[]> {
  const client = new Client({ name: 'openapi-e2e', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}

describe('openapi e2e: the Petstore through svc serve and the MCP SDK client', () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.stop();
    served = undefined;
  });

  it('lists every callable operation as a tool with its schemas and annotations', async () => {
    served = await serveManifest(HEAD + SOURCE, { copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' }, env: { SVC_TOKEN: TOKEN } });
    const tools = new Map((await listTools(served.url)).map((t) => [t.name, t]));
    assert.equal(tools.size, 18);
    assert.ok(!tools.has('uploadFile'));
    const get = tools.get('getPetById')!;
    assert.deepEqual(get.inputSchema.required, ['petId']);
    assert.equal((get.inputSchema.properties!.petId as { type: string }).type, 'integer');
    assert.equal(get.outputSchema?.type, 'object');
    assert.deepEqual(get.outputSchema?.required, ['name', 'photoUrls']);
    assert.equal(get.annotations?.readOnlyHint, true);
    assert.equal(tools.get('deletePet')!.annotations?.destructiveHint, true);
    assert.equal(tools.get('updatePet')!.annotations?.idempotentHint, true);
    assert.deepEqual(tools.get('addPet')!.inputSchema.required, ['body']);
    assert.equal(get.title, 'Find pet by ID.');
  });

  it('the imported tools, served, list exactly as the openapi source does', async () => {
    const imported = await run(['import', 'openapi', DOC, '--base-url', 'http://127.0.0.1:9/api/v3', '--required-scope', 'pets.read']);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /warning: OPENAPI_SKIPPED: POST \/pet\/\{petId\}\/uploadImage \(operationId uploadFile\)/);
    served = await serveManifest(HEAD + SOURCE, { copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' }, env: { SVC_TOKEN: TOKEN } });
    const viaSource = await listTools(served.url);
    await served.stop();
    served = await serveManifest(HEAD + imported.stdout, { env: { SVC_TOKEN: TOKEN } });
    const viaImport = await listTools(served.url);
    assert.equal(viaImport.length, 18);
    assert.deepEqual(viaImport, viaSource);
  });

  it('validate names the skipped operation as a warning at the source\'s document line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oa-validate-'));
    try {
      copyFileSync(DOC, join(dir, 'petstore-3.0.yaml'));
      writeFileSync(join(dir, 'svc.yaml'), HEAD + SOURCE);
      const r = await run(['validate', join(dir, 'svc.yaml')], { env: { ...process.env, SVC_TOKEN: TOKEN } });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /svc\.yaml:9:15: warning: OPENAPI_SKIPPED: openapi petstore: POST \/pet\/\{petId\}\/uploadImage \(operationId uploadFile\) is not served: /);
      assert.match(r.stdout, /ok — 18 tools/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validate gives the advice about a source\'s tools once per source line: SCOPE_ADVISED, TASK_ADVISED', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oa-advice-'));
    try {
      copyFileSync(DOC, join(dir, 'petstore-3.0.yaml'));
      const open = `server:\n  host: 0.0.0.0\nroutes:\n  public: [/mcp]\n  protected: [/svc, /ws]\n`;
      const source = `openapi:\n  - name: petstore\n    document: petstore-3.0.yaml\n    include: { tags: [pet] }\n    scope_map: { "write:pets": [pets.write] }\n    overrides:\n      deletePet: { required_scopes: [pets.write], task: required }\n`;
      writeFileSync(join(dir, 'svc.yaml'), HEAD + open + source);
      const r = await run(['validate', join(dir, 'svc.yaml'), '--json'], { env: { ...process.env, SVC_TOKEN: TOKEN } });
      const out = JSON.parse(r.stdout) as { valid: boolean; warnings: { code: string; line: number; message: string }[] };
      assert.equal(out.valid, true, r.stdout);
      const byCode = (code: string) => out.warnings.filter((w) => w.code === code);
      // Every pet operation but deletePet maps write:pets, so needs pets.write and writes no task: said once, at the source.
      assert.equal(byCode('TASK_ADVISED').length, 1, JSON.stringify(out.warnings));
      assert.equal(byCode('TASK_ADVISED')[0]!.line, 13);
      assert.match(byCode('TASK_ADVISED')[0]!.message, /and 5 more tools made by the same line/);
      assert.equal(byCode('SCOPE_ADVISED').length, 0, 'every tool has scopes (scope_map)');
      assert.equal(byCode('OPENAPI_SKIPPED').length, 1);
      writeFileSync(join(dir, 'svc.yaml'), HEAD + open + source.replace(/    scope_map.*\n/, ''));
      const r2 = await run(['validate', join(dir, 'svc.yaml'), '--json'], { env: { ...process.env, SVC_TOKEN: TOKEN } });
      const out2 = JSON.parse(r2.stdout) as typeof out;
      const scope = out2.warnings.filter((w) => w.code === 'SCOPE_ADVISED');
      // Without scopes, the POST, PUT and DELETE operations but deletePet (whose override gives scopes) may change something.
      assert.equal(scope.length, 1, JSON.stringify(out2.warnings));
      assert.equal(scope[0]!.line, 13);
      assert.match(scope[0]!.message, /and 2 more tools made by the same line/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reload re-expands: a manifest edit, then a document edit, each watched and reloaded once', async () => {
    const only = (tag: string) => HEAD + SOURCE + `    include: { tags: [${tag}] }\n`;
    served = await serveManifest(only('store'), { copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' }, env: { SVC_TOKEN: TOKEN, LOG_LEVEL: 'debug' } });
    const names = async () => (await listTools(served!.url)).map((t) => t.name).sort().join(' ');
    assert.equal(await names(), 'deleteOrder getInventory getOrderById placeOrder');
    served.write(only('pet'));
    const pets = 'addPet deletePet findPetsByStatus findPetsByTags getPetById updatePet updatePetWithForm';
    await waitFor(async () => ((await names()) === pets ? true : undefined), 'the pet tools after the edit');
    const doc = join(served.dir, 'petstore-3.0.yaml');
    writeFileSync(doc, readFileSync(doc, 'utf8').replace('summary: Find pet by ID.', 'summary: Look a pet up.'));
    await waitFor(async () => ((await listTools(served!.url)).find((t) => t.name === 'getPetById')?.title === 'Look a pet up.' ? true : undefined), 'the new summary after the document edit');
    await waitFor(() => (served!.logs().filter((l) => l.event === 'config.reloaded').length === 2 ? true : undefined), 'two reload log lines');
    assert.equal(served.logs().filter((l) => l.event === 'watch.changed').length, 2, 'each watcher saw one change and reloaded once');
    assert.equal(served.logs().filter((l) => l.event === 'openapi.document_changed').length, 1);
  });
  it('a document at a URL (sha256 pinned) is fetched at start and served; a reload that keeps the sources fetches nothing', async () => {
    const bytes = readFileSync(DOC);
    let fetched = 0;
    const host = createServer((req, res) => {
      if (req.url !== '/petstore.yaml') return void res.writeHead(404).end();
      fetched++;
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(bytes);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/petstore.yaml`;
      const sha = createHash('sha256').update(bytes).digest('hex');
      const manifest = (name: string) => `version: 1\nname: ${name}\nauth:\n  token: \${SVC_TOKEN}\nprofile:\n  scopes: [pets.read]\n`
        + `openapi:\n  - name: petstore\n    document: ${url}\n    sha256: ${sha}\n    base_url: http://127.0.0.1:9/api/v3\n    required_scopes: [pets.read]\n    include: { tags: [store] }\n`;
      served = await serveManifest(manifest('first'), { env: { SVC_TOKEN: TOKEN } });
      assert.equal((await listTools(served.url)).map((t) => t.name).sort().join(' '), 'deleteOrder getInventory getOrderById placeOrder');
      assert.equal(fetched, 1);
      served.write(manifest('second'));
      await waitFor(() => (served!.logs().some((l) => l.event === 'config.reloaded') ? true : undefined), 'the reload');
      assert.equal((await listTools(served.url)).length, 4);
      assert.equal(fetched, 1, 'the pinned document was not fetched again');
    } finally {
      host.closeAllConnections();
      await new Promise((r) => host.close(r));
    }
  });
});
