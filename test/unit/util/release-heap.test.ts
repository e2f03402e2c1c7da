// releaseHeap: collects on demand without leaving a `gc` global behind (the host's or a later context's).

import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { releaseHeap } from '../../../src/util/release-heap.js';

describe('releaseHeap', () => {
  it('runs, twice over, and no context gains a gc global it did not have', () => {
    const hadGc = typeof (globalThis as { gc?: unknown }).gc;
    releaseHeap();
    releaseHeap();
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, hadGc);
    assert.equal(runInNewContext('typeof gc'), hadGc === 'function' ? 'function' : 'undefined');
  });
});
