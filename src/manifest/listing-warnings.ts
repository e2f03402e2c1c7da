// LISTING_LARGE, the advice `fastsvc validate` gives when an endpoint that lists its tools directly lists more than a
// model uses well: past ADVISED (catalog/listing-cost.ts — 40 tools, or 20,000 o200k tokens), tool selection
// degrades and the listing takes a good share of the context window before the user has asked anything
// (docs/manifest.md#what-a-listing-costs says why those figures). Guarantees: the listing weighed is the one the
// server sends a caller shown every tool (the catalog assembled for its policy only — nothing opened, no backend
// built — each tool fitted to a list page as the server fits it); the tokenizer is loaded only when the tool count
// or the byte count (a token is at least one byte) could be past ADVISED, so a small manifest never pays for it;
// the warning is located at the endpoint — the top of the file for the default endpoint — and says the tools,
// bytes and tokens, what they are past, and the way out; the default endpoint (top-level `discovery`) and each
// endpoint of `endpoints:` that lists directly (no `discovery`, or mode direct) is weighed on its own view, located at its key (`discovery: auto`, endpoints, `fastsvc cost`); upstream
// MCP servers' tools are listed only at run time and are not weighed; never throws for a valid plan's catalog.

import { buildCatalog } from '../core/catalog.js';
import { CALL_ROUTES } from '../core/config.js';
import { textCost } from '../catalog/catalog-cost.js';
import { ADVISED, listedTools, pastAdvised } from '../catalog/listing-cost.js';
import { viewOf } from '../catalog/endpoint-view.js';
import { assemble } from './assemble.js';
import type { Plan } from './compile.js';
import type { Warning } from './warnings.js';

type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export async function listingWarnings(plan: Plan, file: string, hash: string, locate: Locate): Promise<Warning[]> {
  const m = plan.manifest;
  const assembled = await assemble(plan, file, hash, locate, { policyOnly: true });
  try {
    const server = m.server!;
    const catalog = buildCatalog(assembled.svc, { hash, listPage: { size: server.list_page_size!, bytes: server.list_page_bytes! } });
    const routes = [...m.routes?.public ?? [], ...m.routes?.protected ?? []];
    const paths = CALL_ROUTES.filter((r) => routes.includes(r));
    // The default endpoint and the named ones, each that lists directly (no discovery, or mode direct; auto is the operator's own threshold).
    const endpoints = [
      { label: `the default endpoint (${paths.join(' ')})`, path: [] as (string | number)[], view: catalog },
      ...[...catalog.endpoints?.values() ?? []]
        .map((ep) => ({ label: `endpoint ${ep.name} (${paths.map((r) => `${r}/${ep.name}`).join(' ')})`, path: ['endpoints', ep.name], view: viewOf(catalog, ep.name) })),
    ].filter((e) => (e.view.discovery?.mode ?? 'direct') === 'direct');
    const out: Warning[] = [];
    for (const e of endpoints) {
      const { listing } = listedTools(e.view);
      const text = JSON.stringify({ tools: listing });
      const bytes = Buffer.byteLength(text, 'utf8');
      if (listing.length <= ADVISED.tools && bytes <= ADVISED.tokens) continue;
      const tokens = textCost(text).tokens;
      const past = pastAdvised({ tools: listing.length, tokens });
      if (!past) continue;
      const n = (x: number) => x.toLocaleString('en');
      out.push({
        code: 'LISTING_LARGE', path: e.path,
        message: `${e.label} lists its tools directly: ${n(listing.length)} tools, ${n(bytes)} bytes, ~${n(tokens)} tokens (o200k) in every tools/list, `
          + `${past}: models choose tools worse past ~30-40, and the listing takes context before the user asks anything; `
          + 'add discovery: auto (a few meta-tools that search, describe and call, past 40 tools or 20,000 tokens) or split the catalog into endpoints; '
          + '`fastsvc cost` shows what each source and tool costs',
      });
    }
    return out;
  } finally {
    assembled.dispose();
  }
}
