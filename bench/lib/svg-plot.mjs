// A small dependency-free SVG line chart for the bench's scaling curves. Guarantees: linePlot() returns one
// standalone, well-formed SVG document (every text XML-escaped) with a title, both axes with ticks and labels (units
// in the axis label), one <polyline> plus point markers per series, and a legend naming every series in order; x
// (optionally log-scaled) and y map monotonically onto the plot area. Values that are null/NaN are left out (the line
// breaks there). Data shape: { x: [..], series: { name: [..] } }; columnsToSeries() turns column-shaped JSON (e.g.
// bench/results/large-manifest.json) into it. CLI: node bench/lib/svg-plot.mjs IN.json OUT.svg --x KEY --y K1,K2
// [--title T] [--x-label L] [--y-label L] [--log-x] [--log-y].
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const FONT = 'font-family="sans-serif"';

/** XML-escaped text. */
export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

const usable = (v, log) => typeof v === 'number' && Number.isFinite(v) && (!log || v > 0);

/** Round tick steps: 1, 2 or 5 × 10^k, about `count` of them over [lo, hi]. */
export function niceTicks(lo, hi, count = 5) {
  if (hi <= lo) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** Powers of ten covering [lo, hi] (lo > 0). */
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) ticks.push(10 ** e);
  return ticks;
}

/** A tick label: 1,234 / 0.25 / 12k / 1.5M. */
export function fmt(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (a >= 1 || a === 0) return Number(v.toPrecision(4)).toLocaleString('en-US');
  return String(Number(v.toPrecision(2)));
}

/** A monotonic map of [lo, hi] onto [a, b] (linear or log10). */
function scale(lo, hi, a, b, log) {
  const f = log ? Math.log10 : (v) => v;
  const [flo, fhi] = [f(lo), f(hi)];
  const span = fhi - flo || 1;
  return (v) => a + ((f(v) - flo) / span) * (b - a);
}

/**
 * The SVG text of a line chart. data: { x: number[], series: { [name]: (number|null)[] } } (each series as long as x).
 * opts: { title, xLabel, yLabel, logX, logY, width, height }. y starts at 0 unless logY.
 */
export function linePlot(data, { title = '', xLabel = '', yLabel = '', logX = false, logY = false, width = 640, height = 400 } = {}) {
  const names = Object.keys(data.series);
  if (!Array.isArray(data.x) || data.x.length === 0) throw new Error('linePlot: data.x must be a non-empty array');
  for (const n of names) {
    if (data.series[n].length !== data.x.length) throw new Error(`linePlot: series ${n} has ${data.series[n].length} values for ${data.x.length} x`);
  }
  const xs = data.x.filter((v) => usable(v, logX));
  const ys = names.flatMap((n) => data.series[n].filter((v, i) => usable(v, logY) && usable(data.x[i], logX)));
  if (xs.length === 0) throw new Error('linePlot: no usable x value');
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const yHi = ys.length ? Math.max(...ys) : 1;
  const yLo = logY ? (ys.length ? Math.min(...ys) : 1) : 0;

  // x ticks: the measured x values when few (they are the points that mean something), else round ones.
  const xTicks = xs.length <= 12 ? [...new Set(xs)].sort((a, b) => a - b) : logX ? logTicks(xMin, xMax) : niceTicks(xMin, xMax);
  const yTicks = logY ? logTicks(yLo, yHi) : niceTicks(0, yHi * 1.05);
  const yTop = Math.max(yHi, yTicks.at(-1));
  const yBottom = logY ? Math.min(yLo, yTicks[0]) : 0;

  const m = { left: 70, right: 20, top: 40, bottom: 50 };
  const legendRows = names.length;
  const plotBottom = height - m.bottom - legendRows * 16;
  const sx = scale(xMin, xMax === xMin ? xMin + 1 : xMax, m.left, width - m.right, logX);
  const sy = scale(yBottom, yTop, plotBottom, m.top, logY);
  const p = (v) => v.toFixed(1);

  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" ${FONT}>${esc(title)}</text>`,
    `<g class="axes" stroke="#333333" stroke-width="1">`,
    `<line x1="${m.left}" y1="${p(plotBottom)}" x2="${width - m.right}" y2="${p(plotBottom)}"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${p(plotBottom)}"/>`,
    `</g>`,
  ];
  const inX = (t) => t >= Math.min(xMin, xMax) && t <= xMax;
  for (const t of xTicks.filter(inX)) {
    const x = p(sx(t));
    out.push(`<line class="tick" x1="${x}" y1="${p(plotBottom)}" x2="${x}" y2="${p(plotBottom + 5)}" stroke="#333333"/>`);
    out.push(`<text x="${x}" y="${p(plotBottom + 18)}" text-anchor="middle" font-size="11" ${FONT}>${esc(fmt(t))}</text>`);
  }
  for (const t of yTicks.filter((v) => v >= yBottom && v <= yTop)) {
    const y = p(sy(t));
    out.push(`<line class="grid" x1="${m.left}" y1="${y}" x2="${width - m.right}" y2="${y}" stroke="#dddddd"/>`);
    out.push(`<text x="${m.left - 6}" y="${y}" dy="4" text-anchor="end" font-size="11" ${FONT}>${esc(fmt(t))}</text>`);
  }
  out.push(`<text x="${(m.left + width - m.right) / 2}" y="${p(plotBottom + 38)}" text-anchor="middle" font-size="12" ${FONT}>${esc(xLabel)}${logX ? ' (log scale)' : ''}</text>`);
  out.push(`<text transform="translate(16 ${p((m.top + plotBottom) / 2)}) rotate(-90)" text-anchor="middle" font-size="12" ${FONT}>${esc(yLabel)}${logY ? ' (log scale)' : ''}</text>`);

  names.forEach((name, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = data.x.map((x, i) => [x, data.series[name][i]]).filter(([x, y]) => usable(x, logX) && usable(y, logY));
    // A null between points breaks the line: one polyline per run of consecutive usable points.
    const runs = [];
    let run = [];
    data.x.forEach((x, i) => {
      const y = data.series[name][i];
      if (usable(x, logX) && usable(y, logY)) run.push(`${p(sx(x))},${p(sy(y))}`);
      else if (run.length) {
        runs.push(run);
        run = [];
      }
    });
    if (run.length) runs.push(run);
    out.push(`<g class="series" data-name="${esc(name)}" stroke="${color}" fill="${color}">`);
    for (const r of runs) out.push(`<polyline fill="none" stroke-width="2" points="${r.join(' ')}"/>`);
    for (const [x, y] of pts) out.push(`<circle cx="${p(sx(x))}" cy="${p(sy(y))}" r="3"><title>${esc(`${name}: ${fmt(x)} → ${fmt(y)}`)}</title></circle>`);
    out.push(`</g>`);
    const ly = plotBottom + 50 + k * 16;
    out.push(`<g class="legend"><line x1="${m.left}" y1="${ly - 4}" x2="${m.left + 20}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>` +
      `<text x="${m.left + 26}" y="${ly}" font-size="11" ${FONT}>${esc(name)}</text></g>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** { x, series } from column-shaped data: obj[xKey] is x, each of yKeys (default: every other array column) a series. */
export function columnsToSeries(obj, xKey, yKeys = Object.keys(obj).filter((k) => k !== xKey && Array.isArray(obj[k]))) {
  if (!Array.isArray(obj[xKey])) throw new Error(`no array column ${xKey}`);
  return { x: obj[xKey], series: Object.fromEntries(yKeys.map((k) => [k, obj[k]])) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values: o, positionals: [inFile, outFile] } = parseArgs({
    allowPositionals: true,
    options: { x: { type: 'string' }, y: { type: 'string' }, title: { type: 'string' }, 'x-label': { type: 'string' }, 'y-label': { type: 'string' }, 'log-x': { type: 'boolean' }, 'log-y': { type: 'boolean' } },
  });
  if (!inFile || !outFile || !o.x) {
    console.error('usage: node bench/lib/svg-plot.mjs IN.json OUT.svg --x KEY [--y K1,K2] [--title T] [--x-label L] [--y-label L] [--log-x] [--log-y]');
    process.exit(2);
  }
  const data = columnsToSeries(JSON.parse(readFileSync(inFile, 'utf8')), o.x, o.y?.split(','));
  writeFileSync(outFile, linePlot(data, { title: o.title ?? '', xLabel: o['x-label'] ?? o.x, yLabel: o['y-label'] ?? '', logX: o['log-x'], logY: o['log-y'] }));
}
