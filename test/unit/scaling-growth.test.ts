// bench/scaling.mjs growth(): KiB per added idle session/socket between checkpoints, over the whole range, and the
// super-linear call-out (a later step costing more than 1.5× the first per item).
import assert from 'node:assert/strict';
import { growth } from '../../bench/scaling.mjs';

describe('scaling growth (KiB per added idle item)', () => {
  it('gives KiB per item for each step and over the whole range', () => {
    const g = growth([0, 1000, 5000], [100, 110, 150]);
    assert.deepEqual(g.steps.map((s) => [s.from, s.to, s.kib]), [[0, 1000, 10.24], [1000, 5000, 10.24]]);
    assert.equal(g.total, 10.24);
    assert.equal(g.superlinear, false);
  });

  it('calls out a later step that costs more than 1.5× the first per item', () => {
    assert.equal(growth([0, 1000, 2000], [100, 110, 126]).superlinear, true); // 10.24 then 16.38 KiB
    assert.equal(growth([0, 1000, 2000], [100, 110, 124]).superlinear, false); // 10.24 then 14.34 KiB
  });

  it('skips a checkpoint that adds nothing', () => {
    assert.equal(growth([0, 0, 10], [50, 51, 52]).steps.length, 1);
  });
});
