// `fastsvc cost`: what each endpoint's tool listing costs a model — tools, bytes of JSON and estimated tokens
// (o200k), per source and per tool, largest first — read from the manifest's policy alone, as explain reads it.
// Guarantees: the listing counted is the one the server would send a caller shown every tool (catalog/listing-cost.ts:
// each tool within one list page, in catalog order); the manifest is read for its policy only unless --io (no
// backend file, database or program opened, no socket); upstream MCP servers' tools are listed only at run time,
// so they are not counted and a note on stderr says which upstreams were left out; a listing past ADVISED is
// flagged with the same words `validate` warns with (LISTING_LARGE) when the endpoint lists it directly (direct, or
// auto below its thresholds, decided by catalog/discovery.ts as the server decides); a progressive endpoint's
// report adds what its own first tools/list (the meta-tools, 2025-11-25 session) costs; every endpoint of `endpoints:` is reported on its view (catalog/endpoint-view.ts), the
// default endpoint first; --json prints one object on stdout.

import type { Catalog } from '../core/catalog.js';
import { CALL_ROUTES } from '../core/config.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';
import { textCost, type Cost } from '../catalog/catalog-cost.js';
import { discoveryOf } from '../catalog/discovery.js';
import { viewOf } from '../catalog/endpoint-view.js';
import { ADVISED, listingCost, pastAdvised, type ListingCost } from '../catalog/listing-cost.js';
import { metaToolListing } from '../catalog/meta-tools.js';
import { loadOrPrint, opensFiles, servedCatalog, type Values } from './manifest.js';
import { tell, UsageError } from './output.js';

/** One endpoint as `cost` reports it. */
export interface EndpointCostReport {
  /** null: the default endpoint. */
  endpoint: string | null;
  /** Where it is served. */
  paths: string[];
  /** How the endpoint lists its tools: as declared (`auto` says which way the listing counted here takes it). */
  discovery: 'direct' | 'progressive' | 'auto (direct)' | 'auto (progressive)';
  /** What the endpoint's tools would cost listed directly (a progressive endpoint lists meta-tools instead). */
  listing: ListingCost;
  /** A progressive endpoint's own first tools/list: the meta-tools (as a 2025-11-25 session gets them, load_tools included). */
  meta_tools?: Cost;
  /** A direct endpoint's listing past ADVISED: what it is past. */
  past_advised?: string;
}

interface EndpointView {
  endpoint: string | null;
  paths: string[];
  view: Catalog;
}

/** The endpoints of a manifest, each with its catalog view: the default endpoint (the catalog itself) first, then endpoints: in order. */
export function endpointViews(m: SvcManifest, catalog: Catalog): EndpointView[] {
  const routes = CALL_ROUTES.filter((r) => [...m.routes?.public ?? [], ...m.routes?.protected ?? []].includes(r));
  return [
    { endpoint: null, paths: routes, view: catalog },
    ...[...catalog.endpoints?.values() ?? []].map((ep) => ({ endpoint: ep.name, paths: routes.map((r) => `${r}/${ep.name}`), view: viewOf(catalog, ep.name) })),
  ];
}

/** How an endpoint lists its tools, as the server decides it (auto says which way it went). */
export function listedAs(view: Catalog): EndpointCostReport['discovery'] {
  const d = discoveryOf(view);
  if (d.mode !== 'auto') return d.mode;
  return d.progressive ? 'auto (progressive)' : 'auto (direct)';
}

export async function cmdCost(file: string, v: Values): Promise<number> {
  const by = v.by ?? 'source';
  if (by !== 'source' && by !== 'tool') throw new UsageError('--by takes source or tool');
  const reports = await loadOrPrint(file, v, opensFiles(v, false) ? 'probe' : 'policy', (l) => {
    const m = l.plan.manifest;
    const all = endpointViews(m, servedCatalog(l));
    // `default` names the default endpoint (no endpoint may take that name).
    const chosen = typeof v.endpoint === 'string' ? all.filter((e) => (e.endpoint ?? 'default') === v.endpoint) : all;
    if (!chosen.length) return `no endpoint ${String(v.endpoint)} in the manifest's endpoints`;
    const upstreams = (m.upstreams ?? []).map((u) => u.name);
    return {
      upstreams,
      endpoints: chosen.map(({ endpoint, paths, view }): EndpointCostReport => {
        const listing = listingCost(view);
        const progressive = discoveryOf(view).progressive;
        const past = progressive ? undefined : pastAdvised(listing);
        return {
          endpoint, paths, discovery: listedAs(view), listing,
          ...(progressive && { meta_tools: textCost(JSON.stringify({ tools: metaToolListing(true) })) }),
          ...(past && { past_advised: past }),
        };
      }),
    };
  });
  if (reports === undefined) return 1;
  if (typeof reports === 'string') return tell('cost', reports);
  if (reports.upstreams.length) tell('cost', `not counted: the tools of upstream ${reports.upstreams.join(', ')} (an upstream lists them only when the server connects to it)`, 0);
  if (v.json) process.stdout.write(JSON.stringify({ file, tokenizer: 'o200k_base', advised: ADVISED, endpoints: reports.endpoints }, null, 2) + '\n');
  else process.stdout.write(reports.endpoints.map((r) => formatReport(r, by)).join('\n\n') + '\n');
  return 0;
}

const n = (x: number) => x.toLocaleString('en');

/** One endpoint: its head line, then its sources (or its tools), largest first, each with its share of the tokens. */
export function formatReport(r: EndpointCostReport, by: 'source' | 'tool'): string {
  const c = r.listing;
  const name = r.endpoint === null ? `default endpoint (${r.paths.join(' ') || 'no call route'})` : `endpoint ${r.endpoint} (${r.paths.join(' ')})`;
  const listed = `${n(c.tools)} tool${c.tools === 1 ? '' : 's'}, ${n(c.bytes)} bytes, ~${n(c.tokens)} tokens (o200k)`;
  const head = r.meta_tools
    ? `${name}: ${r.discovery} — tools/list lists its meta-tools (${n(r.meta_tools.bytes)} bytes, ~${n(r.meta_tools.tokens)} tokens); its tools, listed directly, would be ${listed}`
    : `${name}: ${r.discovery} — tools/list lists ${listed}`;
  const advice = r.past_advised ? [`  past the advised size (${r.past_advised}): most models choose tools worse past ~40, and every request carries the listing; serve it with discovery: auto or progressive, or split it into endpoints`] : [];
  const share = (t: number) => (c.tokens ? `${((100 * t) / c.tokens).toFixed(1)}%` : '-');
  const rows = by === 'source'
    ? c.bySource.map((s) => [s.source, s.kind, `${n(s.tools)} tool${s.tools === 1 ? '' : 's'}`, `${n(s.bytes)} B`, `~${n(s.tokens)} tokens`, share(s.tokens)])
    : c.byTool.map((t) => [t.name, t.source, `${n(t.bytes)} B`, `~${n(t.tokens)} tokens`, share(t.tokens)]);
  return [head, ...advice, `  by ${by}, largest first:`, ...table(rows)].join('\n');
}

/** Rows as aligned columns: text left, figures right. */
function table(rows: string[][]): string[] {
  if (!rows.length) return ['    (none)'];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const numeric = (cell: string) => /^[~\d]/.test(cell) || cell.endsWith('%') || cell === '-';
  return rows.map((r) => '    ' + r.map((cell, i) => (numeric(cell) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}
