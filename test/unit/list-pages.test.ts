// list-pages.ts: one page when the list fits, opaque cursors that walk every item exactly
// once, and INVALID_CURSOR for anything this list did not issue; GET /svc's one cursor over
// the four lists (pageAll) the same, each list paged on its own.

import assert from 'node:assert/strict';
import { page, pageAll } from '../../src/mcp/list-pages.js';
import { throwsWithCode } from '../helpers/errors.js';

const tools = Array.from({ length: 12 }, (_, i) => ({ name: `t${i}` }));
/** At most n items, and no byte limit that matters. */
const sized = (n: number) => ({ size: n, bytes: 1 << 30 });

describe('MCP list pages', () => {
  it('returns a list that fits in one page whole, without nextCursor (and everything when no page size is set)', () => {
    assert.deepEqual(page('tools', tools, undefined, sized(12)), { items: tools });
    assert.deepEqual(page('tools', tools, undefined, undefined), { items: tools });
  });

  it('ends a page before the item that would make its JSON array pass list_page_bytes (one item at least), and walks every item once', () => {
    const sizes = [10, 10, 10, 300, 10, 10];
    const items = sizes.map((n, i) => ({ name: `i${i}`, d: 'x'.repeat(n) }));
    const len = (i: number) => JSON.stringify(items[i]).length + 1;
    const limits = { size: 100, bytes: 1 + len(0) + len(1) + len(2) };
    assert.equal(JSON.stringify(items.slice(0, 3)).length, limits.bytes, 'the page\'s JSON array is list_page_bytes exactly');
    assert.deepEqual(page('tools', items, undefined, { ...limits, bytes: limits.bytes - 1 }).items.map((t) => (t as { name: string }).name), ['i0', 'i1'], 'one character less: the third item waits');
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const p = page('tools', items, cursor, limits);
      pages.push(p.items.map((t) => (t as { name: string }).name));
      cursor = p.nextCursor;
    } while (cursor !== undefined);
    assert.deepEqual(pages, [['i0', 'i1', 'i2'], ['i3'], ['i4', 'i5']]);
    assert.deepEqual(page('tools', items, undefined, { size: 100, bytes: 1 << 20 }), { items }, 'within both limits: one page');
    const all = pageAll({ tools: items, resources: [], resourceTemplates: [], prompts: [] }, undefined, limits);
    assert.deepEqual(all.pages.tools.map((t) => (t as { name: string }).name), ['i0', 'i1', 'i2']);
    assert.equal(typeof all.nextCursor, 'string');
  });

  it('walks every item exactly once through nextCursor', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = page('tools', tools, cursor, sized(5));
      seen.push(...p.items.map((t) => (t as { name: string }).name));
      cursor = p.nextCursor;
      pages++;
      if (cursor !== undefined) assert.doesNotMatch(cursor, /t\d/, 'the cursor is opaque');
    } while (cursor !== undefined);
    assert.equal(pages, 3);
    assert.deepEqual(seen, tools.map((t) => t.name));
  });

  it('refuses a forged cursor, one of another list, one whose item is gone and an empty one', () => {
    const next = page('tools', tools, undefined, sized(5)).nextCursor!;
    for (const c of ['abc', '', 42, Buffer.from('tools\nt0').toString('base64url')]) throwsWithCode(() => page('tools', tools, c, sized(5)), 'INVALID_CURSOR');
    throwsWithCode(() => page('prompts', tools, next, sized(5)), 'INVALID_CURSOR');
    throwsWithCode(() => page('tools', tools.filter((t) => t.name !== 't5'), next, sized(5)), 'INVALID_CURSOR');
    const resources = [{ uri: 'a://1' }, { uri: 'a://2' }];
    assert.deepEqual(page('resources', resources, page('resources', resources, undefined, sized(1)).nextCursor, sized(1)).items, [{ uri: 'a://2' }]);
  });
});

describe('GET /svc pages (pageAll)', () => {
  const lists = {
    tools,
    resources: Array.from({ length: 3 }, (_, i) => ({ uri: `doc://r${i}` })),
    resourceTemplates: [] as object[],
    prompts: Array.from({ length: 7 }, (_, i) => ({ name: `p${i}` })),
  };
  const keys = (items: readonly object[]) => items.map((x) => (x as { name?: string; uri?: string }).name ?? (x as { uri: string }).uri);

  it('answers every list whole, without a cursor, when each fits in a page (the same objects: nothing copied)', () => {
    const r = pageAll(lists, undefined, sized(12));
    assert.equal(r.nextCursor, undefined);
    for (const k of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) assert.equal(r.pages[k], lists[k]);
    assert.equal(pageAll(lists, undefined, undefined).nextCursor, undefined);
  });

  it('pages each list on its own: one cursor walks every item of every list exactly once; an ended list answers none', () => {
    const seen = { tools: [] as string[], resources: [] as string[], resourceTemplates: [] as string[], prompts: [] as string[] };
    let cursor: string | undefined;
    const sizes: number[][] = [];
    do {
      const r = pageAll(lists, cursor, sized(5));
      for (const k of Object.keys(seen) as (keyof typeof seen)[]) seen[k].push(...keys(r.pages[k]));
      sizes.push([r.pages.tools.length, r.pages.resources.length, r.pages.resourceTemplates.length, r.pages.prompts.length]);
      cursor = r.nextCursor;
      if (cursor !== undefined) assert.doesNotMatch(cursor, /t\d|p\d/, 'the cursor is opaque');
    } while (cursor !== undefined);
    assert.deepEqual(sizes, [[5, 3, 0, 5], [5, 0, 0, 2], [2, 0, 0, 0]]);
    assert.deepEqual(seen, { tools: keys(tools), resources: keys(lists.resources), resourceTemplates: [], prompts: keys(lists.prompts) });
  });

  it('refuses a forged cursor, an MCP list cursor, a malformed one and one whose item is gone', () => {
    const next = pageAll(lists, undefined, sized(5)).nextCursor!;
    const mcp = page('tools', tools, undefined, sized(5)).nextCursor!;
    const forged = (text: string) => Buffer.from(text).toString('base64url');
    for (const c of ['abc', '', 42, ['a'], mcp, forged('svc\n["t5"]'), forged('svc\nnot json'), forged('svc\n[1,null,null,null]'), forged('svc\n["t0",null,null,null]')]) {
      throwsWithCode(() => pageAll(lists, c, sized(5)), 'INVALID_CURSOR');
    }
    throwsWithCode(() => pageAll({ ...lists, tools: tools.filter((t) => t.name !== 't5') }, next, sized(5)), 'INVALID_CURSOR');
    throwsWithCode(() => page('tools', tools, next, sized(5)), 'INVALID_CURSOR');
  });
});
