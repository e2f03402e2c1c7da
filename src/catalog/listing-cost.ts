// What an endpoint's tool listing costs a model, read off a catalog view (the default endpoint's view is the
// catalog itself; a named endpoint's is the Catalog its selection makes): the whole `tools/list` answer, each
// source's share and each tool's, largest first — what `fastsvc cost` prints, what `explain` sums for a
// caller, what `validate` weighs against ADVISED.
//
// API: listingCost(view, { shown?, apps? }) → ListingCost; listingTotal(view, opts) → its total alone, remembered;
// listedTools(view, opts) → the definitions it counts; sourceName(def); ADVISED; pastAdvised(cost).
//
// Guarantees: the listing is the one the server sends — each tool's `wire` (within one list page of
// server.list_page_bytes, as the catalog fitted it; `appsWire` for a client that declares MCP Apps), in
// catalog order, only the tools `shown` keeps (default: every tool) — and is counted by catalogCost (o200k
// tokens, UTF-8 bytes; the total on the whole answer's text); a source is named as an endpoint's
// `select.sources` names it (an `openapi` source's or upstream's name, `manifest` for the manifest's own);
// rows are sorted by tokens, then bytes, largest first, ties by name (code-unit order), so the same catalog
// gives the same report; listingTotal counts a catalog's listing for one set of tools once (a catalog never
// changes), keeping a few sets per catalog; pure but for loading the tokenizer once.

import type { Catalog, ToolEntry } from '../core/catalog.js';
import type { ToolDef } from '../core/types.js';
import { catalogCost, textCost, type Cost } from './catalog-cost.js';

export interface SourceCost extends Cost {
  /** The `openapi` source's or upstream's name; `manifest` for the manifest's own tools. */
  source: string;
  kind: 'manifest' | 'openapi' | 'upstream';
  tools: number;
}

export interface ToolCost extends Cost {
  name: string;
  source: string;
}

export interface ListingCost extends Cost {
  tools: number;
  /** Largest first. */
  bySource: SourceCost[];
  /** Largest first. */
  byTool: ToolCost[];
}

/**
 * Past either, a listing served whole is too large for a model to use well (docs/manifest.md#what-a-listing-costs):
 * tool selection degrades past ~30–40 tools, and 20,000 tokens is a tenth of a 200k context window (a sixth of
 * 128k) spent before the user has asked anything. They are the thresholds `discovery: auto` switches at by default.
 */
export const ADVISED = Object.freeze({ tools: 40, tokens: 20_000 });

/** The source a tool is counted under: the name an endpoint's `select.sources` gives it. */
export function sourceName(def: Pick<ToolDef, 'source'>): string {
  return def.source?.name ?? 'manifest';
}

export interface Listed {
  /** Keep only the tools this says a caller is shown (default: every tool of the view). */
  shown?: (e: ToolEntry) => boolean;
  /** A client that declares MCP Apps (a tool with a view is listed with its _meta.ui). */
  apps?: boolean;
}

/** The tools the listing holds: their entries, and their definitions as the wire lists them. */
export function listedTools(view: Catalog, opts: Listed = {}): { entries: ToolEntry[]; listing: Readonly<Record<string, unknown>>[] } {
  const entries = [...view.tools.values()].filter((e) => opts.shown?.(e) ?? true);
  return { entries, listing: entries.map((e) => (opts.apps ? e.appsWire ?? e.wire : e.wire)) };
}

export function listingCost(view: Catalog, opts: Listed = {}): ListingCost {
  const { entries, listing } = listedTools(view, opts);
  const kinds = new Map<string, SourceCost['kind']>();
  const sources = new Map<string, string>();
  for (const e of entries) {
    const source = sourceName(e.def);
    sources.set(e.def.name, source);
    kinds.set(source, e.def.source?.kind ?? 'manifest');
  }
  const c = catalogCost(listing, { sourceOf: (name) => sources.get(name)! });
  return {
    tools: c.tools, bytes: c.bytes, tokens: c.tokens,
    bySource: c.perSource!.map((s) => ({ source: s.source, kind: kinds.get(s.source)!, tools: s.tools, bytes: s.bytes, tokens: s.tokens })).sort((a, b) => largest(a, b, a.source, b.source)),
    byTool: c.perTool.map((t) => ({ name: t.name, source: sources.get(t.name)!, bytes: t.bytes, tokens: t.tokens })).sort((a, b) => largest(a, b, a.name, b.name)),
  };
}

export interface ListingTotal extends Cost {
  tools: number;
}

/** Totals already counted, per catalog and set of tools shown (explain asks per caller: a large listing takes a good part of a second). */
const totals = new WeakMap<Catalog, Map<string, ListingTotal>>();
const TOTALS_KEPT = 16;

/** The listing's total alone: what a caller shown these tools is sent. */
export function listingTotal(view: Catalog, opts: Listed = {}): ListingTotal {
  const { entries, listing } = listedTools(view, opts);
  const key = `${opts.apps ? 'apps' : ''}\n${entries.map((e) => e.def.name).join('\n')}`;
  let kept = totals.get(view);
  const found = kept?.get(key);
  if (found) return found;
  const total = { tools: listing.length, ...textCost(JSON.stringify({ tools: listing })) };
  if (!kept) totals.set(view, (kept = new Map()));
  if (kept.size >= TOTALS_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key, total);
  return total;
}

/** Whether a listing is past ADVISED, and by what: undefined when it is not. */
export function pastAdvised(c: { tools: number; tokens: number }): string | undefined {
  const past = [
    ...(c.tools > ADVISED.tools ? [`more than ${ADVISED.tools} tools`] : []),
    ...(c.tokens > ADVISED.tokens ? [`more than ${ADVISED.tokens.toLocaleString('en')} tokens`] : []),
  ];
  return past.length ? past.join(' and ') : undefined;
}

function largest(a: Cost, b: Cost, an: string, bn: string): number {
  return b.tokens - a.tokens || b.bytes - a.bytes || (an < bn ? -1 : an > bn ? 1 : 0);
}
