// `fastsvc cost` through the real command line, on a manifest with tools of its own, an `openapi` source (the
// petstore fixture) and an upstream: the default endpoint's listing in tools, bytes and o200k tokens, per source and
// per tool largest first (--json agrees with the text, and with what the server lists on /mcp), the upstream named as
// not counted, the advice past 40 tools; explain says what the tools it shows a caller cost, in text and JSON; usage
// errors.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, childEnv, run } from '../helpers/cli.js';
import { serveManifest } from '../helpers/serve.js';
import { RawMcp } from '../helpers/mcp-app.js';
import { textCost } from '../../src/catalog/catalog-cost.js';

type Json = Record<string, any>;
const ENV = childEnv({ SVC_TOKEN: 'cost-token-0123456789abcdef' });

function manifest(tools: number): string {
  const own = Array.from({ length: tools }, (_, i) => `  - name: own.t${i}
    description: Tool number ${i} of the manifest.
    required_scopes: [${i === 0 ? 'own.read' : ''}]
    template: "ok"`).join('\n');
  return `version: 1
name: cost-test
auth:
  token: \${SVC_TOKEN}
profile: { scopes: [own.read, pets.read] }
tools:
${own}
openapi:
  - name: pets
    document: petstore.yaml
    required_scopes: [pets.read]
upstreams:
  - name: vendor
    command: [node, not-started.js]
`;
}

describe('fastsvc cost', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-cost-cli-'));
    cpSync(join(ROOT, 'test/fixtures/openapi/petstore-3.0.yaml'), join(dir, 'petstore.yaml'));
    writeFileSync(join(dir, 'small.yaml'), manifest(2));
    writeFileSync(join(dir, 'large.yaml'), manifest(45));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json: the default endpoint\'s listing, per source and per tool, largest first; the text says the same', async () => {
    const r = await run(['cost', join(dir, 'small.yaml'), '--json'], { env: ENV });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^fastsvc cost: not counted: the tools of upstream vendor \(/m);
    const out = JSON.parse(r.stdout) as Json;
    assert.equal(out.tokenizer, 'o200k_base');
    assert.deepEqual(out.advised, { tools: 40, tokens: 20000 });
    assert.equal(out.endpoints.length, 1);
    const e = out.endpoints[0];
    assert.deepEqual([e.endpoint, e.paths, e.discovery], [null, ['/svc', '/mcp', '/ws'], 'direct']);
    const l = e.listing;
    assert.deepEqual(l.bySource.map((s: Json) => [s.source, s.kind]), [['pets', 'openapi'], ['manifest', 'manifest']]);
    assert.equal(l.tools, l.bySource.reduce((n: number, s: Json) => n + s.tools, 0));
    assert.equal(l.byTool.length, l.tools);
    for (let i = 1; i < l.byTool.length; i++) assert.ok(l.byTool[i - 1].tokens >= l.byTool[i].tokens, 'largest first');
    assert.ok(l.tokens > 0 && l.bytes > l.tokens);
    assert.equal(e.past_advised, undefined);

    const text = await run(['cost', join(dir, 'small.yaml')], { env: ENV });
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trimEnd().split('\n');
    assert.equal(lines[0], `default endpoint (/svc /mcp /ws): direct — tools/list lists ${l.tools} tools, ${l.bytes.toLocaleString('en')} bytes, ~${l.tokens.toLocaleString('en')} tokens (o200k)`);
    assert.equal(lines[1], '  by source, largest first:');
    assert.match(lines[2]!, new RegExp(`^    pets\\s+openapi\\s+${l.bySource[0].tools} tools\\s+${l.bySource[0].bytes.toLocaleString('en')} B\\s+~${l.bySource[0].tokens.toLocaleString('en')} tokens\\s+\\d+\\.\\d%$`));
    assert.match(lines[3]!, /^ {4}manifest\s+manifest\s+2 tools\s/);

    const byTool = await run(['cost', join(dir, 'small.yaml'), '--by', 'tool'], { env: ENV });
    assert.deepEqual(byTool.stdout.split('\n').slice(2, 2 + l.tools).map((s) => s.trim().split(/\s+/).slice(0, 2)), l.byTool.map((t: Json) => [t.name, t.source]));
  });

  it('counts the listing the server sends on /mcp to a caller shown every tool', async () => {
    const r = await run(['cost', join(dir, 'small.yaml'), '--json'], { env: ENV });
    const l = JSON.parse(r.stdout).endpoints[0].listing;
    // The upstream is left out here too: the manifest without it, served.
    const srv = await serveManifest(manifest(2).replace(/upstreams:[\s\S]*$/, ''), { env: { SVC_TOKEN: 'cost-token-0123456789abcdef' }, copy: { 'petstore.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' } });
    try {
      const mcp = new RawMcp(srv.url, 'cost-token-0123456789abcdef');
      await mcp.initialize();
      const { answer } = await mcp.request('tools/list');
      const tools = (answer as Json).result.tools;
      assert.equal(tools.length, l.tools);
      assert.deepEqual(textCost(JSON.stringify({ tools })), { bytes: l.bytes, tokens: l.tokens });
    } finally {
      await srv.stop();
    }
  });

  it('past 40 tools: the listing is flagged, with the way out', async () => {
    const r = await run(['cost', join(dir, 'large.yaml')], { env: ENV });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}past the advised size \(more than 40 tools\): .*discovery: auto/m);
    const j = JSON.parse((await run(['cost', join(dir, 'large.yaml'), '--json'], { env: ENV })).stdout);
    assert.equal(j.endpoints[0].past_advised, 'more than 40 tools');
  });

  it('explain says what the tools it shows the caller cost (text and JSON, as GET /svc/explain)', async () => {
    const all = JSON.parse((await run(['cost', join(dir, 'small.yaml'), '--json'], { env: ENV })).stdout).endpoints[0].listing;
    const j = JSON.parse((await run(['explain', join(dir, 'small.yaml'), '--scopes', 'own.read pets.read', '--json'], { env: ENV })).stdout);
    assert.deepEqual(j.listing, { tools: all.tools, bytes: all.bytes, tokens: all.tokens });
    const some = JSON.parse((await run(['explain', join(dir, 'small.yaml'), '--scopes', 'own.read', '--json'], { env: ENV })).stdout);
    assert.equal(some.listing.tools, 2, 'the manifest\'s two tools; the petstore needs pets.read');
    assert.ok(some.listing.tokens < all.tokens);
    const text = await run(['explain', join(dir, 'small.yaml'), '--scopes', 'own.read'], { env: ENV });
    assert.equal(text.stdout.split('\n')[1], `tools/list shows it 2 tools: ${some.listing.bytes.toLocaleString('en')} bytes, ~${some.listing.tokens.toLocaleString('en')} tokens (o200k)`);
  });

  it('every endpoint on its own selection, the default first; a progressive one is not flagged; --endpoint default', async () => {
    const f = join(dir, 'endpoints.yaml');
    writeFileSync(f, manifest(45).replace('openapi:', `endpoints:
  own:
    select: { sources: [manifest] }
  pets:
    select: { sources: [pets] }
    discovery: { mode: progressive }
openapi:`));
    const j = JSON.parse((await run(['cost', f, '--json'], { env: ENV })).stdout);
    assert.deepEqual(j.endpoints.map((e: Json) => [e.endpoint, e.discovery, e.past_advised]), [[null, 'direct', 'more than 40 tools'], ['own', 'direct', 'more than 40 tools'], ['pets', 'progressive', undefined]]);
    assert.deepEqual(j.endpoints[1].paths, ['/svc/own', '/mcp/own', '/ws/own']);
    assert.deepEqual(j.endpoints[1].listing.bySource.map((s: Json) => [s.source, s.tools]), [['manifest', 45]]);
    assert.deepEqual(j.endpoints[2].listing.bySource.map((s: Json) => s.source), ['pets']);
    const text = await run(['cost', f, '--endpoint', 'pets'], { env: ENV });
    assert.match(text.stdout, /^endpoint pets \(\/svc\/pets \/mcp\/pets \/ws\/pets\): progressive — tools\/list lists its meta-tools \([\d,]+ bytes, ~[\d,]+ tokens\); its tools, listed directly, would be \d+ tools, /);
    const def = JSON.parse((await run(['cost', f, '--endpoint', 'default', '--json'], { env: ENV })).stdout);
    assert.deepEqual(def.endpoints.map((e: Json) => e.endpoint), [null]);
  });

  it('the default endpoint as the top-level discovery decides it, with what its meta-tools cost', async () => {
    const f = join(dir, 'auto.yaml');
    writeFileSync(f, manifest(45).replace('openapi:', 'discovery: { mode: auto }\nopenapi:'));
    const e = JSON.parse((await run(['cost', f, '--json'], { env: ENV })).stdout).endpoints[0];
    assert.deepEqual([e.endpoint, e.discovery, e.past_advised], [null, 'auto (progressive)', undefined]);
    assert.ok(e.meta_tools.tokens > 0 && e.meta_tools.tokens < 2000, JSON.stringify(e.meta_tools));
    assert.ok(e.listing.tokens > e.meta_tools.tokens);
    const text = await run(['cost', f], { env: ENV });
    assert.match(text.stdout, new RegExp(`^default endpoint \\(/svc /mcp /ws\\): auto \\(progressive\\) — tools/list lists its meta-tools \\([\\d,]+ bytes, ~${e.meta_tools.tokens.toLocaleString('en')} tokens\\); its tools, listed directly, would be ${e.listing.tools} tools, `, 'm'));
  });

  it('usage: --by takes source or tool (exit 2); an unknown endpoint is one line, exit 1', async () => {
    const bad = await run(['cost', join(dir, 'small.yaml'), '--by', 'scope'], { env: ENV });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^fastsvc cost: --by takes source or tool\nusage: fastsvc cost /);
    const none = await run(['cost', join(dir, 'small.yaml'), '--endpoint', 'github'], { env: ENV });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^fastsvc cost: no endpoint github in the manifest's endpoints$/m);
  });
});
