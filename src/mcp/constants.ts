// What both MCP eras say the same way, written once: the protocol versions the server
// speaks, the capabilities it advertises, the log levels and the 2026-07-28 _meta keys.
// Guarantees: the 2025 initialize result and the 2026 server/discover result advertise the
// same capability object; a version is served by exactly one era.

import type { LogLevel } from '../core/types.js';

/** 2025-era versions, served through initialize and a session, newest first. */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
/** Assumed when a 2025 client sends no MCP-Protocol-Version header and none was negotiated. */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';

export const MODERN_VERSION = '2026-07-28';
/** Versions served statelessly (a request whose _meta names another gets -32022). */
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];
/** Every version the server serves in either era, modern first (server/discover's supportedVersions). */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...PROTOCOL_VERSIONS];

/** An /mcp SSE stream's keep-alive comment comes this often; a shared session's GET stream moves its record's mark as often. */
export const SSE_KEEPALIVE_MS = 25_000;

export function isSupportedVersion(v: string): boolean {
  return PROTOCOL_VERSIONS.includes(v);
}

export const SERVER_CAPABILITIES = Object.freeze({
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
  /** MCP Apps (io.modelcontextprotocol/ui, mcp/apps.ts): served to clients that declare it too. */
  extensions: { 'io.modelcontextprotocol/ui': {} },
});

/** Lowest first: a level's rank is its index. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The 2026-07-28 request and result _meta keys. */
export const META = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
});
