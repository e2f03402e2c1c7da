// What a listing costs a model: tools, bytes and tokens, in total and per tool (and per source when
// the caller says which tool comes from where).
//
// API: catalogCost(listing, { sourceOf? }) → CatalogCost; textCost(text) → { bytes, tokens }.
//
// Tokens are counted with OpenAI's o200k_base encoding (GPT-4o and later) by `gpt-tokenizer`, loaded
// on first use: every model's tokenizer differs, so the figure is an estimate of what a host spends
// on the JSON it is given, not of what it spends after re-shaping it into its own tool format.
// Guarantees: bytes are the UTF-8 length of the JSON text; a listing's total is counted on the whole
// answer's `{"tools":[…]}` text (so it is exact for that text), a tool's on its own definition's
// JSON — tool counts therefore add up to about the total, not exactly; per-tool rows come in listing
// order; pure but for loading the tokenizer once.

import { lazyRequire } from '../util/lazy-require.js';

type Tokenizer = { countTokens(text: string): number };
const o200k = lazyRequire<Tokenizer>('gpt-tokenizer/encoding/o200k_base');

export interface Cost {
  bytes: number;
  tokens: number;
}

export interface CatalogCost extends Cost {
  tools: number;
  /** Each tool's definition, in listing order. */
  perTool: (Cost & { name: string })[];
  /** Per source (as `sourceOf` names them), sorted by name; absent without `sourceOf`. */
  perSource?: (Cost & { source: string; tools: number })[];
}

/** The bytes and o200k tokens of a text. */
export function textCost(text: string): Cost {
  return { bytes: Buffer.byteLength(text, 'utf8'), tokens: text ? o200k().countTokens(text) : 0 };
}

/** The cost of a `tools/list` answer made of `listing` (tool definitions as the wire lists them: name, description, inputSchema, …). */
export function catalogCost(listing: readonly Readonly<Record<string, unknown>>[], opts: { sourceOf?: (name: string) => string } = {}): CatalogCost {
  const perTool = listing.map((t) => ({ name: String(t.name), ...textCost(JSON.stringify(t)) }));
  const total = textCost(JSON.stringify({ tools: listing }));
  const out: CatalogCost = { tools: listing.length, ...total, perTool };
  if (opts.sourceOf) {
    const by = new Map<string, Cost & { source: string; tools: number }>();
    for (const t of perTool) {
      const source = opts.sourceOf(t.name);
      const row = by.get(source) ?? { source, tools: 0, bytes: 0, tokens: 0 };
      row.tools++;
      row.bytes += t.bytes;
      row.tokens += t.tokens;
      by.set(source, row);
    }
    out.perSource = [...by.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  }
  return out;
}
