// The fetch a Streamable HTTP upstream's transport uses. Guarantees: the body of an answer to a
// POST (one request's JSON or its SSE stream) is read up to `max` bytes and no further — past
// it the stream is cut, and when the request's JSON-RPC id is known the pending call gets
// `tooLarge(id)` at once rather than waiting for its timeout; other requests are untouched. A POST
// that carries a call's tag (related-stream.ts) leaves without it, and the messages on its SSE
// answer come marked as that call's.

import type { FetchLike } from '@modelcontextprotocol/client';
import { tagEvents, takeTag } from './related-stream.js';

export function cappedFetch(max: number, tooLarge: (id: string | number) => void): FetchLike {
  return async (url, init) => {
    const tag = takeTag(init);
    const res = await fetch(url, init);
    if (init?.method !== 'POST' || !res.body) return res;
    const id = requestId(init.body);
    let seen = 0;
    const body = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        seen += chunk.byteLength;
        if (seen <= max) return out.enqueue(chunk);
        if (id !== undefined) tooLarge(id);
        out.error(new Error(`an answer larger than ${max} bytes was cut`));
      },
    }));
    const sse = res.headers.get('content-type')?.startsWith('text/event-stream');
    return new Response(tag !== undefined && sse ? body.pipeThrough(tagEvents(tag)) : body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function requestId(body: unknown): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const msg = JSON.parse(body) as { id?: unknown };
    return typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : undefined;
  } catch {
    return undefined;
  }
}
