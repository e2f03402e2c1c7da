// The marks that route an upstream's related messages (src/upstreams/wire/related-stream.ts): the tag leaves the
// request's headers; every request and notification on the SSE answer gets the tag in params._meta, whatever
// chunks the stream arrives in (an event cut mid-message, several events in one chunk, CRLF lines), while
// responses, comments and event ids pass as they came; untag() gives the params back without the mark.

import assert from 'node:assert/strict';
import { CALL_HEADER, RELATED_META, tagEvents, takeTag, untag } from '../../../src/upstreams/wire/related-stream.js';

async function through(chunks: string[], tag: string): Promise<string> {
  const enc = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
  return new Response(source.pipeThrough(tagEvents(tag))).text();
}

const messages = (sse: string) => sse.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Record<string, any>);

describe('upstreams: related-stream marks', () => {
  it('takeTag removes the call header and returns its value', () => {
    const headers = new Headers({ [CALL_HEADER]: '7', accept: 'text/event-stream' });
    assert.equal(takeTag({ headers }), '7');
    assert.equal(headers.has(CALL_HEADER), false);
    assert.equal(headers.get('accept'), 'text/event-stream');
    assert.equal(takeTag({ headers: new Headers() }), undefined);
  });

  it('marks requests and notifications across any chunking; responses, ids and comments pass unchanged', async () => {
    const ask = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: { message: 'hi', _meta: { keep: 1 } } });
    const log = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [] } });
    const whole = `: priming\n\nid: e1\nevent: message\ndata: ${ask}\n\nevent: message\r\ndata: ${log}\r\n\r\nid: e2\ndata: ${answer}\n\n`;
    for (const chunks of [[whole], [...whole], [whole.slice(0, 40), whole.slice(40, 41), whole.slice(41)]]) {
      const out = await through(chunks, '42');
      const [a, l, r] = messages(out);
      assert.deepEqual(a!.params._meta, { keep: 1, [RELATED_META]: '42' });
      assert.equal(a!.params.message, 'hi');
      assert.deepEqual(l!.params._meta, { [RELATED_META]: '42' });
      assert.deepEqual(r, JSON.parse(answer));
      assert.match(out, /^: priming\n\n/);
      assert.match(out, /id: e1\nevent: message\ndata: /);
      assert.match(out, /id: e2\ndata: /);
    }
  });

  it('untag gives the tag and the params without it', () => {
    assert.deepEqual(untag({ message: 'm', _meta: { [RELATED_META]: '5', other: true } }), { tag: '5', params: { message: 'm', _meta: { other: true } } });
    assert.deepEqual(untag({ message: 'm', _meta: { [RELATED_META]: '5' } }), { tag: '5', params: { message: 'm' } });
    assert.deepEqual(untag({ message: 'm' }), { params: { message: 'm' } });
  });
});
