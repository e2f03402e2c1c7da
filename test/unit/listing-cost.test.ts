// What an endpoint's listing costs (src/catalog/listing-cost.ts): the tools/list the server sends (each tool's wire
// listing, fitted to a list page; appsWire for an MCP Apps client; only the tools shown), its sources named as
// `select.sources` names them (`manifest` for the manifest's own), rows largest first with ties by name; the total
// remembered per catalog and set of tools; ADVISED past 40 tools or 20,000 tokens.

import assert from 'node:assert/strict';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog } from '../../src/core/catalog.js';
import type { ToolDef } from '../../src/core/types.js';
import { textCost } from '../../src/catalog/catalog-cost.js';
import { ADVISED, listedTools, listingCost, listingTotal, pastAdvised } from '../../src/catalog/listing-cost.js';

type Def = Omit<ToolDef, 'handler'>;
const handler = () => 'ok';
const long = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

function catalogOf(defs: Def[], listPage?: { size: number; bytes: number }) {
  const svc = new FastSvc({ name: 'cost-test' });
  for (const d of defs) svc.tool({ ...d, handler });
  return buildCatalog(svc, listPage ? { listPage } : {});
}

const TOOLS: Def[] = [
  { name: 'notes.hello', description: 'Greets someone.' },
  { name: 'issues.create', description: `Opens an issue. ${long(60)}`, source: { kind: 'openapi', name: 'github' } },
  { name: 'issues.update', description: `Edits an issue. ${long(30)}`, source: { kind: 'openapi', name: 'github' } },
  { name: 'weather.now', description: `The weather. ${long(45)}`, source: { kind: 'upstream', name: 'meteo' }, ui: { resourceUri: 'ui://weather/view' } },
  { name: 'b.same', description: 'Same.' },
  { name: 'a.same', description: 'Same.' },
];

describe('listing cost', () => {
  it('counts the listing the server sends, per source and per tool, largest first, ties by name', () => {
    const cat = catalogOf(TOOLS);
    const c = listingCost(cat);
    const listing = [...cat.tools.values()].map((e) => e.wire);
    const whole = textCost(JSON.stringify({ tools: listing }));
    assert.deepEqual([c.tools, c.bytes, c.tokens], [6, whole.bytes, whole.tokens]);
    assert.deepEqual(c.byTool.map((t) => t.name), ['issues.create', 'weather.now', 'issues.update', 'notes.hello', 'a.same', 'b.same']);
    for (const t of c.byTool) assert.deepEqual({ bytes: t.bytes, tokens: t.tokens }, textCost(JSON.stringify(cat.tools.get(t.name)!.wire)));
    assert.deepEqual(c.byTool.find((t) => t.name === 'weather.now')!.source, 'meteo');
    assert.deepEqual(c.bySource.map((s) => [s.source, s.kind, s.tools]), [['github', 'openapi', 2], ['meteo', 'upstream', 1], ['manifest', 'manifest', 3]]);
    const github = c.byTool.filter((t) => t.source === 'github');
    assert.equal(c.bySource[0]!.tokens, github[0]!.tokens + github[1]!.tokens);
    assert.equal(c.bySource[0]!.bytes, github[0]!.bytes + github[1]!.bytes);
  });

  it('counts only the tools shown, and an MCP Apps client\'s listing with its _meta.ui', () => {
    const cat = catalogOf(TOOLS);
    const shown = listingCost(cat, { shown: (e) => e.def.source?.name === 'meteo' });
    assert.deepEqual(shown.byTool.map((t) => t.name), ['weather.now']);
    assert.deepEqual(shown.bySource.map((s) => s.source), ['meteo']);
    const apps = listingCost(cat, { shown: (e) => e.def.source?.name === 'meteo', apps: true });
    assert.ok(apps.bytes > shown.bytes, 'the _meta.ui is counted');
    assert.deepEqual(listedTools(cat, { apps: true }).listing.find((t) => t.name === 'weather.now'), cat.tools.get('weather.now')!.appsWire);
  });

  it('counts a tool as it is listed within a list page (its listing shortened), not as written', () => {
    const big: Def = { name: 'big.one', description: long(2000), input_schema: { type: 'object', properties: { a: { type: 'string', description: long(500) } } } };
    const whole = listingCost(catalogOf([big]));
    const paged = listingCost(catalogOf([big], { size: 250, bytes: 4096 }));
    assert.ok(paged.bytes < whole.bytes && paged.bytes <= 4096 + 12, `${paged.bytes} within a page, ${whole.bytes} whole`);
  });

  it('listingTotal is the listing\'s total, counted once per catalog and set of tools shown', () => {
    const cat = catalogOf(TOOLS);
    const all = listingTotal(cat);
    const c = listingCost(cat);
    assert.deepEqual(all, { tools: c.tools, bytes: c.bytes, tokens: c.tokens });
    assert.equal(listingTotal(cat), all, 'the same set: the same object, not counted again');
    const some = listingTotal(cat, { shown: (e) => e.def.name.startsWith('issues.') });
    assert.equal(some.tools, 2);
    assert.notEqual(some, all);
    assert.equal(listingTotal(catalogOf(TOOLS)) === all, false, 'another catalog is counted for itself');
  });

  it('ADVISED: past 40 tools or 20,000 tokens', () => {
    assert.deepEqual(ADVISED, { tools: 40, tokens: 20_000 });
    assert.equal(pastAdvised({ tools: 40, tokens: 20_000 }), undefined);
    assert.equal(pastAdvised({ tools: 41, tokens: 100 }), 'more than 40 tools');
    assert.equal(pastAdvised({ tools: 3, tokens: 20_001 }), 'more than 20,000 tokens');
    assert.equal(pastAdvised({ tools: 1222, tokens: 1_702_950 }), 'more than 40 tools and more than 20,000 tokens');
  });
});
