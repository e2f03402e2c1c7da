// Parameter serialization checked by Prism: a small document whose parameters use the styles Prism 5.14 can check
// (test/e2e/fixtures/prism-styles.openapi.yaml: form with and without explode, pipeDelimited, deepObject, a string of
// reserved characters in the query and in a path segment, a header array, an exploded header object, a cookie),
// typed so that a wrong delimiter or a missing escape breaks the document, served as an `openapi:` source of the real
// `svc serve` and called with both MCP SDK clients. Asserted: Prism finds no violation (2xx, no sl-violations);
// the request line, headers and cookie are exactly what OpenAPI 3.1's style examples give (delimiters as the table
// has them, percent-encoded where RFC 3986 requires it; values percent-encoded, every reserved character of a path
// value escaped); an optional argument left out (`absent`, no default) sends nothing; the same request with a wrong
// delimiter is refused by Prism (so the document can catch the mistake).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { connectSdk, SDK_CLIENTS, type McpCaller } from '../helpers/sdk-clients.js';

const STYLES = 'test/e2e/fixtures/prism-styles.openapi.yaml';
const TEXT = 'a b&c=d/e?f#g+h%i';
const ID = 'a b/c?d#e%f';

const QUERY = {
  args: { csv: [1, 2, 3], multi: ['a', 'b'], pipes: [1, 2], obj: { color: 'red', size: 3 }, text: TEXT },
  // RFC 3986 allows neither | nor [ ] in a query: OpenAPI 3.1.1 has them percent-encoded (its examples table shows
  // them bare for reading); the comma, a sub-delimiter, may stand.
  url: '/query?csv=1,2,3&multi=a&multi=b&pipes=1%7C2&obj%5Bcolor%5D=red&obj%5Bsize%5D=3&text=a%20b%26c%3Dd%2Fe%3Ff%23g%2Bh%25i',
  /** The same request with pipeDelimited sent as form: Prism must refuse it. */
  wrong: '/query?csv=1,2,3&multi=a&multi=b&pipes=1,2&obj%5Bcolor%5D=red&obj%5Bsize%5D=3&text=a%20b%26c%3Dd%2Fe%3Ff%23g%2Bh%25i',
};
const ITEM = {
  args: { id: ID, 'X-Ids': [1, 2], 'X-Point': { x: 1, y: 2 }, sid: 's1' },
  url: '/items/a%20b%2Fc%3Fd%23e%25f',
  headers: { 'x-ids': '1,2', 'x-point': 'x=1,y=2', cookie: 'sid=s1' },
};

describe('OpenAPI parameter styles through svc serve, each request checked by Prism (both SDK clients)', function () {
  this.timeout(90_000);
  let prism: Prism;
  let proxy: RecordingProxy;
  let srv: Served;
  const token = secret(randomBytes(24).toString('base64url'));

  before(async () => {
    prism = await startPrism(join(ROOT, STYLES));
    proxy = await recordingProxy(prism.url);
    srv = await serveManifest({
      version: 1,
      name: 'styles-e2e',
      server: { host: '127.0.0.1' },
      profile: { scopes: ['api.use'] },
      auth: { token: '${SVC_TOKEN}' },
      openapi: [{ name: 'styles', document: 'styles.yaml', base_url: proxy.url, required_scopes: ['api.use'] }],
    }, { copy: { 'styles.yaml': STYLES }, env: { SVC_TOKEN: token } });
  });
  after(async () => {
    await srv?.stop();
    await proxy?.close();
    await prism?.stop();
  });

  it('Prism refuses the query with a wrong delimiter, and accepts the right one (the document catches the mistake)', async () => {
    const wrong = await fetch(`${prism.url}${QUERY.wrong}`);
    assert.equal(wrong.status, 422, await wrong.text());
    const right = await fetch(`${prism.url}${QUERY.url}`);
    assert.equal(right.status, 200, await right.text());
  });

  for (const kind of SDK_CLIENTS) {
    describe(kind, () => {
      let c: McpCaller;
      before(async () => (c = await connectSdk(kind, srv.url, token)));
      after(() => c?.close());

      const call = async (tool: string, args: Record<string, unknown>) => {
        const before = proxy.seen.length;
        const out = await c.call(tool, args);
        const x = proxy.seen[before];
        assert.ok('result' in out && out.result.isError !== true, `${JSON.stringify(out).slice(0, 600)}\n${prism.tail(8)}`);
        assert.equal(proxy.seen.length, before + 1);
        assert.equal(x!.answerHeaders['sl-violations'], undefined, x!.answer);
        assert.equal(x!.status, 200);
        assert.deepEqual(out.result.structuredContent, { ok: true });
        return x!;
      };

      it('query: form (exploded and not), pipeDelimited, deepObject and a value of reserved characters, exactly', async () => {
        const x = await call('query', QUERY.args);
        assert.equal(`${x.method} ${x.url}`, `GET ${QUERY.url}`);
      });

      it('path, header and cookie: a path value with every reserved character escaped, a header array and object, a cookie', async () => {
        const x = await call('item', ITEM.args);
        assert.equal(`${x.method} ${x.url}`, `GET ${ITEM.url}`);
        for (const [h, v] of Object.entries(ITEM.headers)) assert.equal(x.headers[h], v, `${h} among ${Object.keys(x.headers).join(", ")}`);
      });
    });
  }
});
