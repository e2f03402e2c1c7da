// What every kind of outbound credential is to its user (the http backend, an upstream MCP
// server): a function of the caller giving one header. Guarantees: a header() never answers
// with the caller's own token (index.ts says what each kind sends instead).

import type { Principal } from '../../core/types.js';

/** A header to set on the outbound request: [name, value]. */
export type OutboundHeader = readonly [name: string, value: string];

export interface OutboundCredential {
  /** The header to send on a call made for `caller`; rejects as index.ts says. */
  header(caller: Principal, signal: AbortSignal): Promise<OutboundHeader>;
}
