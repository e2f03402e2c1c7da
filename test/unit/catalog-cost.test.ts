// What a listing costs (src/catalog/catalog-cost.ts): bytes are the JSON's UTF-8 length, tokens o200k's count
// (checked on texts whose count is known), the total counted on the whole `{"tools":[…]}` answer, one row per
// tool in listing order, and per source when the caller says where each tool comes from.

import assert from 'node:assert/strict';
import { catalogCost, textCost } from '../../src/catalog/catalog-cost.js';

const LISTING = [
  { name: 'notes.hello', description: 'Greets someone.', inputSchema: { type: 'object', properties: { who: { type: 'string' } } } },
  { name: 'issues.create', title: 'Create an issue — «vite»', description: 'Opens an issue.', inputSchema: { type: 'object', properties: {} } },
  { name: 'issues.update', description: 'Edits an issue.', inputSchema: { type: 'object', properties: {} } },
];

describe('catalog cost', () => {
  it('counts bytes as UTF-8 and tokens with o200k', () => {
    assert.deepEqual(textCost(''), { bytes: 0, tokens: 0 });
    assert.deepEqual(textCost('hello world'), { bytes: 11, tokens: 2 });
    assert.deepEqual(textCost('«é»'), { bytes: 6, tokens: textCost('«é»').tokens });
    assert.ok(textCost('«é»').tokens >= 1);
    // o200k merges common English words; a long identifier takes several tokens.
    assert.equal(textCost(' the the the').tokens, 3);
    assert.ok(textCost('activity.list-repos-starred-by-authenticated-user').tokens > 5);
  });

  it('counts the whole answer and each tool, in listing order, and per source', () => {
    const c = catalogCost(LISTING, { sourceOf: (name) => (name.startsWith('issues.') ? 'openapi:github' : 'manifest') });
    const whole = JSON.stringify({ tools: LISTING });
    assert.equal(c.tools, 3);
    assert.equal(c.bytes, Buffer.byteLength(whole, 'utf8'));
    assert.equal(c.tokens, textCost(whole).tokens);
    assert.deepEqual(c.perTool.map((t) => t.name), ['notes.hello', 'issues.create', 'issues.update']);
    for (const [i, t] of c.perTool.entries()) assert.deepEqual(t, { name: t.name, ...textCost(JSON.stringify(LISTING[i])) });
    const sum = c.perTool.reduce((s, t) => s + t.tokens, 0);
    assert.ok(Math.abs(sum - c.tokens) <= 10, `tools ${sum}, whole ${c.tokens}`);
    assert.deepEqual(c.perSource, [
      { source: 'manifest', tools: 1, bytes: c.perTool[0]!.bytes, tokens: c.perTool[0]!.tokens },
      { source: 'openapi:github', tools: 2, bytes: c.perTool[1]!.bytes + c.perTool[2]!.bytes, tokens: c.perTool[1]!.tokens + c.perTool[2]!.tokens },
    ]);
    assert.equal(catalogCost(LISTING).perSource, undefined);
    assert.deepEqual(catalogCost([]), { tools: 0, bytes: 12, tokens: textCost('{"tools":[]}').tokens, perTool: [] });
  });
});
