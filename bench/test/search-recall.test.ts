// The search bench (bench/search.mjs, bench/lib/search-eval.mjs, bench/search/github-queries*.yaml): the recall
// arithmetic on a search whose answers are known (rank of the first expected tool, a miss counting 0); a query file
// that names no tool, a tool twice or an unknown split is refused; the labelled sets themselves — at least 80 queries,
// a held-out third, and a second file of at least 60, all held out — every expected tool a real operation of GitHub's
// description (the operationId, slashes made dots), no query an operationId or written twice; and one short run of the script (GitHub's catalog and 300 generated tools, one round) that
// must exit 0 with every figure measured and a verdict row per target. No timing is judged here.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, ROOT } from '../../test/helpers/cli.js';
import { evaluate, percentile, readQueries } from '../lib/search-eval.mjs';

const QUERIES = join(ROOT, 'bench/search/github-queries.yaml');
const QUERIES_2 = join(ROOT, 'bench/search/github-queries-2.yaml');
const GITHUB = join(ROOT, 'node_modules/@octokit/openapi/generated/api.github.com.json');

describe('bench search (recall, latency, build cost, tokens)', function () {
  this.timeout(300_000); // the script bounds nothing itself, but loads GitHub's 13 MB description once
  const dir = mkdtempSync(join(tmpdir(), 'bench-search-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('scores the rank of the first expected tool: recall@1, recall@k and MRR, a miss counting 0', () => {
    const answers: Record<string, string[]> = { a: ['x', 'y'], b: ['z', 'y', 'w'], c: ['q'], d: ['p', 'r', 's', 't', 'u', 'v'] };
    const qs = [
      { q: 'a', tools: ['x'], split: 'tuning' }, // rank 1
      { q: 'b', tools: ['w', 'y'], split: 'tuning' }, // rank 2 (y before w)
      { q: 'c', tools: ['nope'], split: 'tuning' }, // miss
      { q: 'd', tools: ['v'], split: 'tuning' }, // rank 6: outside the 5
    ];
    const r = evaluate(qs, (q: string) => answers[q]!, 5);
    assert.deepEqual(r.ranks.map((x: { rank: number }) => x.rank), [1, 2, 0, 6]);
    assert.equal(r.recall1, 0.25);
    assert.equal(r.recallK, 0.5);
    assert.equal(r.mrr, (1 + 1 / 2 + 0 + 1 / 6) / 4);
    assert.equal(percentile([5, 1, 4, 2, 3], 50), 3);
    assert.equal(percentile([1, 2, 3, 4, 100], 99), 100);
  });

  it('refuses a query file with a query that names no tool, a tool twice, or an unknown split', () => {
    const bad = {
      'no tools': '  - { q: "a", tools: [], split: tuning }',
      twice: '  - { q: "a", tools: [x, x], split: tuning }',
      split: '  - { q: "a", tools: [x], split: test }',
      'no text': '  - { q: "", tools: [x], split: tuning }',
    };
    for (const [what, line] of Object.entries(bad)) {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, `queries:\n${line}\n`);
      assert.throws(() => readQueries(file), /query 1/, what);
    }
  });

  it('labels at least 80 tasks, a third held out, and a second held-out set of at least 60, each with real GitHub operations, none phrased as an operationId', () => {
    const qs = readQueries(QUERIES);
    assert.ok(qs.length >= 80, `${qs.length} queries`);
    const held = qs.filter((x: { split: string }) => x.split === 'heldout').length;
    assert.ok(held >= Math.floor(qs.length / 3), `${held} of ${qs.length} held out`);
    const second = readQueries(QUERIES_2);
    assert.ok(second.length >= 60, `${second.length} queries in the second set`);
    assert.ok(second.every((x: { split: string }) => x.split === 'heldout'), 'the second set is held out whole');
    const doc = JSON.parse(readFileSync(GITHUB, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ops = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((o) => (o && typeof o === 'object' && typeof o.operationId === 'string' ? [o.operationId.replace(/\//g, '.')] : []))));
    const all = [...qs, ...second];
    for (const x of all) {
      for (const t of x.tools) assert.ok(ops.has(t), `${x.q}: ${t} is not an operation of the description`);
      assert.ok(![...ops].some((op) => x.q.includes(op)), `${x.q} names an operationId`);
    }
    assert.equal(new Set(all.map((x: { q: string }) => x.q)).size, all.length, 'a query written twice');
  });

  it('runs on GitHub\'s catalog and a generated one, measuring every figure and judging every target', async () => {
    const out = join(dir, 'search.json');
    const r = await run(['--rounds', '1', '--large', '300', '--out', out], { program: [process.execPath, 'bench/search.mjs'] });
    assert.equal(r.code, 0, `search.mjs exited ${r.code ?? r.signal}\n${r.stdout}\n${r.stderr.slice(-4000)}`);
    const data = JSON.parse(readFileSync(out, 'utf8'));
    assert.ok(data.github.tools > 1000, `${data.github.tools} GitHub tools`);
    assert.equal(data.large.tools, 300);
    for (const c of [data.github, data.large]) {
      for (const k of ['p50Ms', 'p99Ms', 'cpuP50Ms', 'reusedP50Ms', 'coldP50Ms', 'coldMaxMs', 'buildRssMiB', 'rssLoadedMiB']) assert.ok(Number.isFinite(c[k]), `${k}: ${c[k]}`);
      assert.ok(c.load.ms > 0 && c.build.ms > 0 && c.build.cpuMs >= 0, JSON.stringify({ load: c.load, build: c.build }));
    }
    assert.deepEqual(data.github.sets, ['tuning', 'heldout', 'heldout2', 'tuning3']);
    for (const s of data.github.sets) {
      const x = data.github[s];
      assert.ok(x.n > 0 && x.recall5 >= x.recall1 && x.recall5 <= 1 && x.mrr >= x.recall1 * 1 - 1e-9, `${s}: ${JSON.stringify(x)}`);
    }
    const t = data.github.tokens;
    assert.ok(t.listTokens > 100_000 && t.listBytes > t.listTokens, `listing: ${t.listTokens} tokens, ${t.listBytes} bytes`);
    assert.ok(t.answerMedian > 0 && t.answerMax >= t.answerMedian, `answers: ${t.answerMedian}, ${t.answerMax}`);
    assert.equal(t.example.answer.matches.length, 5);
    for (const what of ['recall@5, GitHub, tuning', 'recall@5, GitHub, held out queries', 'recall@5, GitHub, held out, set 2', 'search p50, GitHub', 'search p99, generated', 'index build, GitHub', 'index RSS, generated', 'a 5-match search answer']) {
      assert.match(r.stdout, new RegExp(`^\\| ${what}.* \\| (met|\\*\\*missed\\*\\*) \\|$`, 'm'), `no verdict row for ${what}\n${r.stdout}`);
    }
    assert.match(r.stdout, /^\| first searches after the build \(cold: not yet optimised\), generated, 300 tools \| p50 [\d.]+ ms, max [\d.]+ ms \| — \| — \|$/m);
    assert.match(r.stdout, /^\| GitHub, direct tools\/list \(every tool in one answer\) \| [\d,]+ \| [\d,]+ \| [\d,]+ \|$/m);
  });
});
