// examples/apps as its README runs it: `svc validate` passes it as written (with its two token
// variables set), and `svc serve` serves it in place. The MCP SDK 1.x client (MCP 2025-11-25)
// that declares io.modelcontextprotocol/ui is offered the three tools with their _meta.ui (the
// two views' URIs, orders.cancel app-only), lists both views as resources of type
// text/html;profile=mcp-app, and reads the orders view as the file's exact bytes with its
// _meta.ui and the customer card as a page that loads nothing from elsewhere; one that does not
// declare it sees neither the app-only tool nor any _meta.ui, and cannot call orders.cancel.
// A token without orders.read (the views' default required scope, from the tools naming them)
// is refused the view at read time; a view file edited on disk is read afresh. A copy of it with three view mistakes gets one
// FILE:LINE:COL: CODE line from `svc validate` for each, at the value in question.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT, childEnv, run } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const FILE = 'examples/apps/svc.yaml';
const MIME = 'text/html;profile=mcp-app';
const UI = 'io.modelcontextprotocol/ui';
const OPERATOR = secret(randomBytes(24).toString('base64url'));
const VIEWER = secret(randomBytes(24).toString('base64url'));
const OUTSIDER = secret(randomBytes(24).toString('base64url'));
const ENV = { SVC_TOKEN: OPERATOR, VIEWER_TOKEN: VIEWER };

async function client(srv: Served, token: string, apps: boolean): Promise<Client> {
  const c = new Client({ name: 'examples-apps', version: '1.0.0' }, { capabilities: apps ? { extensions: { [UI]: { mimeTypes: [MIME] } } } : {} });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
}

const uiOf = (o: { _meta?: Record<string, unknown> } | undefined) => o?._meta?.ui as Record<string, unknown> | undefined;

describe('examples/apps: validated and served as its README says', function () {
  this.timeout(60_000);

  it('svc validate passes it as written', async () => {
    const r = await run(['validate', FILE], { env: childEnv(ENV) });
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), `${FILE}: ok — 3 tools, 2 resources, 0 prompts`);
  });

  it('svc validate points at each view mistake in a broken copy: the path out of the folder, the CSP entry with a path, the view scope no tool requires', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-apps-broken-'));
    try {
      cpSync(join(ROOT, 'examples/apps'), dir, { recursive: true });
      const text = readFileSync(join(ROOT, FILE), 'utf8')
        .replace('      view: views/orders.html\n', '      view: ../orders.html\n')
        .replace('    ui:\n      template: |', '    ui:\n      csp: { resource_domains: [https://cdn.example.com/lib] }\n      required_scopes: [orders.write]\n      template: |');
      const file = join(dir, 'svc.yaml');
      writeFileSync(file, text);
      /** FILE:LINE:COL of `value` on the line containing `line`. */
      const at = (line: string, value: string) => {
        const lines = text.split('\n');
        const i = lines.findIndex((l) => l.includes(line));
        assert.ok(i >= 0, line);
        return `${file}:${i + 1}:${lines[i]!.indexOf(value) + 1}`;
      };
      const r = await run(['validate', file], { env: childEnv(ENV) });
      assert.equal(r.code, 1);
      const codes = r.stderr.trim().split('\n').map((l) => l.split(': ').slice(0, 2).join(': '));
      assert.deepEqual(codes, [
        `${at('view: ../orders.html', '../orders.html')}: VIEW_INVALID`,
        `${at('resource_domains: [https://cdn.example.com/lib]', 'https://cdn.example.com/lib')}: VIEW_CSP_INVALID`,
        `${at('required_scopes: [orders.write]', 'orders.write')}: VIEW_SCOPE_EXCEEDS_TOOL`,
      ], r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('served in place', () => {
    let srv: Served;
    before(async () => {
      srv = await serveManifest({ file: FILE }, { env: ENV });
    });
    after(() => srv?.stop());

    it('a client that declares the extension (SDK 1.x, 2025-11-25) gets the views, their listing and their contents', async () => {
      const c = await client(srv, OPERATOR, true);
      const viewer = await client(srv, VIEWER, true);
      try {
        assert.equal(c.getServerCapabilities()?.extensions?.[UI] !== undefined, true, JSON.stringify(c.getServerCapabilities()));
        const { tools } = await c.listTools();
        const byName = new Map(tools.map((t) => [t.name, t]));
        assert.deepEqual([...byName.keys()].sort(), ['customers.get', 'orders.cancel', 'orders.list']);
        assert.equal(uiOf(byName.get('orders.list'))?.resourceUri, 'ui://views/orders.html');
        assert.equal(uiOf(byName.get('customers.get'))?.resourceUri, 'ui://customers.get');
        assert.deepEqual(uiOf(byName.get('orders.cancel'))?.visibility, ['app']);
        assert.deepEqual((await viewer.listTools()).tools.map((t) => t.name).sort(), ['customers.get', 'orders.list'], 'the viewer is not offered a tool it may not call');

        const { resources } = await c.listResources();
        for (const uri of ['ui://views/orders.html', 'ui://customers.get']) {
          assert.equal(resources.find((r) => r.uri === uri)?.mimeType, MIME, `${uri} listed: ${JSON.stringify(resources)}`);
        }

        // The viewer (orders.read only) reads both views: their default scopes are the tools' own.
        const orders = (await viewer.readResource({ uri: 'ui://views/orders.html' })).contents[0]!;
        assert.equal(orders.mimeType, MIME);
        assert.equal('text' in orders && orders.text, readFileSync(join(ROOT, 'examples/apps/views/orders.html'), 'utf8'));
        assert.deepEqual(uiOf(orders), { prefersBorder: true });

        const card = (await viewer.readResource({ uri: 'ui://customers.get' })).contents[0]!;
        assert.equal(card.mimeType, MIME);
        const html = 'text' in card ? card.text : '';
        assert.match(html, /^<!DOCTYPE html>/i);
        assert.ok(html.includes('customer'), 'the page carries the template');
        assert.doesNotMatch(html, /\b(src|href|action)\s*=\s*["']?(https?:)?\/\//i, 'the page loads nothing from elsewhere');
      } finally {
        await c.close();
        await viewer.close();
      }
    });

    it('a client that does not declare it sees no app-only tool and no _meta.ui, and cannot call orders.cancel', async () => {
      const c = await client(srv, OPERATOR, false);
      try {
        const { tools } = await c.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['customers.get', 'orders.list']);
        for (const t of tools) assert.equal(uiOf(t), undefined, `${t.name}: ${JSON.stringify(t._meta)}`);
        const refused = await c.callTool({ name: 'orders.cancel', arguments: { id: 'A-1001' } }).then((r) => JSON.stringify(r), (e: Error) => e.message);
        assert.match(refused, /no tool named orders\.cancel/, refused);
        const listed = (await c.callTool({ name: 'orders.list', arguments: {} })).structuredContent as { orders: { id: string; status: string }[] };
        assert.equal(listed.orders.find((o) => o.id === 'A-1001')?.status, 'open', 'the refused cancel changed nothing');
        const { resources } = await c.listResources();
        for (const r of resources) assert.equal(uiOf(r), undefined, `${r.uri}: ${JSON.stringify(r._meta)}`);
      } finally {
        await c.close();
      }
    });
  });

  describe('a copy with a token that lacks orders.read', () => {
    let srv: Served;
    before(async () => {
      const m = parse(readFileSync(join(ROOT, FILE), 'utf8')) as { auth: { tokens: unknown[] } };
      m.auth.tokens.push({ name: 'outsider', token: '${OUTSIDER_TOKEN}', scopes: ['orders.write'] });
      srv = await serveManifest(m as unknown as Record<string, unknown>, {
        copy: { views: 'examples/apps/views', handlers: 'examples/apps/handlers' },
        env: { ...ENV, OUTSIDER_TOKEN: OUTSIDER },
      });
    });
    after(() => srv?.stop());

    it('reading either view is refused at read time, naming orders.read', async () => {
      const c = await client(srv, OUTSIDER, true);
      try {
        for (const uri of ['ui://views/orders.html', 'ui://customers.get']) {
          const refused = await c.readResource({ uri }).then((r) => `read: ${JSON.stringify(r).slice(0, 200)}`, (e: Error) => e.message);
          assert.match(refused, /insufficient[ _]scope/i, `${uri}: ${refused}`);
          assert.match(refused, /orders\.read/, `${uri}: ${refused}`);
        }
      } finally {
        await c.close();
      }
    });

    it('a view file edited on disk is served as it now is at the next read, without a reload', async () => {
      const c = await client(srv, VIEWER, true);
      try {
        const file = join(srv.dir, 'views', 'orders.html');
        const edited = readFileSync(file, 'utf8').replace('<title>Orders</title>', '<title>Orders (edited)</title>');
        assert.ok(edited.includes('(edited)'));
        writeFileSync(file, edited);
        const read = (await c.readResource({ uri: 'ui://views/orders.html' })).contents[0]!;
        assert.equal('text' in read && read.text, edited);
        assert.deepEqual(uiOf(read), { prefersBorder: true });
      } finally {
        await c.close();
      }
    });
  });
});
