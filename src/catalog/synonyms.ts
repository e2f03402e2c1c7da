// The words a user types → the terms a catalog writes: what a query term also matches, and how much
// such a match counts. Guarantees: pure tables over stems (./terms.ts), applied to queries only (the
// index holds each definition's own words); a query term always matches itself at full weight; a
// file name or path becomes the word `file`, "turn on/off" enable/disable, "stop following" unfollowing
// (and following), and an abbreviation is spelt out, before the query is cut into terms; a user's word for a
// catalog's concept (CI, bot) matches the catalog's word one way only; an expansion never outweighs the term
// it comes from. Kept small and general to API catalogs (no product's
// vocabulary); each rule and group was kept only when it raised recall on the tuning queries
// (bench/search.mjs, docs/performance.md).

import { words } from './terms.js';

/** A file name or path in a query (`package.json`, `src/index.ts`): a value, not a capability's word. */
const FILE_NAME = /(?:[\w.-]+\/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}\b/g;

/** The words of a query, with a file name or path said as `file` and abbreviations spelt out. */
export function queryWords(query: string): string[] {
  const out: string[] = [];
  for (const w of words(query.replace(FILE_NAME, ' file ').replace(PHRASAL, (_, verb: string, on: string) => ` ${on === 'on' ? 'enable' : 'disable'} `))) {
    // "stop following" is "unfollow": the un- form first, the verb kept.
    if (out[out.length - 1] === 'stop' && w.endsWith('ing') && w.length > 5) out[out.length - 1] = `un${w}`;
    out.push(...(ABBREVIATIONS.get(w) ?? w).split(' '));
  }
  return out;
}

/** Phrasal verbs of switching: "turn on" is enable, "switch off" disable. */
const PHRASAL = /\b(turn|switch)\s+(on|off)\b/gi;

/** Abbreviations spelt out before the query is cut into terms (lower-case word → words). */
export const ABBREVIATIONS: ReadonlyMap<string, string> = new Map([
  ['pr', 'pull request'], ['prs', 'pull requests'],
]);

/** Stems that name the same thing (a short and a long form): each matches the others at full weight. */
const SAME: readonly (readonly string[])[] = [
  ['repo', 'repositori'], ['org', 'organ'], ['config', 'configur'], ['env', 'environ'], ['info', 'inform'],
];

/** Stems of related words (verbs of the same act; git's branch and ref; diff and compare): each matches the others at RELATED_WEIGHT. */
const RELATED: readonly (readonly string[])[] = [
  ['creat', 'make', 'new', 'add'],
  ['delet', 'remov', 'drop', 'destroi', 'kick'],
  ['updat', 'edit', 'chang', 'modifi'],
  ['get', 'show', 'view', 'read', 'fetch', 'retriev', 'see'],
  ['list', 'show', 'see'],
  ['search', 'find', 'look'],
  ['branch', 'ref'],
  ['diff', 'compar'],
  ['invit', 'add'],
];

export const RELATED_WEIGHT = 0.5;

/** Users' words for a catalog's concept, one way (the catalog's word does not match the user's): CI is workflows and actions, a bot is an app. */
const USER_WORDS: readonly (readonly [string, readonly string[]])[] = [
  ['ci', ['workflow', 'action']],
  ['bot', ['app']],
];

/**
 * Stop words that still say something about the capability wanted: the user speaking of themself, whom APIs
 * call "the authenticated user". Each matches its stem at RELATED_WEIGHT, unless the query says the stem itself.
 */
const HINTS: ReadonlyMap<string, string> = new Map([
  ['i', 'authent'], ['me', 'authent'], ['my', 'authent'], ['mine', 'authent'],
]);

/** Verbs whose `me` is whom something is given, not whose it is ("show me the repos of user x"). */
const TO_ME = new Set(['show', 'tell', 'give', 'let', 'help', 'send', 'find', 'get', 'bring']);

/** The stem a stop word hints at (after `previous`, the query's word before it), or undefined. */
export function hintOf(word: string, previous: string | undefined): string | undefined {
  return word === 'me' && previous !== undefined && TO_ME.has(previous) ? undefined : HINTS.get(word);
}

const table = new Map<string, Map<string, number>>();
const relate = (groups: readonly (readonly string[])[], weight: number) => {
  for (const g of groups) {
    for (const a of g) {
      let m = table.get(a);
      if (!m) table.set(a, (m = new Map()));
      for (const b of g) if (b !== a && !(m.get(b)! >= weight)) m.set(b, weight);
    }
  }
};
relate(SAME, 1);
relate(RELATED, RELATED_WEIGHT);
for (const [user, catalog] of USER_WORDS) {
  let m = table.get(user);
  if (!m) table.set(user, (m = new Map()));
  for (const c of catalog) m.set(c, RELATED_WEIGHT);
}

/** The stems a query stem also matches, with the weight of such a match (below or equal to 1). */
export function expansions(stem: string): ReadonlyMap<string, number> | undefined {
  return table.get(stem);
}
