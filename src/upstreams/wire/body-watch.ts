// Noticing an HTTP upstream that dies while one of its answers is still arriving. The SDK's transport
// ends a POST's SSE answer that breaks without a response with nothing but an onerror, so the request
// it answered would wait for its timeout; the fetch watchBodies() wraps tells the connection instead.
// Guarantees: every response and its body pass through unchanged (the same chunks, the same end, the
// same error to the reader); when reading a body fails the way a dead upstream makes it fail
// (upstreamGone(): the socket closed under it, below HTTP) `onGone` is called, before the reader
// sees the error; an abort of fastsvc's own (a cancelled call, a closed client) and a cut of its own
// (capped-fetch.ts) are not the upstream's doing and call nothing.

import type { FetchLike } from '@modelcontextprotocol/client';
import { upstreamGone } from './gone.js';

export function watchBodies(inner: FetchLike, onGone: () => void): FetchLike {
  return async (url, init) => {
    const res = await inner(url, init);
    if (!res.body) return res;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (e) {
          if (upstreamGone(e)) onGone();
          return ctl.error(e);
        }
        if (chunk.done) ctl.close();
        else ctl.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
