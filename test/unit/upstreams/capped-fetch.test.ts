// wire/capped-fetch.ts against a loopback HTTP server: an answer to a POST is cut past `max` bytes in total, and the
// pending request is told at once (tooLarge with its id); a subscriptions/listen stream is cut only when one of
// its events passes `max` — any number of small events go through, whatever their total.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cappedFetch } from '../../../src/upstreams/wire/capped-fetch.js';

const MAX = 1000;
const event = (n: number, pad: number) => `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { n, pad: 'x'.repeat(pad) } })}\n\n`;

describe('upstreams: capped-fetch', () => {
  let server: Server;
  let url: string;
  /** What the next POST is answered with: SSE events. */
  let events: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of events) res.write(e);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (method: string, id: number | undefined, cut: (number | string)[]) => cappedFetch(MAX, (i) => void cut.push(i))(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', ...(id !== undefined && { id }), method, params: {} }),
  });

  it('cuts a call\'s answer past max bytes in total and tells its id', async () => {
    events = Array.from({ length: 20 }, (_, i) => event(i, 100));
    const cut: (number | string)[] = [];
    const res = await post('tools/call', 7, cut);
    await assert.rejects(res.text(), /larger than 1000 bytes/);
    assert.deepEqual(cut, [7]);
  });

  it('passes a listen stream of many small events, far past max in total', async () => {
    events = Array.from({ length: 50 }, (_, i) => event(i, 100));
    const cut: (number | string)[] = [];
    const text = await (await post('subscriptions/listen', 1, cut)).text();
    assert.equal(text, events.join(''));
    assert.ok(text.length > 5 * MAX);
    assert.deepEqual(cut, []);
  });

  it('cuts a listen stream at an event larger than max', async () => {
    events = [event(1, 100), event(2, 2 * MAX), event(3, 100)];
    const cut: (number | string)[] = [];
    const res = await post('subscriptions/listen', 1, cut);
    await assert.rejects(res.text(), /an event larger than 1000 bytes/);
    assert.deepEqual(cut, [], 'a listen stream has no pending call to fail');
  });
});
