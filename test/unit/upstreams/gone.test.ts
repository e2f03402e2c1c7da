// upstreamGone(): which failed requests to a Streamable HTTP upstream mean it is gone (a refused connection, as
// fetch really fails against a closed loopback port) or forgot fastsvc's session (HTTP 404), and which are the
// upstream's own errors (any other status, an error that is not a network failure).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { upstreamGone } from '../../../src/upstreams/wire/gone.js';

/** A loopback port nothing listens on any more. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('upstreamGone', () => {
  it('a fetch refused at the network is gone', async () => {
    const e = await fetch(`http://127.0.0.1:${await closedPort()}/mcp`, { method: 'POST' }).then(() => undefined, (err: unknown) => err);
    assert.ok(e instanceof TypeError);
    assert.equal(upstreamGone(e), true);
  });

  it('HTTP 404 (a session the upstream does not know) is gone; other statuses and other errors are not', () => {
    const http = (status: number) => new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${status}`, { status, statusText: '', text: '' });
    assert.equal(upstreamGone(http(404)), true);
    for (const status of [400, 401, 500, 502, 503]) assert.equal(upstreamGone(http(status)), false, String(status));
    assert.equal(upstreamGone(new TypeError('not a network failure')), false);
    assert.equal(upstreamGone(new Error('fetch failed')), false);
    assert.equal(upstreamGone(undefined), false);
  });
});
