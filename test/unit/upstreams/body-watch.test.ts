// watchBodies() over real fetch against a loopback server: a body that arrives whole passes unchanged and
// tells nothing; a body whose socket is destroyed mid-stream (as when the upstream process dies with an SSE
// answer open) tells onGone once, and the reader still gets the error; a body fastsvc itself aborts (a
// cancelled call) or cancels tells nothing.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { watchBodies } from '../../../src/upstreams/wire/body-watch.js';

describe('watchBodies', () => {
  let server: Server;
  let url = '';
  let onRequest: (res: ServerResponse) => void;

  before(async () => {
    server = createServer((_req, res) => onRequest(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  }));

  /** An SSE answer that sends one event and then waits: `then(res)` decides how it ends. */
  const sse = (then: (res: ServerResponse) => void) => {
    onRequest = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
      then(res);
    };
  };

  it('passes a whole body unchanged, status and headers included, and tells nothing', async () => {
    let gone = 0;
    sse((res) => res.end('data: end\n\n'));
    const r = await watchBodies(fetch, () => void gone++)(url, { method: 'POST' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.match(await r.text(), /notifications\/progress[\s\S]*data: end/);
    assert.equal(gone, 0);
  });

  it('a socket destroyed under the body tells onGone once, and the reader still gets the error', async () => {
    let gone = 0;
    let answering: ServerResponse | undefined;
    sse((res) => void (answering = res));
    const r = await watchBodies(fetch, () => void gone++)(url, { method: 'POST' });
    answering!.socket!.destroy(); // once the answer has begun here: its body is cut, not the request refused
    await assert.rejects(r.text(), (e: unknown) => e instanceof TypeError);
    assert.equal(gone, 1);
  });

  it('a body fastsvc aborts (a cancelled call) or cancels tells nothing', async () => {
    let gone = 0;
    sse(() => undefined);
    const abort = new AbortController();
    const aborted = await watchBodies(fetch, () => void gone++)(url, { method: 'POST', signal: abort.signal });
    const reading = aborted.text();
    abort.abort();
    await assert.rejects(reading);
    const cancelled = await watchBodies(fetch, () => void gone++)(url, { method: 'POST' });
    await cancelled.body!.cancel();
    assert.equal(gone, 0);
  });
});
