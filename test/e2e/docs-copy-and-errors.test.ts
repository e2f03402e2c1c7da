// What a person copies from the pages and what a model reads from a refusal, against the
// real `svc serve` (examples/bearer-tokens copied to a temp dir, plus one tool whose example
// has every character a shell or HTML could trip on): the curl command /docs shows for a
// tool, unescaped from the HTML and run by bash with TOKEN set, returns the tool's result;
// descriptions render `inline code`; the root page says where an MCP client connects and how
// it authenticates; the MCP SDK client sees why its arguments were refused.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { snippetOf } from '../helpers/docs-page.js';

const run = promisify(execFile);
const TRICKY = `it's <b>"$HOME"</b> & \`date\``;

describe('e2e: /docs commands run as pasted; refusals say why', function () {
  this.timeout(30_000);
  const tokens = { admin: secret(randomBytes(18).toString('base64url')), ci: secret(randomBytes(18).toString('base64url')), reader: secret(randomBytes(18).toString('base64url')) };
  let dir: string;
  let svc: Served;

  before(async () => {
    const m = parse(readFileSync(join(ROOT, 'examples', 'bearer-tokens', 'svc.yaml'), 'utf8'));
    m.tools.push({
      name: 'echo.say',
      description: 'Says `text` back <verbatim>.',
      input_schema: { type: 'object', properties: { text: { type: 'string', examples: [TRICKY] } }, required: ['text'], additionalProperties: false },
      required_scopes: ['status.read'],
      template: '{{text}}',
    });
    svc = await serveManifest(m, { files: { 'reader.token': `${tokens.reader}\n` }, env: { ADMIN_TOKEN: tokens.admin, CI_TOKEN: tokens.ci } });
    dir = svc.dir;
  });
  after(() => svc?.stop());

  const bash = (cmd: string, token: string) => run('/bin/bash', ['-c', cmd], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_TOKEN: token } });

  it('each tool’s curl command, copied from /docs and run with $SVC_TOKEN set, returns the tool’s result', async () => {
    const html = await (await fetch(`${svc.url}/docs`)).text();
    const status = snippetOf(html, 'status.get');
    assert.ok(status.includes(`'${svc.url}/svc/tools/status.get'`), 'the server’s own base URL');
    assert.ok(status.includes('"Authorization: Bearer $SVC_TOKEN"'), 'the token in double quotes, so the shell expands it');
    assert.deepEqual(JSON.parse((await bash(status, tokens.admin)).stdout).result, 'api: healthy');
    assert.deepEqual(JSON.parse((await bash(snippetOf(html, 'deploy.start'), tokens.ci)).stdout).result, 'deploying api v1.4.2');
    assert.deepEqual(JSON.parse((await bash(snippetOf(html, 'admin.flush'), tokens.admin)).stdout).result, 'flushed');
  });

  it('/docs is built once per policy: a reload that changes a tool shows on the next page', async () => {
    const before = await (await fetch(`${svc.url}/docs`)).text();
    assert.equal(await (await fetch(`${svc.url}/docs`)).text(), before, 'the same policy, the same page');
    const original = readFileSync(join(dir, 'svc.yaml'), 'utf8');
    const m = parse(original);
    m.tools.find((t: { name: string }) => t.name === 'echo.say').description = 'Says `text` back, now reloaded.';
    writeFileSync(join(dir, 'svc.yaml'), stringify(m));
    const after = await waitFor(async () => {
      const html = await (await fetch(`${svc.url}/docs`)).text();
      return html.includes('now reloaded') ? html : undefined;
    }, 'the reloaded description on /docs', 10_000);
    assert.ok(!after.includes('back &lt;verbatim&gt;'), 'the old description is gone');
    writeFileSync(join(dir, 'svc.yaml'), original); // the other tests read the original page
    await waitFor(async () => ((await (await fetch(`${svc.url}/docs`)).text()) === before ? true : undefined), 'the original /docs again', 10_000);
  });

  it('quotes a body with a single quote, $, backticks and HTML so it reaches the tool unchanged', async () => {
    const html = await (await fetch(`${svc.url}/docs`)).text();
    assert.ok(!html.includes('<b>'), 'the example is HTML-escaped on the page');
    const out = JSON.parse((await bash(snippetOf(html, 'echo.say'), tokens.reader)).stdout);
    assert.equal(out.result, TRICKY);
  });

  it('renders `inline code` in descriptions as escaped <code>', async () => {
    const html = await (await fetch(`${svc.url}/docs`)).text();
    assert.ok(html.includes('<p>Says <code>text</code> back &lt;verbatim&gt;.</p>'), 'description with inline code');
  });

  it('the root page tells an MCP client where to connect and how to authenticate', async () => {
    const html = await (await fetch(`${svc.url}/`, { headers: { accept: 'text/html' } })).text();
    assert.ok(html.includes(`<code>${svc.url}/mcp</code>`), 'the /mcp URL');
    assert.match(html, /Auth: send <code>Authorization: Bearer &lt;token&gt;<\/code>/);
  });

  it('the MCP SDK client sees which argument was wrong and what is allowed', async () => {
    const client = new Client({ name: 'e2e', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.admin}` } } }));
    try {
      const r = await client.callTool({ name: 'status.get', arguments: { service: 'db', secret: 'never-echoed' } });
      assert.equal(r.isError, true);
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      assert.match(text, /\/service: must be equal to one of the allowed values \("api", "web", "worker"\)/);
      const errors = (r.structuredContent as { error: { errors: { path: string; message: string; params: Record<string, unknown> }[] } }).error.errors;
      assert.deepEqual(errors.find((e) => e.path === '/service')?.params, { allowedValues: ['api', 'web', 'worker'] });
      assert.ok(!JSON.stringify(r).includes('never-echoed'));
    } finally {
      await client.close();
    }
  });
});
