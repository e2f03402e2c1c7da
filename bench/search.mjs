#!/usr/bin/env node
// Search over a catalog (issue 39 points 3 and 5): how well src/catalog/search-index.ts finds the right tool, how
// fast, at what cost, and what a catalog's listing costs a model in tokens. Two catalogs, each loaded in a fresh
// child process (node --expose-gc) from dist/: GitHub's REST description as one `openapi` source (@octokit/openapi,
// ~1,200 tools) and the large-manifest generator's N tools (bench/lib/gen-manifest.mjs, default 10,000). Per catalog:
// the load (loadManifest + buildCatalog: wall and CPU time, RSS after a GC), the index build (wall and CPU time, and
// the RSS it adds after a GC, all three kinds indexed), the first pass over the queries (cold: wall time; V8 has not
// optimised the search yet), and, after 3 passes more, the latency of every query (the same searches `--rounds`
// times through a policy filter that admits every tool, the way a caller's admission list is asked: wall and CPU
// time with a new filter function per search — no verdict reused, the worst case — and wall time with one filter
// reused, as the server keeps one per catalog and scope set; the filter admits the names of the caller's listing, as
// the server's does; CPU time is the process's, V8's compiler and GC helper threads included). On
// GitHub's catalog also recall@1, recall@5 and MRR on each query file (bench/search/github-queries.yaml: tuning and
// held-out queries; github-queries-2.yaml: a second held-out set), each file's splits apart (a query scores its first
// expected tool among the 10 best); the tokens (o200k, src/catalog/
// catalog-cost.ts) of the direct tools/list answer, of one tool's full definition (median and largest), and of a
// 5-match search answer (the matches as SearchResult gives them: name, title, summary, arguments in brief, score,
// why) over every query (median and largest). Figures are judged against the targets; exit 1 when a figure
// cannot be measured (a target missed is reported, not failed: timings on a shared machine vary).
//
//   node bench/search.mjs [--queries FILE]... [--large N] [--rounds R] [--out FILE.json]
//   FASTSVC_DIST=/path/to/other/dist points it at another build.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliOptions } from './lib/cli-args.mjs';
import { generateManifest } from './lib/gen-manifest.mjs';
import { ROOT } from './lib/proc.mjs';
import { evaluate, percentile, readQueries, SPLITS } from './lib/search-eval.mjs';

const GITHUB = 'node_modules/@octokit/openapi/generated/api.github.com.json';
const QUERIES = ['bench/search/github-queries.yaml', 'bench/search/github-queries-2.yaml', 'bench/search/github-queries-3.yaml'];
export const TARGETS = { recall5: 0.9, p50Ms: 1, p99Ms: 5, buildShare: 0.1, buildRssMiB: 20, answerTokens: 1500 };
/** Queries for the generated catalog: its resources and operations in a user's words. */
const LARGE_QUERIES = ['create a new invoice for a customer', 'list the orders of a customer', 'delete a webhook', 'export the monthly report',
  'approve the refund', 'archive project 42', 'sync the warehouse stock', 'search tickets by priority', 'update the email of a user',
  'get the status of a shipment', 'find payments in EUR', 'add a comment to the task', 'who owns this account', 'tag an attachment'];
/** Passes over the queries after the cold one and before the timed rounds. */
const WARM_PASSES = 3;
const USAGE = 'usage: node bench/search.mjs [--queries FILE]... [--large N] [--rounds R] [--out FILE.json]';

const dist = process.env.FASTSVC_DIST ? resolve(process.env.FASTSVC_DIST) : join(ROOT, 'dist');
const mod = (p) => import(pathToFileURL(join(dist, p)).href);
const mib = () => process.memoryUsage().rss / 2 ** 20;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
function settledMiB() {
  globalThis.gc();
  globalThis.gc();
  return mib();
}

/** In the child: loads the catalog, builds the index, measures; resolves the figures. */
async function measure({ manifest, queries, rounds, github }) {
  const { loadManifest } = await mod('manifest/index.js');
  const { buildCatalog } = await mod('core/catalog.js');
  const { searchIndex } = await mod('catalog/search-index.js');
  const rss0 = settledMiB();
  let t = performance.now();
  let c = cpuMs();
  const loaded = await loadManifest(manifest, { SVC_TOKEN: 'bench-search-token-0123456789abcdef' });
  const catalog = buildCatalog(loaded.svc);
  const load = { ms: performance.now() - t, cpuMs: cpuMs() - c };
  const unserved = queries.flatMap((x) => (x.tools ?? []).filter((t) => !catalog.tools.has(t)));
  if (unserved.length) throw new Error(`the queries name tools the catalog does not serve: ${unserved.join(', ')}`);
  const rssLoaded = settledMiB();
  const heapLoaded = process.memoryUsage().heapUsed / 2 ** 20;
  t = performance.now();
  c = cpuMs();
  const ix = searchIndex(catalog);
  const build = { ms: performance.now() - t, cpuMs: cpuMs() - c };
  const rssIndexed = settledMiB();
  const buildHeapMiB = process.memoryUsage().heapUsed / 2 ** 20 - heapLoaded;
  // A policy filter as the server makes one (src/mcp/progressive.ts): the names of the tools the caller's listing holds
  // (here every tool whose scopes the caller holds), kept per catalog and scope set. `fresh`: a new filter function
  // per search (the index cannot reuse a verdict: the worst case, a caller of another scope set every search);
  // otherwise one per caller, reused.
  const held = new Set(['catalog.use']);
  const listed = new Set([...catalog.tools.values()].filter((e) => e.required.every((s) => held.has(s))).map((e) => e.def.name));
  const newFilter = () => (e) => listed.has(e.def.name);
  const filter = newFilter();
  const search = (q, limit = 10) => ix.tools.search(q, { limit, filter });
  const texts = queries.map((x) => x.q ?? x);
  // Cold: the first pass over the queries, a new filter each (V8 has not optimised the search yet: a server's first
  // searches after it starts); then WARM_PASSES more before anything is timed, so the figures are the steady state.
  const cold = [];
  for (const q of texts) {
    const s = process.hrtime.bigint();
    ix.tools.search(q, { limit: 10, filter: newFilter() });
    cold.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  for (let r = 0; r < WARM_PASSES; r++) for (const q of texts) search(q);
  const timed = (fresh) => {
    const wall = [];
    const cpu = [];
    for (let r = 0; r < rounds; r++) {
      for (const q of texts) {
        const f = fresh ? newFilter() : filter;
        const c0 = process.cpuUsage();
        const s = process.hrtime.bigint();
        ix.tools.search(q, { limit: 10, filter: f });
        wall.push(Number(process.hrtime.bigint() - s) / 1e6);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
      }
    }
    return { wall, cpu };
  };
  const fresh = timed(true);
  const reused = timed(false);
  const out = {
    tools: catalog.tools.size, load, build, rssBeforeMiB: rss0, rssLoadedMiB: rssLoaded, buildRssMiB: rssIndexed - rssLoaded, buildHeapMiB,
    coldP50Ms: percentile(cold, 50), coldMaxMs: Math.max(...cold),
    searches: fresh.wall.length, p50Ms: percentile(fresh.wall, 50), p99Ms: percentile(fresh.wall, 99), maxMs: Math.max(...fresh.wall),
    cpuP50Ms: percentile(fresh.cpu, 50), cpuP99Ms: percentile(fresh.cpu, 99),
    reusedP50Ms: percentile(reused.wall, 50), reusedP99Ms: percentile(reused.wall, 99),
  };
  if (github) {
    const names = (q) => search(q).matches.map((m) => m.name);
    // Each file's splits apart: the first file's as `tuning` and `heldout`, the second's as `tuning2`, `heldout2`…
    out.sets = [];
    for (const set of [...new Set(queries.map((x) => x.set))]) {
      for (const s of SPLITS) {
        const qs = queries.filter((x) => x.set === set && x.split === s);
        if (!qs.length) continue;
        const r = evaluate(qs, names, 5);
        const key = `${s}${set ? set + 1 : ''}`;
        out.sets.push(key);
        out[key] = { file: qs[0].file, n: r.n, recall1: r.recall1, recall5: r.recallK, mrr: r.mrr, misses: r.ranks.filter((x) => x.rank !== 1).map(({ q, expected, got, rank }) => ({ q, expected, got, rank })) };
      }
    }
    const { catalogCost, textCost } = await mod('catalog/catalog-cost.js');
    t = performance.now();
    const listing = catalogCost([...catalog.tools.values()].map((e) => e.wire));
    const tokenizeMs = performance.now() - t;
    const perTool = listing.perTool.map((x) => x.tokens);
    const answers = texts.map((q) => textCost(JSON.stringify(ix.tools.search(q, { limit: 5, filter }))).tokens);
    out.tokens = {
      listTools: listing.tools, listBytes: listing.bytes, listTokens: listing.tokens, tokenizeMs,
      toolMedian: percentile(perTool, 50), toolMax: Math.max(...perTool), answerMedian: percentile(answers, 50), answerMax: Math.max(...answers),
      example: { q: texts[0], answer: ix.tools.search(texts[0], { limit: 5, filter }) },
    };
  }
  return out;
}

/** Runs `measure` in a fresh `node --expose-gc` child; resolves its figures. */
function child(args) {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, '--child', JSON.stringify(args)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', rej);
    p.on('close', (code) => {
      if (code !== 0) return rej(new Error(`the measuring child exited ${code}`));
      try {
        res(JSON.parse(out));
      } catch (e) {
        rej(new Error(`the measuring child printed no figures: ${e.message}\n${out.slice(0, 500)}`));
      }
    });
  });
}

/** Measures both catalogs; resolves { github, large }. */
export async function runSearch({ queries = QUERIES.map((f) => resolve(ROOT, f)), large = 10_000, rounds = 20, out } = {}) {
  const labelled = queries.flatMap((file, set) => readQueries(file).map((x) => ({ ...x, set, file: relative(ROOT, file) })));
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-search-'));
  try {
    const gh = join(dir, 'github.svc.yaml');
    writeFileSync(gh, `# Generated by bench/search.mjs: GitHub's REST description as one openapi source.
version: 1
name: search-github
profile: { scopes: [{ name: catalog.use, description: Use the catalog. }] }
auth: { token: "\${SVC_TOKEN}", scopes: [catalog.use] }
openapi:
  - name: github
    document: ${resolve(ROOT, GITHUB)}
    required_scopes: [catalog.use]
`);
    const big = join(dir, 'large.svc.json');
    writeFileSync(big, generateManifest(large, { json: true }));
    const result = {
      github: await child({ manifest: gh, queries: labelled, rounds, github: true }),
      large: await child({ manifest: big, queries: LARGE_QUERIES, rounds: Math.max(1, rounds * 4) }),
    };
    if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 3 : 1) : '—');
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const verdict = (ok) => (ok ? 'met' : '**missed**');

/** Each query file's splits, named for the report: [name, figures]. */
const splitRows = (r) => r.github.sets.map((k) => [k.replace(/^heldout/, 'held out').replace(/(\D)(\d+)$/, '$1, set $2'), r.github[k]]);

/** The report: recall, latency, build cost and tokens, with each target's verdict. */
export function searchTable(r) {
  const rows = [];
  for (const [name, x] of splitRows(r)) {
    rows.push(`| recall@5, GitHub, ${name} queries (${x.n}, ${x.file}) | ${x.recall5.toFixed(3)} (recall@1 ${x.recall1.toFixed(3)}, MRR ${x.mrr.toFixed(3)}) | ≥ ${TARGETS.recall5} | ${verdict(x.recall5 >= TARGETS.recall5)} |`);
  }
  for (const [name, x] of [['GitHub', r.github], [`generated, ${r.large.tools.toLocaleString('en-US')} tools`, r.large]]) {
    rows.push(`| search p50, ${name} (${x.searches} searches, a new filter each) | ${f2(x.p50Ms)} ms (CPU ${f2(x.cpuP50Ms)}; filter reused: ${f2(x.reusedP50Ms)}) | ≤ ${TARGETS.p50Ms} ms | ${verdict(x.p50Ms <= TARGETS.p50Ms)} |`);
    rows.push(`| search p99, ${name} | ${f2(x.p99Ms)} ms (CPU ${f2(x.cpuP99Ms)}; filter reused: ${f2(x.reusedP99Ms)}; max ${f2(x.maxMs)}) | ≤ ${TARGETS.p99Ms} ms | ${verdict(x.p99Ms <= TARGETS.p99Ms)} |`);
    rows.push(`| first searches after the build (cold: not yet optimised), ${name} | p50 ${f2(x.coldP50Ms)} ms, max ${f2(x.coldMaxMs)} ms | — | — |`);
    const share = x.build.ms / x.load.ms;
    rows.push(`| index build, ${name} | ${f2(x.build.ms)} ms (CPU ${f2(x.build.cpuMs)}) = ${pct(share)} of the load's ${f2(x.load.ms)} ms (CPU ${pct(x.build.cpuMs / x.load.cpuMs)}) | ≤ ${pct(TARGETS.buildShare)} | ${verdict(share <= TARGETS.buildShare)} |`);
    rows.push(`| index RSS, ${name} | +${f2(x.buildRssMiB)} MiB (JS heap +${f2(x.buildHeapMiB)} MiB; catalog loaded: ${f2(x.rssLoadedMiB)} MiB) | ≤ ${TARGETS.buildRssMiB} MiB | ${verdict(x.buildRssMiB <= TARGETS.buildRssMiB)} |`);
  }
  const t = r.github.tokens;
  rows.push(`| a 5-match search answer, GitHub | ${t.answerMedian} tokens median, ${t.answerMax} largest | ≤ ${TARGETS.answerTokens.toLocaleString('en-US')} | ${verdict(t.answerMax <= TARGETS.answerTokens)} |`);
  const tokens = [
    '| listing | tools | bytes | tokens (o200k) |', '| --- | --- | --- | --- |',
    `| GitHub, direct tools/list (every tool in one answer) | ${t.listTools.toLocaleString('en-US')} | ${t.listBytes.toLocaleString('en-US')} | ${t.listTokens.toLocaleString('en-US')} |`,
    `| one tool's full definition (median / largest) | 1 | — | ${t.toolMedian.toLocaleString('en-US')} / ${t.toolMax.toLocaleString('en-US')} |`,
    `| a 5-match search answer (median / largest over ${splitRows(r).reduce((n, [, x]) => n + x.n, 0)} queries) | 5 | — | ${t.answerMedian} / ${t.answerMax} |`,
  ];
  return [`| figure | measured | target | verdict |\n| --- | --- | --- | --- |\n${rows.join('\n')}`, tokens.join('\n')].join('\n\n');
}

/** For bench/run.mjs: measures and returns the report's Markdown section. */
export async function runSearchSection({ outDir } = {}) {
  const r = await runSearch({ ...(outDir && { out: join(outDir, 'search.json') }) });
  return `## Search and catalog cost (bench/search.mjs; issue 39 points 3 and 5)\n\n${searchTable(r)}`;
}

async function main() {
  const opt = cliOptions({ queries: { type: 'string', multiple: true }, large: { type: 'string' }, rounds: { type: 'string' }, out: { type: 'string' } }, USAGE);
  const large = Number(opt.large ?? 10_000);
  const rounds = Number(opt.rounds ?? 20);
  if (!(Number.isInteger(large) && large >= 1 && Number.isInteger(rounds) && rounds >= 1)) {
    console.error(`--large and --rounds must be positive integers\n${USAGE}`);
    process.exit(2);
  }
  const r = await runSearch({ ...(opt.queries && { queries: opt.queries.map((f) => resolve(f)) }), large, rounds, ...(opt.out && { out: resolve(opt.out) }) });
  console.log(searchTable(r));
  for (const [name, x] of splitRows(r)) {
    console.log(`\n${name}: not first (rank 0 = not in the 10 best)`);
    for (const m of x.misses) console.log(`  ${m.rank}\t${m.q}\t→ want ${m.expected.join(' | ')}; got ${m.got.join(', ')}`);
  }
}

if (process.argv[2] === '--child') {
  measure(JSON.parse(process.argv[3])).then((r) => process.stdout.write(JSON.stringify(r)), (e) => {
    console.error(e);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
