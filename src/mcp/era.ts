// Which MCP era serves a request, decided by what the request itself says (never by
// configuration), per the 2026-07-28 versioning rules for a dual-era server.
// Guarantees: a request carrying the modern _meta protocolVersion is modern; a request on a
// 2025 session, a 2025 initialize, or one naming a 2025 MCP-Protocol-Version is legacy; a
// request naming any other version (2026-07-28, or one nobody serves) is modern, so it gets
// the revision's own answers (-32022, 404/-32601) rather than 2025 session errors.

import { PROTOCOL_VERSIONS } from './protocol.js';

export type Era = 'legacy' | 'modern';

export interface EraSignals {
  /** The Mcp-Session-Id header (HTTP) or the socket's session having been initialized (/ws). */
  session: boolean;
  method?: string;
  /** The MCP-Protocol-Version header, when the transport has one. */
  headerVersion?: string;
  /** params._meta["io.modelcontextprotocol/protocolVersion"], if present at all. */
  metaVersion?: unknown;
}

const MODERN_ONLY = new Set(['server/discover', 'subscriptions/listen']);

export function eraOf(s: EraSignals): Era {
  if (s.metaVersion !== undefined) return 'modern';
  if (s.session) return 'legacy';
  const hv = s.headerVersion;
  if (hv === undefined) return s.method !== undefined && MODERN_ONLY.has(s.method) ? 'modern' : 'legacy';
  return PROTOCOL_VERSIONS.includes(hv) ? 'legacy' : 'modern';
}
