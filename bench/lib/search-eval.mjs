// Recall of a search over labelled queries. Guarantees: pure (readQueries reads one file); a query's rank is the
// 1-based position of the first expected tool among the search's matches, or 0 when none is among them (a miss
// counts 0 towards every figure); recall@k is the share of queries ranked 1..k, MRR the mean of 1/rank; a query
// file whose queries name no tool, a tool twice, or a split other than tuning/heldout is refused.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const SPLITS = ['tuning', 'heldout'];

/** The labelled queries of a YAML file: [{ q, tools, split }]. */
export function readQueries(file) {
  const doc = parse(readFileSync(file, 'utf8'));
  const qs = doc?.queries;
  if (!Array.isArray(qs) || !qs.length) throw new Error(`${file}: no queries`);
  qs.forEach((x, i) => {
    const where = `${file}: query ${i + 1}`;
    if (typeof x?.q !== 'string' || !x.q.trim()) throw new Error(`${where}: no text (q)`);
    if (!Array.isArray(x.tools) || !x.tools.length || x.tools.some((t) => typeof t !== 'string')) throw new Error(`${where}: tools must list tool names`);
    if (new Set(x.tools).size !== x.tools.length) throw new Error(`${where}: a tool named twice`);
    if (!SPLITS.includes(x.split)) throw new Error(`${where}: split must be one of ${SPLITS.join(', ')}`);
  });
  return qs;
}

/** `search(q)` → the names it ranks, best first. Resolves the figures and each query's rank. */
export function evaluate(queries, search, k = 5) {
  const ranks = queries.map((x) => {
    const names = search(x.q);
    const i = names.findIndex((n) => x.tools.includes(n));
    return { q: x.q, expected: x.tools, got: names.slice(0, k), rank: i === -1 ? 0 : i + 1 };
  });
  const n = ranks.length;
  const share = (pred) => (n ? ranks.filter(pred).length / n : 0);
  return {
    n,
    recall1: share((r) => r.rank === 1),
    recallK: share((r) => r.rank >= 1 && r.rank <= k),
    mrr: n ? ranks.reduce((s, r) => s + (r.rank ? 1 / r.rank : 0), 0) / n : 0,
    k,
    ranks,
  };
}

/** The percentile p (0..100) of `xs` (nearest rank). */
export function percentile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
