// The report of `npm run coverage`: reads the V8 coverage that every node process of the run wrote (the npm script
// points NODE_V8_COVERAGE, which children inherit, at coverage/raw: mocha, each `svc serve` a test spawns, the CLI
// runs) and reports src/ by line, in coverage/ (index.html, coverage-summary.json) and on stdout.
// Guarantees: each way src/ code reaches V8 is converted on its own — the bundle the tests spawn (dist/cli.js and
// its chunks, esbuild's source maps back to src/) and src/*.ts loaded in-process through tsx (its own source
// maps) — and the two are merged as Istanbul data, where a line counts as covered when either ran it. They cannot
// be merged as V8 ranges (c8 --experimental-monocart does): the same function transformed two ways maps to
// slightly different ranges, and a nested range that did not run in one overrides the enclosing range that ran in
// the other (measured: releaseHeap() read 38% covered beside its own unit test, which runs every line). Lines are
// the figure to quote: statements, branches and functions are counted once per way a file was loaded. Files no
// test loads count as 0%.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import MCR from 'monocart-coverage-reports';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}coverage`;
const raw = `${out}/raw`;

// After the source maps, keep src/ only (node_modules/ and a bundle's `<define:import.meta>` stubs are not ours).
const sourceFilter = { '**/node_modules/**': false, '**/*define*': false, '**/src/**': true, '**/*': false };
const ways = {
  bundle: { '**/node_modules/**': false, '**/dist/cli.js': true, '**/dist/cli-chunks/**': true, '**/*': false },
  tsx: { '**/node_modules/**': false, '**/src/**': true, '**/*': false },
};

const parts = [];
for (const [name, entryFilter] of Object.entries(ways)) {
  const dir = `${out}/.${name}`;
  const mcr = MCR({
    name, outputDir: dir, logging: 'error', entryFilter, sourceFilter, reports: [['json', { file: 'coverage.json' }]],
    // Files no test loads, as 0%: added once.
    ...(name === 'tsx' && { all: { dir: [`${root}src`] } }),
  });
  await mcr.addFromDir(raw);
  await mcr.generate();
  // A way no process took writes nothing. Code without a source (esbuild's runtime helpers, a chunk of their own)
  // keeps its dist/ path: not src/, so left out.
  if (!existsSync(`${dir}/coverage.json`)) continue;
  const files = Object.entries(JSON.parse(readFileSync(`${dir}/coverage.json`, 'utf8')));
  parts.push(Object.fromEntries(files.filter(([path]) => path.replace(root, '').startsWith('src/'))));
  rmSync(dir, { recursive: true, force: true });
}

mkdirSync(out, { recursive: true });
const report = MCR({
  name: 'fastsvc src/ (npm test, servers included)', outputDir: out, logging: 'error', clean: false,
  reports: [['text', { skipFull: false }], 'text-summary', 'json-summary', 'html'],
});
for (const p of parts) await report.add(p);
await report.generate();
