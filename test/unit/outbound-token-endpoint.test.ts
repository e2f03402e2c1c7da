// The token request of outbound credentials (src/outbound/token-endpoint.ts) against small token
// endpoints on 127.0.0.1: a usable answer gives its token and lifetime; an answer larger than
// MAX_TOKEN_ANSWER_BYTES is refused as token_too_large (whatever Content-Length says, or with none),
// without reading it whole; a refusal carries the endpoint's OAuth error, never its text; an id and
// secret holding `-` reach, with client_secret_basic, an endpoint that does not form-decode them
// (glewlwyd's way) as they are, and with client_secret_post in the form.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_TOKEN_ANSWER_BYTES, requestToken, type TokenEndpoint } from '../../src/outbound/token-endpoint.js';
import { SvcError } from '../../src/errors.js';

type Answer = (res: import('node:http').ServerResponse) => void;

async function endpoint(answer: Answer): Promise<{ ep: TokenEndpoint; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  return { ep: { token_url: url, client_id: 'c', auth_method: 'client_secret_basic', timeout_ms: 5000 }, server };
}

const reasonOf = async (p: Promise<unknown>) => {
  const e = await p.then(() => undefined, (err: unknown) => err);
  assert.ok(e instanceof SvcError, `expected an SvcError, got ${String(e)}`);
  assert.equal(e.code, 'OUTBOUND_AUTH_FAILED');
  return (e.data as { reason: string }).reason;
};

describe('outbound token endpoint', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));
  const start = async (answer: Answer) => {
    const e = await endpoint(answer);
    servers.push(e.server);
    return e.ep;
  };
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Answer => (res) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(text);
  };

  it('gives the token and its lifetime', async () => {
    const ep = await start(json({ access_token: 'tok', token_type: 'Bearer', expires_in: 120 }));
    const before = Date.now();
    const f = await requestToken(ep, 's3cret', 'client_credentials', {});
    assert.equal(f.token, 'tok');
    assert.ok(f.expiresAt >= before + 120_000 && f.expiresAt <= Date.now() + 120_000);
  });

  it('client_secret_basic sends an id and secret holding `-` as they are (no %2D), client_secret_post in the form', async () => {
    const seen: { authorization?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => void (body += c)).on('end', () => {
        seen.push({ authorization: req.headers.authorization, body });
        json({ access_token: 'tok', token_type: 'Bearer' })(res);
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const token_url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
    await requestToken({ token_url, client_id: 'fastsvc-gw', auth_method: 'client_secret_basic', timeout_ms: 5000 }, 'sec-ret', 'client_credentials', {});
    // Decoded as a server that does not form-decode reads it: base64, then split at the first ':'.
    assert.equal(Buffer.from(seen[0]!.authorization!.slice('Basic '.length), 'base64').toString(), 'fastsvc-gw:sec-ret');
    await requestToken({ token_url, client_id: 'fastsvc-gw', auth_method: 'client_secret_post', timeout_ms: 5000 }, 'sec-ret', 'client_credentials', {});
    const form = new URLSearchParams(seen[1]!.body);
    assert.deepEqual([seen[1]!.authorization, form.get('client_id'), form.get('client_secret')], [undefined, 'fastsvc-gw', 'sec-ret']);
  });

  it('refuses an answer over the cap, declared by Content-Length', async () => {
    const ep = await start(json({ access_token: 'x'.repeat(MAX_TOKEN_ANSWER_BYTES), token_type: 'Bearer' }));
    assert.equal(await reasonOf(requestToken(ep, 's', 'client_credentials', {})), 'token_too_large');
  });

  it('refuses an answer over the cap sent in chunks without a length, before its end', async () => {
    let written = 0;
    const ep = await start((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"access_token":"');
      const chunk = 'x'.repeat(16 * 1024);
      const more = () => {
        // Keeps writing (up to 64 times the cap) until the client hangs up.
        while (written < MAX_TOKEN_ANSWER_BYTES * 64 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('","token_type":"Bearer"}');
      };
      more();
    });
    assert.equal(await reasonOf(requestToken(ep, 's', 'client_credentials', {})), 'token_too_large');
    assert.ok(written < MAX_TOKEN_ANSWER_BYTES * 64, 'the client stopped reading long before the end');
  });

  it('names the OAuth error of a refusal, not the endpoint\'s text', async () => {
    const ep = await start(json({ error: 'invalid_client', error_description: 'secret s3cret is wrong' }, 401));
    const e = await requestToken(ep, 's3cret', 'client_credentials', {}).then(() => undefined, (err: SvcError) => err);
    assert.equal((e!.data as { reason: string }).reason, 'token_refused');
    assert.match(e!.message, /invalid_client/);
    assert.doesNotMatch(e!.message, /s3cret/);
  });
});
