// bench/scaling.mjs growth(): KiB per added idle session/socket between checkpoints and over the whole range, and
// the super-linear call-out, judged after the first checkpoint (upper half of the range > 1.5× the lower half).
import assert from 'node:assert/strict';
import { growth } from '../scaling.mjs';

describe('scaling growth (KiB per added idle item)', () => {
  it('gives KiB per item for each step and over the whole range', () => {
    const g = growth([0, 1000, 5000], [100, 110, 150]);
    assert.deepEqual(g.steps.map((s) => [s.from, s.to, s.kib]), [[0, 1000, 10.24], [1000, 5000, 10.24]]);
    assert.equal(g.total, 10.24);
  });

  it('calls out an upper half costing more than 1.5× the lower half per item', () => {
    // early 1000→5000: 10.24 KiB; late 5000→10000: 40 MiB / 5000 = 8.19 KiB (linear) vs 80 MiB / 5000 = 16.38 KiB.
    assert.equal(growth([0, 1000, 5000, 10000], [100, 110, 150, 190]).superlinear, false);
    assert.equal(growth([0, 1000, 5000, 10000], [100, 110, 150, 230]).superlinear, true);
  });

  it('does not count the first checkpoint (one-time costs) against linearity', () => {
    const g = growth([0, 1000, 5000, 10000], [100, 150, 160, 172.5]); // 51 KiB each for the first 1,000, then 2.56
    assert.equal(g.superlinear, false);
    assert.equal(g.early, 2.56);
  });

  it('does not judge fewer than four checkpoints', () => {
    const g = growth([0, 10, 20], [50, 51, 60]);
    assert.equal(g.superlinear, false);
    assert.ok(Number.isNaN(g.late));
  });
});
