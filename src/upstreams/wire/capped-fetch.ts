// The fetch a Streamable HTTP upstream's transport uses. Guarantees: the body of an answer to a
// POST (one request's JSON or its SSE stream) is read up to `max` bytes and no further — past
// it the stream is cut, and when the request's JSON-RPC id is known the pending call gets
// `tooLarge(id)` at once rather than waiting for its timeout; a 2026-07-28 subscriptions/listen
// stream, which lives as long as the connection, is cut only when one of its events passes `max`
// bytes (the stream then ends, and listen-stream.ts opens another); other requests are untouched. A POST
// that carries a call's tag (related-stream.ts) leaves without it, and the messages on its SSE
// answer come marked as that call's. Requests go through `base` (the connection's own fetch,
// upstream-client.ts; the global one by default).

import type { FetchLike } from '@modelcontextprotocol/client';
import { tagEvents, takeTag } from './related-stream.js';

export function cappedFetch(max: number, tooLarge: (id: string | number) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const tag = takeTag(init);
    const res = await base(url, init);
    if (init?.method !== 'POST' || !res.body) return res;
    const { id, method } = request(init.body);
    const body = res.body.pipeThrough(method === 'subscriptions/listen' ? eventCapped(max) : capped(max, () => id !== undefined && tooLarge(id)));
    const sse = res.headers.get('content-type')?.startsWith('text/event-stream');
    return new Response(tag !== undefined && sse ? body.pipeThrough(tagEvents(tag)) : body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The JSON-RPC id and method of a POST's body, where it is one request. */
function request(body: unknown): { id?: string | number; method?: string } {
  if (typeof body !== 'string') return {};
  try {
    const msg = JSON.parse(body) as { id?: unknown; method?: unknown };
    return {
      ...((typeof msg.id === 'string' || typeof msg.id === 'number') && { id: msg.id }),
      ...(typeof msg.method === 'string' && { method: msg.method }),
    };
  } catch {
    return {};
  }
}

/** A body passed as it comes, cut (`onCut` first) once it passes `max` bytes. */
function capped(max: number, onCut: () => void): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, out) {
      seen += chunk.byteLength;
      if (seen <= max) return out.enqueue(chunk);
      onCut();
      out.error(new Error(`an answer larger than ${max} bytes was cut`));
    },
  });
}

/** An SSE body passed as it comes, cut when one event (the bytes since the last blank line) passes `max`. */
function eventCapped(max: number): TransformStream<Uint8Array, Uint8Array> {
  const LF = 10;
  const CR = 13;
  let since = 0;
  let prev = 0;
  let prev2 = 0;
  return new TransformStream({
    transform(chunk, out) {
      for (const b of chunk) {
        since++;
        // A line feed ending an empty line (\n\n or \n\r\n) ends the event.
        if (b === LF && (prev === LF || (prev === CR && prev2 === LF))) since = 0;
        prev2 = prev;
        prev = b;
        if (since > max) return out.error(new Error(`an event larger than ${max} bytes on a listen stream was cut`));
      }
      out.enqueue(chunk);
    },
  });
}
