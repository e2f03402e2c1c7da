// bench/lib/svg-plot.mjs: the chart is one well-formed SVG document (balanced tags, escaped text), draws one
// series group and one legend entry per series, maps larger x (linear and log) to larger SVG x and larger y to
// smaller SVG y, leaves out null points, and turns column-shaped JSON into { x, series }.
import assert from 'node:assert/strict';
import { columnsToSeries, linePlot, niceTicks } from '../lib/svg-plot.mjs';

/** Every element's tag, checked balanced like an XML parser would (self-closing tags and text aside). */
function assertWellFormed(svg: string): void {
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (closing) assert.equal(stack.pop(), name, `</${name}> closes the wrong element`);
    else stack.push(name!);
  }
  assert.deepEqual(stack, [], 'unclosed elements');
  // No raw markup characters in text: every & starts an entity.
  assert.doesNotMatch(svg, /&(?!amp;|lt;|gt;|quot;|#39;)/);
}

/** The points of every polyline of the series named `name`, as [x, y] pairs. */
function pointsOf(svg: string, name: string): number[][] {
  const group = new RegExp(`<g class="series" data-name="${name}"[^>]*>([\\s\\S]*?)</g>`).exec(svg);
  assert.ok(group, `no series group ${name}`);
  return [...group[1]!.matchAll(/points="([^"]*)"/g)].flatMap((m) => m[1]!.split(' ').map((pt) => pt.split(',').map(Number)));
}

const data = { x: [1, 10, 50, 200], series: { raw: [100, 2000, 3000, 3100], 'fastsvc <svc>': [50, 900, 1500, 1600], gap: [10, null, 30, 40] } };

describe('svg-plot (bench line charts)', () => {
  it('writes one well-formed SVG with a title, axis labels and escaped text', () => {
    const svg = linePlot(data, { title: 'req/s & connections', xLabel: 'connections', yLabel: 'req/s' });
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(svg, /<\/svg>\n$/);
    assertWellFormed(svg);
    assert.ok(svg.includes('req/s &amp; connections'));
    assert.ok(svg.includes('fastsvc &lt;svc&gt;'));
    assert.ok(svg.includes('>connections<'));
  });

  it('draws one series group and one legend entry per series, in order', () => {
    const svg = linePlot(data);
    const groups = [...svg.matchAll(/<g class="series" data-name="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(groups, ['raw', 'fastsvc &lt;svc&gt;', 'gap']);
    assert.equal([...svg.matchAll(/<g class="legend">/g)].length, 3);
  });

  for (const logX of [false, true]) {
    it(`maps points monotonically (${logX ? 'log' : 'linear'} x): larger x → right, larger y → up`, () => {
      const pts = pointsOf(linePlot(data, { logX }), 'raw');
      assert.equal(pts.length, 4);
      for (let i = 1; i < pts.length; i++) {
        assert.ok(pts[i]![0]! > pts[i - 1]![0]!, `x not increasing at ${i}: ${JSON.stringify(pts)}`);
        assert.ok(pts[i]![1]! < pts[i - 1]![1]!, `y not going up at ${i}: ${JSON.stringify(pts)}`); // y values increase
      }
    });
  }

  it('spreads log-scaled x by decades: 1→10 as wide as 10→100', () => {
    const pts = pointsOf(linePlot({ x: [1, 10, 100], series: { a: [1, 2, 3] } }, { logX: true }), 'a');
    assert.ok(Math.abs((pts[1]![0]! - pts[0]![0]!) - (pts[2]![0]! - pts[1]![0]!)) < 0.2);
  });

  it('breaks the line at a null value and draws no marker for it', () => {
    const svg = linePlot(data);
    const group = /<g class="series" data-name="gap"[^>]*>([\s\S]*?)<\/g>/.exec(svg)![1]!;
    assert.equal([...group.matchAll(/<polyline/g)].length, 2);
    assert.equal([...group.matchAll(/<circle/g)].length, 3);
  });

  it('refuses a series whose length differs from x', () => {
    assert.throws(() => linePlot({ x: [1, 2], series: { a: [1] } }), /series a has 1 values for 2 x/);
  });

  it('picks round y ticks (1, 2 or 5 × 10^k) covering the range', () => {
    assert.deepEqual(niceTicks(0, 10), [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(niceTicks(0, 3300), [0, 1000, 2000, 3000]);
  });

  it('turns column-shaped JSON (large-manifest.json) into { x, series }', () => {
    const cols = { capabilities: [10, 1000, 10000], readyMs: [470, 2000, 9700], rssMiB: [70, 126, 321], note: 'x' };
    assert.deepEqual(columnsToSeries(cols, 'capabilities'), { x: [10, 1000, 10000], series: { readyMs: [470, 2000, 9700], rssMiB: [70, 126, 321] } });
    assert.deepEqual(columnsToSeries(cols, 'capabilities', ['rssMiB']).series, { rssMiB: [70, 126, 321] });
  });
});
