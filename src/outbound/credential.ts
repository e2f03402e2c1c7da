// What every kind of outbound credential is to its user (the http backend, an upstream MCP
// server): a function of the caller giving one header. Guarantees: a header() never answers
// with the caller's own token (index.ts says what each kind sends instead); a token the backend
// refused (401) is not sent again once refused() is told.

import type { Principal } from '../core/types.js';

/** A header to set on the outbound request: [name, value]. */
export type OutboundHeader = readonly [name: string, value: string];

export interface OutboundCredential {
  /** The header to send on a call made for `caller`; rejects as index.ts says. */
  header(caller: Principal, signal: AbortSignal): Promise<OutboundHeader>;
  /**
   * The backend answered 401 to `sent`: the token is forgotten, so the next header() fetches another. Only the kinds
   * that fetch their tokens have it (client_credentials, token_exchange); its user then sends the request once more
   * with the new header, never more than once (a backend that refuses every token fails the call).
   */
  refused?(caller: Principal, sent: OutboundHeader): void;
}
