// Server-sent events read from a fetch body: one parsed JSON message per `data:` frame (frames), or each
// event with its `id:` as it arrives (sseEvents: a shared session's GET stream numbers its events).

/** Reads SSE `data:` frames from a fetch body, one JSON message each. */
export async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data) yield JSON.parse(data) as Record<string, unknown>;
    }
  }
}

/** Each SSE event of a response as it arrives: its id (if any) and its JSON-RPC message; returning from it cancels the body. */
export async function* sseEvents(res: Response): AsyncGenerator<{ id?: string; msg: Record<string, unknown> }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const lines = buf.slice(0, i).split('\n');
        buf = buf.slice(i + 2);
        const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
        if (data) yield { ...(id !== undefined && { id }), msg: JSON.parse(data) as Record<string, unknown> };
      }
    }
  } finally {
    await reader.cancel();
  }
}

/**
 * The `fetch` to give an MCP SDK 1.x client transport, and opened(): it resolves once the session's GET stream has
 * answered (200, text/event-stream). The client opens that stream on its own after initialize, on a connection of its
 * own, so a request answered since says nothing about it; fastsvc (as the SDK's server) attaches the stream to the
 * session before it answers the GET, so whatever the server sends the session from then on goes there.
 */
export function getStreamWatch(): { fetch: typeof fetch; opened(): Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? 'GET') === 'GET' && res.ok && res.headers.get('content-type')?.startsWith('text/event-stream')) open();
      return res;
    },
    opened: () => opened,
  };
}
