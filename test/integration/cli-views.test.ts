// `svc validate` and `svc explain` on MCP Apps views, through the real CLI: validate prints each
// view problem as FILE:LINE:COL: CODE: at the offending value (a view file that is missing, a CSP
// entry that is not an origin, a view scope a naming tool does not require) and exits 1, and
// counts views as resources when the manifest is good; explain names a tool's view.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, PROBLEM_LINE, run } from '../helpers/cli.js';

const GOOD = `version: 1
name: shop
description: views
routes: { public: [/healthz, /svc], protected: [] }
profile:
  scopes: [orders.read]
tools:
  - name: orders.list
    description: list
    template: "[]"
    required_scopes: [orders.read]
    ui:
      view: views/orders.html
      csp: { resource_domains: ["https://*.cdn.example.com"] }
  - name: greet
    description: hi
    template: hi
    ui: { template: "<p>{{input.name}}</p>" }
`;

/** LINE:COL (1-based) of the first occurrence of `needle` in `text`. */
function pos(text: string, needle: string): string {
  const before = text.slice(0, text.indexOf(needle)).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

describe('svc validate and svc explain with MCP Apps views (real CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cli-views-'));
    mkdirSync(join(dir, 'views'));
    writeFileSync(join(dir, 'views', 'orders.html'), '<!DOCTYPE html><p>orders</p>');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a good manifest validates, its views counted as resources; explain names the view', async () => {
    writeFileSync(join(dir, 'svc.yaml'), GOOD);
    const v = await run(['validate', 'svc.yaml'], { cwd: dir, env: childEnv() });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /ok — 2 tools, 2 resources, 0 prompts/);
    const e = await run(['explain', 'svc.yaml', '--scopes', 'orders.read', '--json'], { cwd: dir, env: childEnv() });
    assert.equal(e.code, 0, e.stderr);
    const caps = (JSON.parse(e.stdout) as { capabilities: { id: string; view?: string; visible: boolean }[] }).capabilities;
    assert.equal(caps.find((c) => c.id === 'tool:orders.list')?.view, 'ui://views/orders.html');
    assert.equal(caps.find((c) => c.id === 'resource:ui://views/orders.html')?.visible, true);
  });

  it('prints each view problem at its line:col and exits 1', async () => {
    const text = GOOD
      .replace('view: views/orders.html', 'view: views/gone.html')
      .replace('"https://*.cdn.example.com"', '"https://cdn.example.com/assets"')
      .replace('ui: { template: "<p>{{input.name}}</p>" }', 'ui: { template: "<p>{{input.name}}</p>", required_scopes: [orders.read] }');
    writeFileSync(join(dir, 'svc.yaml'), text);
    const v = await run(['validate', 'svc.yaml'], { cwd: dir, env: childEnv() });
    assert.equal(v.code, 1);
    const lines = v.stderr.trim().split('\n');
    assert.ok(lines.every((l) => PROBLEM_LINE.test(l)), v.stderr);
    const got = lines.map((l) => { const m = PROBLEM_LINE.exec(l)!; return `${m[2]}:${m[3]} ${m[4]}`; }).sort();
    // Compile-time problems come first; the missing file is found only when they are gone (the I/O checks).
    assert.deepEqual(got, [`${pos(text, '"https://cdn.example.com/assets"')} VIEW_CSP_INVALID`, `${pos(text, 'orders.read] }')} VIEW_SCOPE_EXCEEDS_TOOL`].sort());
    writeFileSync(join(dir, 'svc.yaml'), text.replace('"https://cdn.example.com/assets"', '"https://cdn.example.com"').replace(', required_scopes: [orders.read]', ''));
    const io = await run(['validate', 'svc.yaml'], { cwd: dir, env: childEnv() });
    assert.equal(io.code, 1);
    assert.match(io.stderr, new RegExp(`^svc\\.yaml:${pos(text, 'views/gone.html')}: FILE_UNREADABLE: `, 'm'));
  });
});
