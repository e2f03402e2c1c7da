// Which MCP era serves a request, decided by what the request itself says (never by
// configuration), per the 2026-07-28 versioning rules for a dual-era server.
// Guarantees: a request carrying the modern _meta protocolVersion is modern; a request on a
// 2025 session, a 2025 initialize, or one naming a 2025 MCP-Protocol-Version is legacy; a
// request naming any other version (2026-07-28, or one nobody serves) is modern, so it gets
// the revision's own answers (-32022, 404/-32601) rather than 2025 session errors. A batch
// (an array) is always legacy: 2026-07-28 has none. The signals are read in one place.

import { META, PROTOCOL_VERSIONS } from './constants.js';

export type Era = 'legacy' | 'modern';

const MODERN_ONLY = new Set(['server/discover', 'subscriptions/listen']);

/**
 * The era of one parsed message (or batch). `session`: the request names a 2025 session (HTTP's
 * Mcp-Session-Id) or arrives on one already initialized (/ws); `headerVersion`: the
 * MCP-Protocol-Version header, on transports that have headers.
 */
export function eraOf(body: unknown, session: boolean, headerVersion?: string): Era {
  if (Array.isArray(body)) return 'legacy';
  if (body === null || typeof body !== 'object') return byHeaders(session, headerVersion);
  const m = body as { method?: unknown; params?: unknown };
  const params = m.params !== null && typeof m.params === 'object' ? (m.params as { _meta?: unknown }) : undefined;
  const meta = params && params._meta !== null && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : undefined;
  if (meta?.[META.protocolVersion] !== undefined) return 'modern';
  if (session) return 'legacy';
  if (headerVersion === undefined) return typeof m.method === 'string' && MODERN_ONLY.has(m.method) ? 'modern' : 'legacy';
  return PROTOCOL_VERSIONS.includes(headerVersion) ? 'legacy' : 'modern';
}

/** The era of a request without a body (HTTP GET and DELETE): its session and version headers alone. */
export function byHeaders(session: boolean, headerVersion?: string): Era {
  if (session || headerVersion === undefined) return 'legacy';
  return PROTOCOL_VERSIONS.includes(headerVersion) ? 'legacy' : 'modern';
}
