// A folder of files as resources through the real `svc serve`, with the MCP SDK 1.x client and /svc:
// `uri_template: docs://{+path}` with `file: docs/{{path}}` lists one template, reads a nested file by its
// path, completes the path from the folder's entries, and refuses what leaves the folder (the manifest
// beside it, .. encoded or not) or is hidden; `fastsvc validate` places a templated file without a
// uri_template, or naming a variable the template lacks, at its line.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { childEnv, PROBLEM_LINE, run } from '../helpers/cli.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret('resource-folder-token-0123456789');
const MANIFEST = `version: 1
name: folder
auth: { token: "\${SVC_TOKEN}" }
resources:
  - uri_template: "docs://{+path}"
    name: docs
    description: The documentation, by path.
    mime_type: text/markdown
    file: "docs/{{path}}"
`;

describe('a folder of files as resources (svc serve)', function () {
  this.timeout(60_000);
  let srv: Served;
  before(async () => {
    srv = await serveManifest(MANIFEST, { env: { SVC_TOKEN: TOKEN }, files: { 'docs/index.md': '# Index', 'docs/guides/setup.md': '# Setup', 'docs/guides/faq.md': '# FAQ', 'docs/.env': 'SECRET=1' } });
  });
  after(() => srv?.stop());

  it('MCP: the template is listed, a nested file read by its path, the path completed from the folder', async () => {
    const client = new Client({ name: 'folder', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    try {
      assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), ['docs://{+path}']);
      assert.deepEqual((await client.readResource({ uri: 'docs://guides/setup.md' })).contents, [{ uri: 'docs://guides/setup.md', mimeType: 'text/markdown', text: '# Setup' }]);
      const complete = (value: string) => client.complete({ ref: { type: 'ref/resource', uri: 'docs://{+path}' }, argument: { name: 'path', value } }).then((r) => r.completion.values);
      assert.deepEqual(await complete(''), ['guides/', 'index.md']);
      assert.deepEqual(await complete('guides/f'), ['guides/faq.md']);
      await assert.rejects(client.readResource({ uri: 'docs://guides/nope.md' }), /no resource docs:\/\/guides\/nope\.md/);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('/svc: nothing outside the folder, nothing hidden', async () => {
    const read = async (uri: string) => {
      const r = await fetch(`${srv.url}/svc/resources?uri=${encodeURIComponent(uri)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return `${r.status} ${((await r.json()) as { error?: { code: string } }).error?.code ?? 'ok'}`;
    };
    assert.deepEqual(await Promise.all(['docs://index.md', 'docs://../svc.yaml', 'docs://guides/%2e%2e/%2e%2e/svc.yaml', 'docs:///etc/passwd', 'docs://.env'].map(read)),
      ['200 ok', '400 INVALID_INPUT', '400 INVALID_INPUT', '400 INVALID_INPUT', '404 NOT_FOUND']);
  });

  it('validate places a templated file without a uri_template, or naming a variable the template lacks', async () => {
    const bad = `version: 1
name: folder
resources:
  - uri: docs://all
    name: all
    file: "docs/{{path}}"
  - uri_template: "notes://{id}"
    name: notes
    file: "notes/{{name}}.md"
`;
    const dir = srv.dir;
    writeFileSync(`${dir}/bad.yaml`, bad);
    const r = await run(['validate', `${dir}/bad.yaml`, '--no-io'], { env: childEnv() });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.ok(lines.every((l) => PROBLEM_LINE.test(l)), r.stderr);
    assert.match(r.stderr, /bad\.yaml:6:\d+: BACKEND_CONFIG: resource all: a file with \{\{variables\}\} needs a uri_template/);
    assert.match(r.stderr, /bad\.yaml:9:\d+: TEMPLATE_ARG_UNKNOWN: resource notes: template uses \{\{name\}\}/);
  });
});
