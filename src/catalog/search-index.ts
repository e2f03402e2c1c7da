// Search over a catalog: a query in a user's words → the capabilities that best match it, each
// with a one-line summary, its arguments in brief, a score and why it matched — what a discovery
// meta-tool answers with, before a model asks for a full definition.
//
// API (all of it):
//   searchIndex(catalog)                  the catalog's indexes, built on the first call and kept with the catalog
//   .tools / .prompts / .resources        one SearchIndex per kind (a resource by its URI or URI template)
//   SearchIndex.search(query, { limit, filter? }) → { matches: [{ name, title?, summary, args, score, why }], total }
//   buildSearchIndex(entries, kind)       an index over any entries (tests, benchmarks)
//
// Ranking: BM25F (Robertson & Zaragoza 2009). Each definition is a document of fields — its name
// (split on `.`, `_`, `-`, `/` and camelCase), title, description, argument names (and a tool argument's string enum
// values: state: closed, event: APPROVE), argument
// descriptions (the input schema's properties and, one level down, an object argument's
// properties), tags and source (the `openapi` source or upstream it comes from) — each with a weight
// and a length normalisation (WEIGHTS); text becomes terms by ./terms.ts (stop words out, Porter
// stems). A query term also matches its synonyms (./synonyms.ts: a few general groups, weighted), from 4
// characters the longer index terms it starts (react → reaction, at WEIGHTS.prefix), and, when the catalog
// never uses it, the catalog's words one edit away (lsit → list, at WEIGHTS.fuzzy); a plural where the query
// reads or names no act ("runners for this repo") also asks for `list` (WEIGHTS.pluralList). The 50
// best are then re-ranked, each score raised by the share of the definition's name the query covers,
// each name word weighed by how rare it is among the catalog's definitions (WEIGHTS.nameCoverage):
// "list branches" prefers list-branches to list-branches-for-head-commit, and an uncovered "fork"
// costs more than an uncovered "user"; and by the act (./intent.ts): where the query asks to read, write
// or delete and a tool's annotations say what it does, a tool that does that act is raised (WEIGHTS.act)
// and one that does another lowered (WEIGHTS.actMiss) — "leave a comment" prefers creating one to listing; and a
// tool whose OpenAPI operation is deprecated is lowered (WEIGHTS.deprecated), below the operation that replaces it.
// Every weight was measured on the tuning queries of bench/search/github-queries.yaml and github-queries-3.yaml
// (bench/search.mjs; docs/performance.md gives the figures, the held-out sets' too).
//
// Guarantees: the index is built once per catalog object (a catalog never changes: a reload builds
// a new one, and so a new index, on its first search) and holds no entry objects but the catalog's
// own; a search is synchronous and deterministic — the same query, filter verdicts and catalog give
// the same matches in the same order whatever order the catalog lists them in, ties broken by name
// (code-unit order); the filter (the caller's policy) is asked about an entry before it is ranked, and
// an entry it refuses is never returned, never counted in `total` and never counted in a query term's
// document frequency (what else scores use — the number of definitions of the kind, their average
// field lengths, how rare a name's words are across all of them — orders admitted matches and names
// no definition); every field named in `why` holds the term, and `why` names at most 3 fields a term; `limit` is clamped to 1..100;
// a query's cost grows with the postings of its terms, never with the catalog's size alone — but for a
// word the catalog never uses, which is compared with the catalog's words of about its length.

import type { Catalog, PromptEntry, ResourceEntry, ToolEntry } from '../core/catalog.js';
import { DIGITS, term, words } from './terms.js';
import { expansions, hintOf, queryWords, RELATED_WEIGHT } from './synonyms.js';
import { briefArgs, docOf, summary, type Doc, type SearchKind } from './documents.js';
import { definitionAct, queryAct, type Act } from './intent.js';

export type { SearchKind };

export interface SearchOptions<E> {
  /** At most this many matches (1..100). */
  limit: number;
  /**
   * The caller's policy: only entries it admits are ranked, returned or counted. It must be a pure function of
   * the entry: its verdicts are kept with the function object (so a caller that searches again with the same
   * function, e.g. one per session and catalog, asks it about each entry once).
   */
  filter?: (entry: E) => boolean;
}

export interface SearchMatch {
  /** What the capability is called by: a tool's or prompt's name, a resource's URI or URI template. */
  name: string;
  title?: string;
  /** One line: the title, else the description's first sentence (Markdown links and emphasis removed), at most 160 characters. */
  summary: string;
  /**
   * The arguments in brief: names in schema order, `?` after an optional one, an object argument's own
   * properties in braces (`owner, repo, body?: {title, state?}`), at most 12 (8 in braces) then `…`.
   */
  args: string;
  /** BM25F score, rounded to 3 decimals (higher is better; comparable within one search only). */
  score: number;
  /**
   * Each query word that matched, with the fields that hold it — name, title, description, tags, source, or
   * arg:PATH (an argument's name or description) — the strongest first (by field weight; an argument whose name
   * holds it before one whose description does) and at most 3, and `via`, the definition's word, when that is not
   * the query's (a plural, another form, or a synonym: "make" via "Create").
   */
  why: { term: string; via?: string; fields: string[] }[];
}

export interface SearchResult {
  matches: SearchMatch[];
  /** How many admitted definitions match at least one query term. */
  total: number;
}

export interface SearchIndex<E> {
  readonly kind: SearchKind;
  /** Definitions indexed. */
  readonly size: number;
  search(query: string, opts: SearchOptions<E>): SearchResult;
}

/** The fields of a document, in bit order of a posting's mask. */
const FIELDS = ['name', 'title', 'description', 'argName', 'argText', 'tags', 'source'] as const;
type Field = (typeof FIELDS)[number];

/** Field weights and length normalisation (b), BM25's k1, and the query-side weights: measured on the tuning queries (docs/performance.md). */
export const WEIGHTS: { readonly k1: number; readonly nameCoverage: number; readonly prefix: number; readonly act: number; readonly actMiss: number; readonly fuzzy: number; readonly pluralList: number; readonly deprecated: number; readonly fields: Readonly<Record<Field, Readonly<{ w: number; b: number }>>> } = Object.freeze({
  k1: 1.5,
  nameCoverage: 1,
  prefix: 0.3,
  act: 0.1,
  actMiss: 0.2,
  fuzzy: 0.7,
  pluralList: RELATED_WEIGHT,
  deprecated: 0.2,
  fields: Object.freeze({
    name: { w: 3, b: 0.9 }, title: { w: 3, b: 0.9 }, description: { w: 0.3, b: 0.75 },
    argName: { w: 0.7, b: 0.5 }, argText: { w: 0.4, b: 0.75 }, tags: { w: 1, b: 0.3 }, source: { w: 0.5, b: 0 },
  }),
});

/** A query term: the query word, and the index terms it matches with their weights (itself: 1). */
interface Group {
  word: string;
  terms: Map<string, number>;
}

interface Posting {
  /** The term's id (its index in `surface`). */
  id: number;
  docs: Int32Array;
  /** BM25F's weighted, length-normalised term frequency of the term in each doc. */
  tf: Float32Array;
  /** Which fields of each doc hold the term (bit i: FIELDS[i]). */
  fields: Uint8Array;
}

const MAX_LIMIT = 100;
const ACTS: readonly Act[] = ['read', 'write', 'delete'];
const WRITE = 2;
const DELETE = 3;
const LIST = term('list')!;
/** The fields a match's `why` names for a term, strongest first (by weight), and how many at most. */
const BY_WEIGHT = FIELDS.map((_, i) => i).sort((a, b) => WEIGHTS.fields[FIELDS[b]!].w - WEIGHTS.fields[FIELDS[a]!].w);
const WHY_FIELDS = 3;
/** How many of BM25F's best the second stage re-ranks. */
const RERANK = 50;
/** A query term of at least PREFIX_MIN characters also matches up to PREFIX_MAX longer index terms it starts (react → reaction). */
const PREFIX_MIN = 4;
const PREFIX_MAX = 8;
/** A query word the catalog does not use, of at least FUZZY_MIN characters, also matches the catalog's words one edit away (lsit → list). */
const FUZZY_MIN = 4;
const MAX_FUZZY_LENGTH = 40;

const indexes = new WeakMap<Catalog, { tools: SearchIndex<ToolEntry>; prompts: SearchIndex<PromptEntry>; resources: SearchIndex<ResourceEntry> }>();

/** The catalog's search indexes, built on the first call for that catalog object and kept with it. */
export function searchIndex(catalog: Catalog): { tools: SearchIndex<ToolEntry>; prompts: SearchIndex<PromptEntry>; resources: SearchIndex<ResourceEntry> } {
  let ix = indexes.get(catalog);
  if (!ix) {
    ix = {
      tools: buildSearchIndex([...catalog.tools.values()], 'tool'),
      prompts: buildSearchIndex([...catalog.prompts.values()], 'prompt'),
      resources: buildSearchIndex([...catalog.resources.values(), ...catalog.templates], 'resource'),
    };
    indexes.set(catalog, ix);
  }
  return ix;
}

export function buildSearchIndex(entries: readonly ToolEntry[], kind: 'tool'): SearchIndex<ToolEntry>;
export function buildSearchIndex(entries: readonly PromptEntry[], kind: 'prompt'): SearchIndex<PromptEntry>;
export function buildSearchIndex(entries: readonly ResourceEntry[], kind: 'resource'): SearchIndex<ResourceEntry>;
export function buildSearchIndex(entries: readonly (ToolEntry | PromptEntry | ResourceEntry)[], kind: SearchKind): SearchIndex<ToolEntry | PromptEntry | ResourceEntry> {
  return new BM25FIndex(entries, kind);
}

class BM25FIndex<E> implements SearchIndex<E> {
  readonly size: number;
  private readonly postings = new Map<string, Posting>();
  /** Each term's first word in the catalog, by term id (what `why` shows as `via`). */
  private readonly surface: readonly string[];
  /** Each word of the catalog → its term id (-1: a stop word). */
  private readonly wordIds: ReadonlyMap<string, number>;
  /** The term ids of each text many definitions share (arguments' names and descriptions, enum values, tags, sources), as cut at build time. */
  private readonly cut: ReadonlyMap<string, readonly number[]>;
  private readonly cutCamel: ReadonlyMap<string, readonly number[]>;
  /** Each term id's term. */
  private readonly vocabOf: readonly string[];
  /** The catalog's words by length, for misspellings: made on the first query that needs them. */
  private byLength?: string[][];
  /** Every index term, sorted (code-unit order), for prefix matches. */
  private readonly vocabulary: readonly string[];
  /** Each doc's name: equal scores are ordered by it (code-unit order). */
  private readonly names: readonly string[];
  /** Each doc's act (ACTS index + 1; 0: unknown). */
  private readonly acts: Uint8Array;
  /** Each doc: 1 when it is deprecated (a tool whose OpenAPI operation says so). */
  private readonly deprecated: Uint8Array;
  /** Each doc's name terms, each once. */
  private readonly nameIds: Int32Array;
  /** Where each doc's name terms start in nameIds (doc n's end where doc n+1's start). */
  private readonly nameStart: Int32Array;
  /** Each term id's weight in a name: ln(1 + N / df), df counted over all docs. */
  private readonly nameWeight: Float32Array;
  /** Per search: the score of each doc, the filter's verdict (stamped with the search's number). */
  private readonly score: Float64Array;
  private readonly seen: Uint32Array;
  private readonly admitted: Uint8Array;
  /** Each doc's one-line summary and arguments in brief, made when it is first a match. */
  private readonly summaries: (string | undefined)[] = [];
  private readonly briefs: (string | undefined)[] = [];
  /** Each filter's verdicts, for as long as the filter object lives. */
  private readonly verdicts = new WeakMap<object, Uint8Array>();
  private stamp = 0;
  /** Per query term: its pseudo term frequency in each doc (stamped with the term's number). */
  private readonly groupTf: Float64Array;
  private readonly groupSeen: Uint32Array;
  private readonly touched: Int32Array;
  private readonly groupDocs: Int32Array;
  private groupStamp = 0;

  constructor(private readonly entries: readonly E[], readonly kind: SearchKind) {
    // One pass over the definitions (arguments and tags first, then name, title, description and source: the order that
    // fixes each term's first word, `via` in a match) writes each one's term ids, field by field, into one flat buffer (no Doc, argument
    // or per-field array is kept per definition) and counts each term's documents; a second lays out the postings.
    const n = entries.length;
    this.size = n;
    const acts = (this.acts = new Uint8Array(n));
    const deprecated = (this.deprecated = new Uint8Array(n));
    this.score = new Float64Array(n);
    this.seen = new Uint32Array(n);
    this.admitted = new Uint8Array(n);
    this.groupTf = new Float64Array(n);
    this.groupSeen = new Uint32Array(n);
    this.touched = new Int32Array(n);
    this.groupDocs = new Int32Array(n);
    const ids = new Map<string, number>();
    const vocab: string[] = [];
    const surface: string[] = [];
    const idOfWord = new Map<string, number>();
    // A text many definitions share (an argument's name or description, a tag, a source) is cut once.
    const cut = new Map<string, number[]>();
    const cutCamel = new Map<string, number[]>();
    const NF = FIELDS.length;
    /** The current definition's term ids, per field (reused from one definition to the next). */
    const fieldIds: number[][] = FIELDS.map(() => []);
    const termIds = (text: string | undefined, field: number, camel = false, repeats = false): void => {
      if (!text) return;
      const out = fieldIds[field]!;
      if (repeats) {
        const known = (camel ? cutCamel : cut).get(text);
        if (known !== undefined) {
          for (let i = 0; i < known.length; i++) out.push(known[i]!);
          return;
        }
      }
      const cache = repeats ? (camel ? cutCamel : cut) : undefined;
      const start = out.length;
      for (const w of words(text, camel)) {
        // A number is never a term (terms.ts): not looked up, not remembered (a catalog's operation numbers would fill the map).
        if (w.charCodeAt(0) <= 57 && DIGITS.test(w)) continue;
        let id = idOfWord.get(w);
        if (id === undefined) {
          const t = term(w);
          id = t === undefined ? -1 : ids.get(t) ?? -1;
          if (t !== undefined && id === -1) {
            id = vocab.push(t) - 1;
            surface.push(w);
            ids.set(t, id);
          }
          idOfWord.set(w, id);
        }
        if (id !== -1) out.push(id);
      }
      cache?.set(text, out.slice(start));
    };
    const names: string[] = new Array(n);
    /** Each definition's fields' lengths (doc * NF + field), and all their term ids, in doc then field order. */
    const fieldLen = new Int32Array(n * NF);
    let tokens = new Int32Array(Math.max(64, n * 16));
    let nTokens = 0;
    let df = new Int32Array(256);
    let lastDoc = new Int32Array(256).fill(-1);
    const nameStart = new Int32Array(n + 1);
    const nameIds: number[] = [];
    const totals = new Float64Array(NF);
    // Per definition, in functions of their own: called once per definition, they are optimised early (a loop body
    // inside the constructor waits for on-stack replacement).
    const readDoc = (doc: number): void => {
      const e = entries[doc] as unknown as ToolEntry | PromptEntry | ResourceEntry;
      if (kind === 'tool') {
        const { def, wire } = e as ToolEntry;
        names[doc] = def.name;
        acts[doc] = ACTS.indexOf(definitionAct(def.annotations) as Act) + 1;
        if (def.deprecated) deprecated[doc] = 1;
        argTerms(wire.inputSchema, undefined, termIds);
        if (def.tags) for (const t of def.tags) termIds(t, 5, false, true);
        termIds(def.name, 0, true);
        termIds(def.title ?? (def.annotations?.title as string | undefined), 1);
        termIds(def.description, 2);
        termIds(def.source?.name, 6, false, true);
      } else {
        const d = docOf(e as PromptEntry | ResourceEntry, kind);
        names[doc] = d.name;
        for (const a of d.args) {
          termIds(a.path, 3, true, true);
          termIds(a.description, 4, false, true);
        }
        termIds(d.name, 0, true);
        termIds(d.title, 1);
        termIds(d.description, 2);
        termIds(d.source, 6, false, true);
      }
      if (vocab.length > df.length) {
        const size = Math.max(vocab.length, df.length * 2);
        const grown = new Int32Array(size);
        grown.set(df);
        df = grown;
        const last = new Int32Array(size).fill(-1);
        last.set(lastDoc);
        lastDoc = last;
      }
      for (let f = 0; f < NF; f++) {
        const list = fieldIds[f]!;
        const len = list.length;
        fieldLen[doc * NF + f] = len;
        totals[f] += len;
        if (nTokens + len > tokens.length) {
          const grown = new Int32Array(Math.max(tokens.length * 2, nTokens + len));
          grown.set(tokens.subarray(0, nTokens));
          tokens = grown;
        }
        for (let i = 0; i < len; i++) {
          const id = list[i]!;
          tokens[nTokens++] = id;
          if (lastDoc[id] !== doc) {
            lastDoc[id] = doc;
            df[id]++;
            // The name is the first field: the terms first met in it are the name's, each once.
            if (f === 0) nameIds.push(id);
          }
        }
        list.length = 0;
      }
      nameStart[doc + 1] = nameIds.length;
    };
    for (let doc = 0; doc < n; doc++) readDoc(doc);
    this.names = names;
    this.nameStart = nameStart;
    this.nameIds = Int32Array.from(nameIds);
    const nv = vocab.length;
    const avg = Array.from(totals, (t) => t / Math.max(1, n) || 1);
    // Pass 2: BM25F's pseudo term frequency of each term in each doc, written straight to its term's postings (docs
    // are visited in order, so each term's docs are ascending).
    const perTerm = new Int32Array(nv + 1);
    for (let id = 0; id < nv; id++) perTerm[id + 1] = perTerm[id]! + df[id]!;
    const total = perTerm[nv]!;
    const docsBy = new Int32Array(total);
    const tfBy = new Float32Array(total);
    const fieldsBy = new Uint8Array(total);
    const next = perTerm.slice(0, nv);
    const acc = new Float64Array(nv);
    const mask = new Uint8Array(nv);
    const ws = FIELDS.map((f) => WEIGHTS.fields[f].w);
    const bs = FIELDS.map((f) => WEIGHTS.fields[f].b);
    const inDoc = new Int32Array(nv);
    /** Writes doc's postings from its tokens, which start at k; returns where the next doc's start. */
    const postDoc = (doc: number, k: number): number => {
      let nIn = 0;
      for (let f = 0; f < NF; f++) {
        const len = fieldLen[doc * NF + f]!;
        const w = ws[f]!;
        if (!len) continue;
        const from = k;
        k += len;
        if (w <= 0) continue;
        const b = bs[f]!;
        const unit = w / (1 - b + (b * len) / avg[f]!);
        const bit = 1 << f;
        for (let i = from; i < k; i++) {
          const id = tokens[i]!;
          if (mask[id] === 0) inDoc[nIn++] = id;
          acc[id] += unit;
          mask[id] |= bit;
        }
      }
      for (let j = 0; j < nIn; j++) {
        const id = inDoc[j]!;
        const at = next[id]!++;
        docsBy[at] = doc;
        tfBy[at] = acc[id]!;
        fieldsBy[at] = mask[id]!;
        acc[id] = 0;
        mask[id] = 0;
      }
      return k;
    };
    for (let doc = 0, k = 0; doc < n; doc++) k = postDoc(doc, k);
    this.nameWeight = new Float32Array(nv);
    for (let id = 0; id < nv; id++) {
      const from = perTerm[id]!;
      const to = perTerm[id + 1]!;
      this.postings.set(vocab[id]!, { id, docs: docsBy.subarray(from, to), tf: tfBy.subarray(from, to), fields: fieldsBy.subarray(from, to) });
      this.nameWeight[id] = Math.log(1 + n / Math.max(1, to - from));
    }
    this.surface = surface;
    this.wordIds = idOfWord;
    this.cut = cut;
    this.cutCamel = cutCamel;
    this.vocabOf = vocab;
    this.vocabulary = [...vocab].sort();
  }

  search(query: string, opts: SearchOptions<E>): SearchResult {
    const limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(opts.limit) || 1));
    const words = queryWords(query);
    const act = ACTS.indexOf(queryAct(words) as Act) + 1;
    const groups = this.queryGroups(words, act);
    if (!groups.length) return { matches: [], total: 0 };
    const stamp = this.nextStamp();
    // The filter's verdicts, kept with the filter object (0: not asked yet, 1: admitted, 2: refused).
    const filter = opts.filter;
    let verdicts: Uint8Array | undefined;
    if (filter) {
      verdicts = this.verdicts.get(filter);
      if (!verdicts) this.verdicts.set(filter, (verdicts = new Uint8Array(this.size)));
    }
    // Docs scored so far, and the current query term's docs: buffers kept with the index (a search is synchronous).
    const touched = this.touched;
    let nTouched = 0;
    const docs = this.groupDocs;
    const k1 = WEIGHTS.k1;
    for (const g of groups) {
      // The group's pseudo term frequency in each admitted doc: its terms' frequencies, each times its weight.
      const gs = this.nextGroupStamp();
      let nDocs = 0;
      for (const [t, weight] of g.terms) nDocs = this.gather(this.postings.get(t)!, weight, gs, nDocs, stamp, verdicts, filter);
      if (!nDocs) continue;
      const idf = Math.log(1 + (this.size - nDocs + 0.5) / (nDocs + 0.5));
      for (let j = 0; j < nDocs; j++) {
        const doc = docs[j]!;
        if (this.score[doc] === 0) touched[nTouched++] = doc;
        const tf = this.groupTf[doc]!;
        this.score[doc] += (idf * tf) / (k1 + tf);
      }
    }
    // Second stage: the best by BM25F, each raised by the share of its name the query covers.
    const alpha = WEIGHTS.nameCoverage;
    const pool = this.best(touched.subarray(0, nTouched), Math.max(limit, RERANK));
    if (alpha > 0) {
      const matched = new Set<number>();
      for (const g of groups) for (const t of g.terms.keys()) matched.add(this.postings.get(t)!.id);
      for (const doc of pool) {
        let hit = 0;
        let all = 0;
        for (let i = this.nameStart[doc]!; i < this.nameStart[doc + 1]!; i++) {
          const id = this.nameIds[i]!;
          const w = this.nameWeight[id]!;
          all += w;
          if (matched.has(id)) hit += w;
        }
        if (all > 0) this.score[doc] *= 1 + (alpha * hit) / all;
      }
    }
    // The act the query asks for (read, write, delete) raises the definitions that do it.
    if (act > 0) {
      for (const doc of pool) {
        const a = this.acts[doc]!;
        if (a === act) this.score[doc] *= 1 + WEIGHTS.act;
        else if (a > 0) this.score[doc] *= 1 - WEIGHTS.actMiss;
      }
    }
    // A deprecated definition gives way to its peers (the operation that replaces it, most often).
    if (WEIGHTS.deprecated > 0) for (const doc of pool) if (this.deprecated[doc]) this.score[doc] *= 1 - WEIGHTS.deprecated;
    const top = this.best(pool, limit);
    return { matches: top.map((doc) => this.match(doc, groups)), total: nTouched };
  }

  /**
   * Adds a term's postings to the current query term's pseudo term frequencies (times `weight`), for the docs the
   * filter admits (asked once per doc and search; its verdicts kept with it); returns how many docs the query term has.
   * A method of its own, so that V8 optimises the loop once for every search.
   */
  private gather(p: Posting, weight: number, gs: number, nDocs: number, stamp: number, verdicts: Uint8Array | undefined, filter: ((entry: E) => boolean) | undefined): number {
    const { seen, admitted, groupSeen, groupTf, groupDocs } = this;
    for (let i = 0; i < p.docs.length; i++) {
      const doc = p.docs[i]!;
      if (seen[doc] !== stamp) {
        seen[doc] = stamp;
        this.score[doc] = 0;
        if (verdicts) {
          if (verdicts[doc] === 0) verdicts[doc] = filter!(this.entries[doc]!) ? 1 : 2;
          admitted[doc] = verdicts[doc] === 1 ? 1 : 0;
        } else admitted[doc] = 1;
      }
      if (admitted[doc] !== 1) continue;
      if (groupSeen[doc] !== gs) {
        groupSeen[doc] = gs;
        groupTf[doc] = 0;
        groupDocs[nDocs++] = doc;
      }
      groupTf[doc] += weight * p.tf[i]!;
    }
    return nDocs;
  }

  /** The query's terms, each once with the query word it came from and the index terms it matches (itself and its expansions, weighted). */
  private queryGroups(queryWords: readonly string[], act: number): Group[] {
    const groups: Group[] = [];
    const covered = new Set<string>();
    const hints: [string, string][] = [];
    let previous: string | undefined;
    for (const w of queryWords) {
      const hint = hintOf(w, previous);
      previous = w;
      if (hint !== undefined) hints.push([w, hint]);
      const t = term(w);
      if (t === undefined || covered.has(t)) continue;
      // A plural where the query reads (or says no verb) asks for a list: "runners for this repo", "show the artifacts".
      if (WEIGHTS.pluralList > 0 && act !== WRITE && act !== DELETE && isPlural(w, t) && this.postings.has(t)) hints.push([w, LIST]);
      covered.add(t);
      const g: Group = { word: w, terms: new Map() };
      if (this.postings.has(t)) g.terms.set(t, 1);
      for (const [x, weight] of expansions(t) ?? []) {
        if (weight === 1) covered.add(x);
        if (this.postings.has(x)) g.terms.set(x, weight);
      }
      if (t.length >= PREFIX_MIN && WEIGHTS.prefix > 0) for (const x of this.withPrefix(t)) if (!g.terms.has(x)) g.terms.set(x, WEIGHTS.prefix);
      // A word the catalog never uses may be a misspelt one it does: its words one edit away.
      if (!this.postings.has(t) && w.length >= FUZZY_MIN && WEIGHTS.fuzzy > 0) for (const x of this.oneEditAway(w)) if (!g.terms.has(x)) g.terms.set(x, WEIGHTS.fuzzy);
      if (g.terms.size) groups.push(g);
    }
    // A hint counts only where the query does not say its term itself.
    for (const [w, t] of hints) {
      if (covered.has(t) || !this.postings.has(t)) continue;
      covered.add(t);
      groups.push({ word: w, terms: new Map([[t, t === LIST ? WEIGHTS.pluralList : RELATED_WEIGHT]]) });
    }
    return groups;
  }

  /** The index terms of the catalog's words one edit (an insertion, a deletion, a substitution or two neighbours swapped) from `w`. */
  private oneEditAway(w: string): string[] {
    if (!this.byLength) {
      this.byLength = [];
      for (const [word, id] of this.wordIds) if (id !== -1 && word.length <= MAX_FUZZY_LENGTH) (this.byLength[word.length] ??= []).push(word);
    }
    const out = new Set<string>();
    for (let len = w.length - 1; len <= w.length + 1; len++) {
      for (const x of this.byLength[len] ?? []) if (oneEdit(w, x)) out.add(this.vocabOf[this.wordIds.get(x)!]!);
    }
    return [...out].sort();
  }

  /** Index terms that start with `t` and are longer (at most PREFIX_MAX, the shortest first). */
  private withPrefix(t: string): string[] {
    const v = this.vocabulary;
    let lo = 0;
    let hi = v.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (v[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < v.length && v[i]!.startsWith(t); i++) out.push(v[i]!);
    return out.sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, PREFIX_MAX);
  }

  private nextStamp(): number {
    if (++this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  private nextGroupStamp(): number {
    if (++this.groupStamp === 0xffffffff) {
      this.groupSeen.fill(0);
      this.groupStamp = 1;
    }
    return this.groupStamp;
  }

  /** The `limit` best docs, best first; ties by name. */
  private best(docs: ArrayLike<number>, limit: number): number[] {
    const top: number[] = [];
    const score = this.score;
    const names = this.names;
    const before = (a: number, b: number) => score[a]! > score[b]! || (score[a] === score[b] && names[a]! < names[b]!);
    for (let j = 0; j < docs.length; j++) {
      const doc = docs[j]!;
      if (top.length === limit && !before(doc, top[limit - 1]!)) continue;
      // Binary search for its place among the kept ones.
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (before(doc, top[mid]!)) hi = mid;
        else lo = mid + 1;
      }
      // Insert in place (no array made per insertion: a search may insert thousands of times among ties).
      if (top.length < limit) top.push(doc);
      for (let i = top.length - 1; i > lo; i--) top[i] = top[i - 1]!;
      top[lo] = doc;
    }
    return top;
  }

  /** Whether `text` holds the term `id`. */
  private holds(text: string | undefined, id: number, camel = false): boolean {
    if (!text) return false;
    // A text many definitions share was cut at build time: its ids are kept (no words cut again per match).
    const known = (camel ? this.cutCamel : this.cut).get(text);
    if (known) return known.includes(id);
    // An argument's path (body.title): its parent's name, then its own.
    const dot = camel ? text.indexOf('.') : -1;
    if (dot > 0) {
      const parent = this.cutCamel.get(text.slice(0, dot));
      const own = this.cutCamel.get(text.slice(dot + 1));
      if (parent && own) return parent.includes(id) || own.includes(id);
    }
    return words(text, camel).some((w) => this.wordIds.get(w) === id);
  }

  private match(doc: number, groups: readonly Group[]): SearchMatch {
    // The definition as text only when something needs it (an argument in `why`, a first summary), once.
    const entry = this.entries[doc] as ToolEntry | PromptEntry | ResourceEntry;
    let d: Doc | undefined;
    const why: SearchMatch['why'] = [];
    for (const g of groups) {
      for (const t of g.terms.keys()) {
        const p = this.postings.get(t)!;
        const at = indexOf(p.docs, doc);
        if (at === -1) continue;
        // The strongest fields that hold the term (by field weight), at most WHY_FIELDS: an argument by its name first.
        const fields: string[] = [];
        const bits = p.fields[at]!;
        for (const i of BY_WEIGHT) {
          if (fields.length === WHY_FIELDS) break;
          if (!(bits & (1 << i))) continue;
          const f = FIELDS[i]!;
          if (f !== 'argName' && f !== 'argText') {
            fields.push(f);
            continue;
          }
          for (const a of (d ??= docOf(entry, this.kind)).args) {
            if (fields.length === WHY_FIELDS) break;
            const holds = f === 'argName' ? this.holds(a.path, p.id, true) || (a.values !== undefined && a.values.some((v) => this.holds(v, p.id, true))) : this.holds(a.description, p.id);
            if (!holds) continue;
            const field = `arg:${a.path}`;
            if (f === 'argName' || !fields.includes(field)) fields.push(field);
          }
        }
        const via = this.surface[p.id]!;
        why.push(via === g.word ? { term: g.word, fields } : { term: g.word, via, fields });
        break;
      }
    }
    const name = this.names[doc]!;
    const title = this.kind === 'tool' ? ((entry as ToolEntry).def.title ?? ((entry as ToolEntry).def.annotations?.title as string | undefined)) : (d ??= docOf(entry, this.kind)).title;
    // A definition's one line and arguments in brief are made the first time it is a match, and kept.
    const line = (this.summaries[doc] ??= summary((d ??= docOf(entry, this.kind))));
    const args = (this.briefs[doc] ??= briefArgs(entry, this.kind));
    const score = Math.round(this.score[doc]! * 1000) / 1000;
    return title ? { name, title, summary: line, args, score, why } : { name, summary: line, args, score, why };
  }

}

/** A tool's arguments' term ids (docOf's args, in its order): each argument's name (a nested one's path: its parent's then its own), description and string enum values. */
function argTerms(schema: unknown, parent: string | undefined, termIds: (text: string | undefined, field: number, camel?: boolean, repeats?: boolean) => void): void {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return;
  for (const name in props) {
    if (parent !== undefined) termIds(parent, 3, true, true);
    termIds(name, 3, true, true);
    const s = props[name] as { description?: unknown; enum?: unknown; properties?: unknown } | null | undefined;
    if (!s) continue;
    if (typeof s.description === 'string') termIds(s.description, 4, false, true);
    // An enumerated value names what the argument sets or picks (state: closed, event: APPROVE): read as its name is.
    if (s.enum !== undefined && Array.isArray(s.enum)) for (const v of s.enum) if (typeof v === 'string') termIds(v, 3, true, true);
    if (parent === undefined && s.properties !== undefined) argTerms(s, name, termIds);
  }
}

/** Whether the query word `w` (term `t`) is a plural: it ends in s, and without it (or with -ies as -y) it is the same term. */
function isPlural(w: string, t: string): boolean {
  if (w.length < 4 || w[w.length - 1] !== 's' || /(ss|us|is)$/.test(w)) return false;
  return term(w.slice(0, -1)) === t || (w.endsWith('ies') && term(`${w.slice(0, -3)}y`) === t);
}

/** Whether `a` and `b` differ by one edit: one character inserted, deleted or replaced, or two neighbours swapped. */
function oneEdit(a: string, b: string): boolean {
  if (a === b) return false;
  if (a.length > b.length) [a, b] = [b, a];
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return b.length - a.length === 1 && a.slice(i) === b.slice(i + 1);
}

/** The position of `x` in the ascending `a`, or -1. */
function indexOf(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! === x) return mid;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
