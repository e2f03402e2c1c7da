// Whether a failed request to a Streamable HTTP upstream means the upstream is gone, or no longer knows
// fastsvc's session, so the connection must be made again instead of the error being passed on.
// Guarantees: true for a fetch that failed below HTTP (undici's TypeError whose cause carries a
// system error code: refused, reset, unreachable, …) and for HTTP 404 (2025-11-25: a server that
// does not know the session answers 404, and the client must start a new one — what a restarted
// upstream does); false for anything else, so an upstream's own errors stay its errors.

import { SdkHttpError } from '@modelcontextprotocol/client';

export function upstreamGone(e: unknown): boolean {
  if (e instanceof SdkHttpError) return e.status === 404;
  return e instanceof TypeError && typeof (e.cause as { code?: unknown } | undefined)?.code === 'string';
}
