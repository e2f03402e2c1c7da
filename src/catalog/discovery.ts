// Whether a catalog (the default endpoint's, or an endpoint's view) is shown to MCP clients directly or
// progressively, as its `discovery` setting says: direct, progressive, or auto — progressive when the listing
// has more than auto_tools tools or costs more than auto_tokens estimated tokens (o200k: the JSON text of every
// tool's definition, as catalogCost counts a listing).
// Guarantees: decided once per catalog object (a catalog never changes: a reload or an upstream's list change
// builds a new one, decided again) and never per caller — the thresholds are measured on everything the
// catalog serves, so a caller cannot change how an endpoint lists by what it may see; tokens are counted only
// when the tool count alone did not decide (auto with at most auto_tools tools); a catalog without `discovery`
// is direct and costs one property read.

import type { Catalog } from '../core/catalog.js';
import type { Logger } from '../log.js';
import { textCost } from './catalog-cost.js';
import { shadowedTools } from './meta-tools.js';

export interface DiscoveryDecision {
  readonly progressive: boolean;
  /** The setting that decided (direct when the catalog has none). */
  readonly mode: 'direct' | 'progressive' | 'auto';
  /** What was measured and why, in one line (logged at start and at every reload). */
  readonly why: string;
}

const DIRECT: DiscoveryDecision = Object.freeze({ progressive: false, mode: 'direct', why: 'direct: every tool is listed' });
const decided = new WeakMap<Catalog, DiscoveryDecision>();

/** How `cat` lists its tools to MCP clients. */
export function discoveryOf(cat: Catalog): DiscoveryDecision {
  const d = cat.discovery;
  if (d === undefined || d.mode === 'direct') return DIRECT;
  let out = decided.get(cat);
  if (!out) decided.set(cat, (out = decide(cat)));
  return out;
}

/** The catalog is progressive: a property read for a direct one. */
export function isProgressive(cat: Catalog): boolean {
  return cat.discovery !== undefined && discoveryOf(cat).progressive;
}

function decide(cat: Catalog): DiscoveryDecision {
  const d = cat.discovery!;
  if (d.mode !== 'auto') return Object.freeze({ progressive: true, mode: 'progressive', why: 'progressive: tools/list shows the discovery meta-tools' });
  const tools = cat.tools.size;
  if (tools > d.auto_tools) {
    return Object.freeze({ progressive: true, mode: 'auto', why: `auto → progressive: ${tools} tools, more than auto_tools ${d.auto_tools}` });
  }
  const listing = [...cat.tools.values()].filter((e) => !e.appOnly).map((e) => e.wire);
  const tokens = textCost(JSON.stringify({ tools: listing })).tokens;
  return tokens > d.auto_tokens
    ? Object.freeze({ progressive: true, mode: 'auto', why: `auto → progressive: the listing costs ${tokens} tokens, more than auto_tokens ${d.auto_tokens}` })
    : Object.freeze({ progressive: false, mode: 'auto', why: `auto → direct: ${tools} tools (auto_tools ${d.auto_tools}), ${tokens} tokens (auto_tokens ${d.auto_tokens})` });
}

/** A progressive endpoint's own line, after the catalog's instructions: how its tools are found. */
export const PROGRESSIVE_INSTRUCTIONS = 'This server lists its tools on demand: search_tools finds the tools for a task, describe_tools gives their full definitions, call_tool runs one.';

const instructed = new WeakMap<Catalog, string>();

/** The instructions an MCP client is given (initialize, server/discover): a progressive catalog's end with how to find its tools. */
export function instructionsOf(cat: Catalog): string | undefined {
  if (!isProgressive(cat)) return cat.instructions;
  let out = instructed.get(cat);
  if (out === undefined) instructed.set(cat, (out = cat.instructions ? `${cat.instructions}\n\n${PROGRESSIVE_INSTRUCTIONS}` : PROGRESSIVE_INSTRUCTIONS));
  return out;
}

/**
 * Logs how `cat` (`endpoint`: which endpoint serves it) lists its tools — at start-up and at every change of its tools —
 * when it has a discovery setting; and warns of real tools a meta-tool hides (still called through call_tool).
 */
export function logDiscovery(log: Logger, cat: Catalog, endpoint = 'default'): void {
  if (cat.discovery === undefined) return;
  const d = discoveryOf(cat);
  log.info({ event: 'discovery', endpoint, mode: d.mode, progressive: d.progressive }, `endpoint ${endpoint}: ${d.why}`);
  const shadowed = d.progressive ? shadowedTools(cat) : [];
  if (shadowed.length) {
    log.warn({ event: 'discovery.shadowed', endpoint, tools: shadowed }, `endpoint ${endpoint}: the meta-tool${shadowed.length > 1 ? 's' : ''} ${shadowed.join(', ')} hide${shadowed.length > 1 ? '' : 's'} the tool${shadowed.length > 1 ? 's' : ''} of the same name, which call_tool still calls`);
  }
}
