// list-pages.ts: one page when the list fits, opaque cursors that walk every item exactly
// once, and INVALID_CURSOR for anything this list did not issue.

import assert from 'node:assert/strict';
import { page } from '../../src/mcp/list-pages.js';
import { throwsWithCode } from '../helpers/errors.js';

const tools = Array.from({ length: 12 }, (_, i) => ({ name: `t${i}` }));

describe('MCP list pages', () => {
  it('returns a list that fits in one page whole, without nextCursor (and everything when no page size is set)', () => {
    assert.deepEqual(page('tools', tools, undefined, 12), { items: tools });
    assert.deepEqual(page('tools', tools, undefined, undefined), { items: tools });
  });

  it('walks every item exactly once through nextCursor', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = page('tools', tools, cursor, 5);
      seen.push(...p.items.map((t) => (t as { name: string }).name));
      cursor = p.nextCursor;
      pages++;
      if (cursor !== undefined) assert.doesNotMatch(cursor, /t\d/, 'the cursor is opaque');
    } while (cursor !== undefined);
    assert.equal(pages, 3);
    assert.deepEqual(seen, tools.map((t) => t.name));
  });

  it('refuses a forged cursor, one of another list, one whose item is gone and an empty one', () => {
    const next = page('tools', tools, undefined, 5).nextCursor!;
    for (const c of ['abc', '', 42, Buffer.from('tools\nt0').toString('base64url')]) throwsWithCode(() => page('tools', tools, c, 5), 'INVALID_CURSOR');
    throwsWithCode(() => page('prompts', tools, next, 5), 'INVALID_CURSOR');
    throwsWithCode(() => page('tools', tools.filter((t) => t.name !== 't5'), next, 5), 'INVALID_CURSOR');
    const resources = [{ uri: 'a://1' }, { uri: 'a://2' }];
    assert.deepEqual(page('resources', resources, page('resources', resources, undefined, 1).nextCursor, 1).items, [{ uri: 'a://2' }]);
  });
});
