// http tools with OpenAPI-style parameters end to end (issue 32, the http backend's part): the
// real `svc serve` in front of a small pet API on 127.0.0.1 that records every request as it
// arrived, called by the MCP SDK clients (1.x and 2.x) over /mcp and by plain fetch over /svc.
// Asserted: path, query, header and cookie arguments and a JSON or form body reach the API
// exactly; a JSON answer is structured content (and its text); a 4xx is a tool error (isError)
// whose text carries the API's message and the status; an image answer is an image block.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

interface Seen { method: string; target: string; headers: Record<string, unknown>; body: string }
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** A pet API: /pets/{id} (JSON, or 404 with a message), /pets (a JSON list), /pets/{id}/photo (PNG); every request recorded. */
async function petApi(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = req.url ?? '/';
      seen.push({ method: req.method!, target, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const path = target.split('?')[0]!;
      const json = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      let m: RegExpExecArray | null;
      if ((m = /^\/pets\/([^/]+)\/photo$/.exec(path))) return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      if ((m = /^\/pets\/([^/]+)$/.exec(path))) {
        const id = decodeURIComponent(m[1]!);
        return id === '7' ? json(200, { id: 7, name: 'Rex', status: 'available' }) : json(404, { code: 404, message: `Pet ${id} not found` });
      }
      if (path === '/pets' && req.method === 'GET') return json(200, [{ id: 7, name: 'Rex' }]);
      if (path === '/pets' && req.method === 'POST') return json(201, { id: 8, received: req.headers['content-type'] });
      return json(400, { error: 'no such route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

describe('http tools with OpenAPI-style parameters (real svc serve, MCP SDK clients)', function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof petApi>>;
  let srv: Served;
  let client: Client;
  let modern: ModernClient;
  const token = secret(randomBytes(24).toString('base64url'));

  before(async () => {
    api = await petApi();
    const obj = (props: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties: props, required });
    srv = await serveManifest({
      version: 1,
      name: 'pets',
      auth: { token: '${SVC_TOKEN}' },
      tools: [
        {
          name: 'get_pet', description: 'One pet.', annotations: { readOnlyHint: true },
          input_schema: obj({ petId: { type: 'string' } }, ['petId']),
          http: { url: `${api.url}/pets/{{petId}}`, parameters: [{ name: 'petId', in: 'path' }] },
        },
        {
          name: 'find_pets', description: 'Pets by status and tags.', annotations: { readOnlyHint: true },
          input_schema: obj({ status: { type: 'array', items: { type: 'string' } }, tags: { type: 'array', items: { type: 'string' } }, filter: { type: 'object' }, request_id: { type: 'string' }, session: { type: 'string' } }),
          http: {
            url: `${api.url}/pets`,
            parameters: [
              { name: 'status', in: 'query' },
              { name: 'tags', in: 'query', style: 'pipeDelimited' },
              { name: 'filter', in: 'query', style: 'deepObject', explode: true },
              { name: 'X-Request-Id', in: 'header', arg: 'request_id' },
              { name: 'sid', in: 'cookie', arg: 'session' },
            ],
          },
        },
        {
          name: 'add_pet', description: 'Adds a pet (JSON).', input_schema: obj({ body: { type: 'object' } }, ['body']),
          http: { method: 'POST', url: `${api.url}/pets`, request_body: {} },
        },
        {
          name: 'add_pet_form', description: 'Adds a pet (form).', input_schema: obj({ pet: { type: 'object' } }, ['pet']),
          http: { method: 'POST', url: `${api.url}/pets`, request_body: { arg: 'pet', content_type: 'application/x-www-form-urlencoded' } },
        },
        {
          name: 'pet_photo', description: 'A pet\'s photo.', input_schema: obj({ petId: { type: 'string' } }, ['petId']),
          http: { url: `${api.url}/pets/{{petId}}/photo`, parameters: [{ name: 'petId', in: 'path', style: 'label' }] },
        },
      ],
    }, { env: { SVC_TOKEN: token } });
    client = new Client({ name: 'http-openapi-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    modern = new ModernClient({ name: 'http-openapi-e2e-modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => token } }));
  });

  after(async () => {
    await client?.close();
    await modern?.close();
    await srv?.stop();
    api?.server.close();
  });

  beforeEach(() => {
    api.seen.length = 0;
  });

  it('a JSON answer is structured content and its text (SDK 1.x)', async () => {
    const r = await client.callTool({ name: 'get_pet', arguments: { petId: '7' } });
    assert.equal(r.isError, undefined);
    assert.deepEqual(r.structuredContent, { id: 7, name: 'Rex', status: 'available' });
    assert.deepEqual(JSON.parse((r.content as { type: string; text: string }[])[0]!.text), { id: 7, name: 'Rex', status: 'available' });
    assert.equal(api.seen[0]!.target, '/pets/7');
  });

  it('a JSON list is structured content {result: [...]} (SDK 2.x)', async () => {
    const r = await modern.callTool({ name: 'find_pets', arguments: {} });
    assert.deepEqual(r.structuredContent, { result: [{ id: 7, name: 'Rex' }] });
    assert.equal(api.seen[0]!.target, '/pets');
    assert.equal(api.seen[0]!.headers.cookie, undefined);
    assert.equal(api.seen[0]!.headers['x-request-id'], undefined);
  });

  it('a 4xx answer is a tool error whose text carries the API\'s message and the status (SDK 1.x and 2.x)', async () => {
    for (const r of [await client.callTool({ name: 'get_pet', arguments: { petId: '4 2/x' } }), await modern.callTool({ name: 'get_pet', arguments: { petId: '4 2/x' } })]) {
      assert.equal(r.isError, true);
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      assert.match(text, /404/);
      assert.match(text, /Pet 4 2\/x not found/);
    }
    assert.deepEqual(api.seen.map((s) => s.target), ['/pets/4%202%2Fx', '/pets/4%202%2Fx']);
  });

  it('query, header and cookie arguments arrive serialized as their parameters say', async () => {
    await client.callTool({ name: 'find_pets', arguments: { status: ['available', 'on hold'], tags: ['a', 'b|c'], filter: { kind: 'dog' }, request_id: 'req-1', session: 'abc=1' } });
    assert.equal(api.seen[0]!.target, '/pets?status=available&status=on%20hold&tags=a%7Cb%7Cc&filter%5Bkind%5D=dog');
    assert.equal(api.seen[0]!.headers['x-request-id'], 'req-1');
    assert.equal(api.seen[0]!.headers.cookie, 'sid=abc%3D1');
  });

  it('a JSON body and a form body arrive as written', async () => {
    const r = await client.callTool({ name: 'add_pet', arguments: { body: { name: 'Tom', tags: ['x'] } } });
    assert.deepEqual(r.structuredContent, { id: 8, received: 'application/json' });
    await client.callTool({ name: 'add_pet_form', arguments: { pet: { name: 'T m', tags: ['x', 'y'] } } });
    assert.deepEqual(api.seen.map((s) => [s.method, s.headers['content-type'], s.body]), [
      ['POST', 'application/json', '{"name":"Tom","tags":["x"]}'],
      ['POST', 'application/x-www-form-urlencoded', 'name=T+m&tags=x&tags=y'],
    ]);
  });

  it('an image answer is an image block', async () => {
    const r = await client.callTool({ name: 'pet_photo', arguments: { petId: '7' } });
    assert.deepEqual(r.content, [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }]);
    assert.equal(api.seen[0]!.target, '/pets/.7/photo');
  });

  it('/svc: a JSON answer is the result value; a 4xx is BACKEND_FAILED with the API\'s message', async () => {
    const call = (tool: string, args: unknown) => fetch(`${srv.url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    const ok = await call('get_pet', { petId: '7' });
    assert.equal(ok.status, 200);
    assert.deepEqual(((await ok.json()) as { result: unknown }).result, { id: 7, name: 'Rex', status: 'available' });
    const missing = await call('get_pet', { petId: '9' });
    const body = (await missing.json()) as { error: { code: string; message: string; status: number; api_message: string } };
    assert.equal(missing.status, 502);
    assert.equal(body.error.code, 'BACKEND_FAILED');
    assert.equal(body.error.status, 404);
    assert.equal(body.error.api_message, 'Pet 9 not found');
    assert.match(body.error.message, /404: Pet 9 not found/);
  });
});
