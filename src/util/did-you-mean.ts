// "Did you mean …?" for a misspelt name. Guarantees: returns a candidate only
// when it is close — the same name up to case, `_` and `-` (requiredScopes →
// required_scopes), or within an edit distance of about a third of its length —
// and, of several, the closest (ties: the first listed); never the word itself.

export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const w = norm(word);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const d = norm(c) === w ? 0 : editDistance(word.toLowerCase(), c.toLowerCase());
    if (d <= Math.max(1, Math.floor(Math.max(word.length, c.length) / 3)) && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance with adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
