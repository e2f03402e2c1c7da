// Which call a Streamable HTTP upstream's server→client message belongs to. The 2025-11-25 transport
// sends a request's related messages (its elicitation or sampling requests, its log notifications) on
// the SSE stream that answers that request's POST; the SDK's client transport does not say which
// stream a message came on, so fastsvc marks it. Guarantees: a call sends its tag as the CALL_HEADER
// request header (the SDK passes per-request headers through to the POST); the upstream never sees
// that header (takeTag() removes it before the request leaves); every request and notification on the
// POST's SSE stream gets `params._meta[RELATED_META]` = the tag, responses and other fields untouched,
// events split only at blank lines so a message cut across chunks is never read in pieces;
// untag() removes the mark before anything is passed on to a caller.

export const CALL_HEADER = 'x-fastsvc-call';
export const RELATED_META = 'dev.fastsvc/related-call';

/** The tag of an outgoing POST, removed from its headers (undefined when it carries none). */
export function takeTag(init: RequestInit | undefined): string | undefined {
  const h = init?.headers;
  if (!(h instanceof Headers)) return undefined;
  const tag = h.get(CALL_HEADER) ?? undefined;
  h.delete(CALL_HEADER);
  return tag;
}

/** An SSE body with every server request and notification marked as related to `tag`. */
export function tagEvents(tag: string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = '';
  return new TransformStream({
    transform(chunk, out) {
      rest += decoder.decode(chunk, { stream: true });
      const events = rest.split(/(?<=\r?\n\r?\n)/);
      rest = /\r?\n\r?\n$/.test(events.at(-1)!) ? '' : events.pop()!;
      for (const e of events) out.enqueue(encoder.encode(mark(e, tag)));
    },
    flush(out) {
      rest += decoder.decode();
      if (rest) out.enqueue(encoder.encode(mark(rest, tag)));
    },
  });
}

/** One SSE event with its JSON-RPC message marked; anything that is not one is passed as it came. */
function mark(event: string, tag: string): string {
  const lines = event.split(/\r?\n/);
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  if (!data.length) return event;
  let msg: { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  try {
    msg = JSON.parse(data.join('\n'));
  } catch {
    return event;
  }
  if (!msg || typeof msg !== 'object' || typeof msg.method !== 'string') return event;
  msg.params = { ...msg.params, _meta: { ...msg.params?._meta, [RELATED_META]: tag } };
  const others = lines.filter((l) => l !== '' && !l.startsWith('data:'));
  return [...others, `data: ${JSON.stringify(msg)}`, '', ''].join('\n');
}

/** The call tag a message carries (and the params without it). */
export function untag(params: Record<string, unknown> | undefined): { tag?: string; params: Record<string, unknown> } {
  const meta = params?._meta as Record<string, unknown> | undefined;
  if (!meta || !(RELATED_META in meta)) return { params: params ?? {} };
  const { [RELATED_META]: tag, ...restMeta } = meta;
  const { _meta: _, ...rest } = params!;
  return { tag: String(tag), params: Object.keys(restMeta).length ? { ...rest, _meta: restMeta } : rest };
}
