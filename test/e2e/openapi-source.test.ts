// An `openapi` source served by the real `svc serve`: the MCP SDK client (1.x) lists the Petstore
// 3.0 operations as tools with their input schemas, output schemas and annotations; `fastsvc
// import openapi` (the built command) prints tools that, served, list exactly the same; `fastsvc
// validate` names the skipped operation as a warning at the source's line; hot reload re-expands
// the source (an edit of the manifest, watched; an edit of the document alone, on SIGHUP) and the
// watcher, which compares the manifest's own bytes, reloads once per edit.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('reload re-expands: a manifest edit (watched), then a document edit (SIGHUP); one reload each', async () => {
    const only = (tag: string) => HEAD + SOURCE + `    include: { tags: [${tag}] }\n`;
    served = await serveManifest(only('store'), { copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' }, env: { SVC_TOKEN: TOKEN, LOG_LEVEL: 'debug' } });
    const names = async () => (await listTools(served!.url)).map((t) => t.name).sort().join(' ');
    assert.equal(await names(), 'deleteOrder getInventory getOrderById placeOrder');
    served.write(only('pet'));
    const pets = 'addPet deletePet findPetsByStatus findPetsByTags getPetById updatePet updatePetWithForm';
    await waitFor(async () => ((await names()) === pets ? true : undefined), 'the pet tools after the edit');
    const doc = join(served.dir, 'petstore-3.0.yaml');
    writeFileSync(doc, readFileSync(doc, 'utf8').replace('summary: Find pet by ID.', 'summary: Look a pet up.'));
    served.proc.kill('SIGHUP');
    await waitFor(async () => ((await listTools(served!.url)).find((t) => t.name === 'getPetById')?.title === 'Look a pet up.' ? true : undefined), 'the new summary after SIGHUP');
    await waitFor(() => (served!.logs().filter((l) => l.event === 'config.reloaded').length === 2 ? true : undefined), 'two reload log lines');
    assert.equal(served.logs().filter((l) => l.event === 'watch.changed').length, 1, 'the watcher saw one change and reloaded once');
  });
});
