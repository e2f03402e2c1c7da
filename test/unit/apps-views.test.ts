// MCP Apps views declared in svc.yaml (tools[].ui), through the real manifest pipeline
// (load → validate → compile → assemble) on manifests written to a temporary folder: each
// mistake is reported with its code at the line:col of the node it concerns (never the
// wording), and a good manifest gives one ui:// resource per view with the default scopes
// (the intersection of the naming tools'), its _meta.ui, and each tool's _meta.ui.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkIO, checkManifest, loadManifest } from '../../src/manifest/index.js';
import { ManifestError, type SvcError } from '../../src/errors.js';
import { VIEW_MAX_BYTES } from '../../src/manifest/view-resources.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { explainView } from '../../src/policy/explain.js';

const HEAD = `name: shop
version: 1
description: views
auth: { token: 0123456789abcdef0123456789 }
profile:
  scopes: [orders.read, orders.write, admin]
tools:
`;
// HEAD is 7 lines: the first tool's "- name" is on line 8.

let dir: string;

function write(body: string, files: Record<string, string> = {}): string {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const file = join(dir, 'svc.yaml');
  writeFileSync(file, HEAD + body);
  return file;
}

/** The problems of compile, then (when it passes) those of the I/O checks `svc validate` runs. */
async function problems(body: string, files: Record<string, string> = {}): Promise<{ code: string; line?: number; col?: number }[]> {
  const file = write(body, files);
  const c = checkManifest(file, {});
  const all: SvcError[] = c.plan ? await checkIO(c.plan, file, c.locate) : c.problems;
  return all.map((p) => ({ code: p.code, line: p.line, col: p.col }));
}

const PAGE = '<!DOCTYPE html><html><body>orders</body></html>\n';

describe('MCP Apps views in the manifest (tools[].ui)', () => {
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'svc-views-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('serves one ui:// resource per view: shared file views once, scopes = the intersection of the naming tools\'', async () => {
    const file = write(`  - name: orders.list
    description: list
    template: "[]"
    required_scopes: [orders.read, admin]
    ui:
      view: views/orders.html
      csp: { connect_domains: ["https://api.example.com"], resource_domains: ["https://*.cdn.example.com"] }
      permissions: [clipboardWrite]
      prefers_border: false
  - name: orders.cancel
    description: cancel
    template: ok
    required_scopes: [orders.read, orders.write]
    ui:
      view: ./views/../views/orders.html
      csp: { connect_domains: ["https://api.example.com"], resource_domains: ["https://*.cdn.example.com"] }
      permissions: [clipboardWrite]
      prefers_border: false
  - name: orders.refresh
    description: refresh
    template: ok
    ui: { visibility: [app] }
  - name: greet
    description: hi
    template: hi
    ui: { template: "<p>{{input.name}}</p>" }
`, { 'views/orders.html': PAGE });
    const loaded = await loadManifest(file, {});
    try {
      const cat = buildCatalog(loaded.svc);
      const view = cat.resources.get('ui://views/orders.html')!;
      assert.ok(view, [...cat.resources.keys()].join(' '));
      assert.deepEqual(view.def.required_scopes, ['orders.read']);
      assert.equal(view.wire.mimeType, 'text/html;profile=mcp-app');
      assert.equal(view.wire._meta, undefined, 'the plain listing carries no _meta.ui');
      assert.deepEqual(view.appsWire?._meta, { ui: { csp: { connectDomains: ['https://api.example.com'], resourceDomains: ['https://*.cdn.example.com'] }, permissions: { clipboardWrite: {} }, prefersBorder: false } });
      assert.deepEqual(cat.tools.get('orders.cancel')!.appsWire?._meta, { ui: { resourceUri: 'ui://views/orders.html', visibility: ['model', 'app'] } });
      assert.deepEqual(cat.tools.get('orders.refresh')!.appsWire?._meta, { ui: { visibility: ['app'] } });
      assert.equal(cat.tools.get('orders.refresh')!.appOnly, true);
      assert.equal(cat.tools.get('orders.list')!.appOnly, false);
      assert.deepEqual(cat.resources.get('ui://greet')!.def.required_scopes, []);
      const explained = (scopes: string[]) => explainView(cat, { sub: 't', kind: 'static', scopes: new Set(scopes) }, { publicRoutes: [] }).capabilities;
      const asReader = explained(['orders.read']);
      assert.equal(asReader.find((v) => v.id === 'tool:orders.list')?.view, 'ui://views/orders.html', 'explain names the view');
      assert.ok(asReader.find((v) => v.id === 'tool:orders.refresh')?.reasons.some((r) => r.startsWith('app-only')));
      assert.ok(explained([]).find((v) => v.id === 'tool:orders.list')?.reasons.some((r) => r.includes('not readable: missing scope orders.read')));
      const ctx = {} as never;
      const [page] = await view.def.read('ui://views/orders.html', {}, ctx);
      assert.deepEqual(page, { uri: 'ui://views/orders.html', mimeType: 'text/html;profile=mcp-app', text: PAGE });
      writeFileSync(join(dir, 'views/orders.html'), '<p>changed</p>');
      assert.equal(((await view.def.read('ui://views/orders.html', {}, ctx))[0] as { text: string }).text, '<p>changed</p>', 'read on every read');
    } finally {
      loaded.dispose();
    }
  });

  it('reports each view mistake at its line:col, several on one tool', async () => {
    assert.deepEqual(await problems(`  - name: a
    description: both
    template: x
    ui: { view: v.html, template: "<p></p>" }
  - name: b
    description: outside
    template: x
    ui:
      view: ../secret.html
      csp: { frame_domains: ["https://a.example.com/x"] }
  - name: c
    description: not html
    template: x
    ui:
      view: notes.txt
  - name: d
    description: ui that says nothing
    template: x
    ui: { prefers_border: true }
`), [
      { code: 'VIEW_INVALID', line: 11, col: 9 },
      { code: 'VIEW_CSP_INVALID', line: 17, col: 30 },
      { code: 'VIEW_INVALID', line: 16, col: 13 },
      { code: 'VIEW_INVALID', line: 22, col: 13 },
      { code: 'VIEW_INVALID', line: 26, col: 9 },
    ]);
  });

  it('checks CSP entries as origins, each at its own line', async () => {
    assert.deepEqual(await problems(`  - name: a
    description: csp
    template: x
    ui:
      template: "<p></p>"
      csp:
        connect_domains:
          - https://api.example.com
          - wss://live.example.com:8443
          - https://api.example.com/v1
          - https://user:pw@api.example.com
          - https://*.example.com
        resource_domains:
          - https://*.cdn.example.com
          - https://*.com
          - ftp://files.example.com
          - https://CDN.example.com
        frame_domains: ["https://www.youtube.com/", "*"]
`), [
      { code: 'VIEW_CSP_INVALID', line: 17, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 18, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 19, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 22, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 23, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 24, col: 13 },
      { code: 'VIEW_CSP_INVALID', line: 25, col: 25 },
      { code: 'VIEW_CSP_INVALID', line: 25, col: 53 },
    ]);
  });

  it('checks view scopes: declared, and required by every tool naming the view', async () => {
    assert.deepEqual(await problems(`  - name: a
    description: scopes
    template: x
    required_scopes: [orders.read]
    ui:
      view: v.html
      required_scopes: [orders.read, orders.write]
  - name: b
    description: scopes
    template: x
    required_scopes: [orders.read, orders.write]
    ui:
      view: v.html
      required_scopes: [orders.read, orders.write]
  - name: c
    description: undeclared
    template: x
    required_scopes: [orders.read]
    ui:
      template: "<p></p>"
      required_scopes: [orders.read, nope]
`, { 'v.html': PAGE }), [
      { code: 'SCOPE_UNDECLARED', line: 28, col: 38 },
      { code: 'VIEW_SCOPE_EXCEEDS_TOOL', line: 14, col: 38 },
      { code: 'VIEW_SCOPE_EXCEEDS_TOOL', line: 28, col: 38 },
    ]);
  });

  it('refuses tools naming one view with different settings, and a view URI a resource has', async () => {
    assert.deepEqual(await problems(`  - name: a
    description: one
    template: x
    ui: { view: v.html, prefers_border: true }
  - name: b
    description: two
    template: x
    ui: { view: v.html, prefers_border: false }
  - name: c
    description: three
    template: x
    ui: { template: "<p></p>", uri: "ui://docs" }
resources:
  - name: docs
    uri: ui://docs
    text: hi
`, { 'v.html': PAGE }), [
      { code: 'VIEW_INVALID', line: 15, col: 9 },
      { code: 'VIEW_INVALID', line: 19, col: 37 },
    ]);
  });

  it('refuses a template whose placeholders escaping cannot make safe, or whose sections do not nest', async () => {
    const cases = [
      '<script>var x = "{{input.a}}"</script>',
      '<style>p { color: {{input.c}} }</style>',
      '<a onclick="go(\'{{input.a}}\')">x</a>',
      '<p style="color: {{input.c}}">x</p>',
      '<a href={{input.u}}>x</a>',
      '<p {{input.attr}}>x</p>',
      '{{#result.rows}}<li>{{name}}</li>',
      '{{#a}}{{#b}}{{/a}}{{/b}}',
    ];
    for (const tpl of cases) {
      assert.deepEqual(await problems(`  - name: a
    description: unsafe
    template: x
    ui:
      template: ${JSON.stringify(tpl)}
`), [{ code: 'VIEW_INVALID', line: 12, col: 17 }], tpl);
    }
    assert.deepEqual(await problems(`  - name: a
    description: safe
    template: x
    ui:
      template: ${JSON.stringify('<a href="{{result.url}}" title=\'{{input.t}}\'>{{result.name}}</a>{{#result.rows}}<td>{{.}}</td>{{/result.rows}}')}
`), []);
  });

  it('checks the view file when assembled: missing, a symlink out of the folder, too large, not HTML', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'svc-views-out-'));
    try {
      writeFileSync(join(outside, 'page.html'), PAGE);
      mkdirSync(join(dir, 'views'));
      symlinkSync(join(outside, 'page.html'), join(dir, 'views', 'link.html'));
      const body = `  - name: a
    description: missing
    template: x
    ui:
      view: views/missing.html
  - name: b
    description: symlink out
    template: x
    ui:
      view: views/link.html
  - name: c
    description: large
    template: x
    ui:
      view: views/large.html
  - name: d
    description: not html
    template: x
    ui:
      view: views/data.html
`;
      const files = { 'views/large.html': '<p>' + 'x'.repeat(VIEW_MAX_BYTES) + '</p>', 'views/data.html': '{"not": "html"}' };
      assert.deepEqual(await problems(body, files), [
        { code: 'FILE_UNREADABLE', line: 12, col: 13 },
        { code: 'VIEW_INVALID', line: 17, col: 13 },
        { code: 'VIEW_INVALID', line: 22, col: 13 },
        { code: 'VIEW_INVALID', line: 27, col: 13 },
      ]);
      await assert.rejects(loadManifest(join(dir, 'svc.yaml'), {}), (e: unknown) => e instanceof ManifestError && e.problems.length === 4);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
