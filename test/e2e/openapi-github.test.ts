// GitHub's REST description (the devDependency @octokit/openapi, generated/api.github.com.json: about 1,200
// operations) as one `openapi:` source of the real `svc serve`, its calls answered by Stoplight Prism mocking the
// same description (--errors), with a recording proxy between them. Asserted: both MCP SDK clients page through the
// whole catalog (more than 1,000 tools, the operationIds' slashes made dots); representative operations — a path
// parameter, a list with several query parameters, a search whose query needs escaping, a path parameter holding a
// slash and one holding spaces, a JSON body on POST, PATCH and PUT, a DELETE — reach Prism exactly as the
// description says (method, path and query as sent, JSON body) and Prism finds no violation and answers 2xx; JSON
// answers come back as structured content (valid against the listed output schema, when one is listed) or as a JSON
// text; the source's bearer credential reaches Prism as Authorization. The expected requests are first sent by
// plain fetch, so the table is shown to be what the description accepts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ROOT } from '../helpers/cli.js';
import { startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { connectSdk, SDK_CLIENTS, type ListedTool, type McpCaller } from '../helpers/sdk-clients.js';

type Json = Record<string, unknown>;
const GITHUB = 'node_modules/@octokit/openapi/generated/api.github.com.json';

interface Case {
  what: string;
  tool: string;
  args: Json;
  method: string;
  url: string;
  json?: unknown;
  /** The answer Prism gives: a JSON object, a JSON array, or no body (204). */
  answer: 'object' | 'array' | 'none';
}

const repo = { owner: 'octo', repo: 'hello' };
// An optional argument the caller leaves out but whose schema has a default is sent with that default: fastsvc's
// input validation fills defaults in (ajv useDefaults) before the request is built (direction=desc, page=1 below).
// The same request for an API that honours its own defaults, but not "absent sends nothing": told in the report.
const CASES: Case[] = [
  { what: 'a path parameter', tool: 'users.get-by-username', args: { username: 'octocat' }, method: 'GET', url: '/users/octocat', answer: 'object' },
  {
    what: 'a list with query parameters (an enum, a comma in a value, an integer)', tool: 'issues.list-for-repo',
    args: { ...repo, state: 'open', labels: 'bug,ui', sort: 'created', per_page: 5 },
    method: 'GET', url: '/repos/octo/hello/issues?state=open&labels=bug%2Cui&sort=created&direction=desc&per_page=5&page=1', answer: 'array',
  },
  { what: 'a search query that needs escaping', tool: 'search.repos', args: { q: 'fastsvc language:typescript', sort: 'stars', order: 'desc' }, method: 'GET', url: '/search/repositories?q=fastsvc%20language%3Atypescript&sort=stars&order=desc&per_page=30&page=1', answer: 'object' },
  { what: 'a path parameter holding a slash', tool: 'repos.get-content', args: { ...repo, path: 'docs/readme.md', ref: 'main' }, method: 'GET', url: '/repos/octo/hello/contents/docs%2Freadme.md?ref=main', answer: 'object' },
  { what: 'a JSON body (POST)', tool: 'issues.create', args: { ...repo, body: { title: 'Found a bug', body: 'It breaks.', labels: ['bug'] } }, method: 'POST', url: '/repos/octo/hello/issues', json: { title: 'Found a bug', body: 'It breaks.', labels: ['bug'] }, answer: 'object' },
  { what: 'a JSON body (PATCH)', tool: 'issues.update', args: { ...repo, issue_number: 1, body: { state: 'closed' } }, method: 'PATCH', url: '/repos/octo/hello/issues/1', json: { state: 'closed' }, answer: 'object' },
  { what: 'a JSON body (PUT, 204)', tool: 'issues.lock', args: { ...repo, issue_number: 1, body: { lock_reason: 'off-topic' } }, method: 'PUT', url: '/repos/octo/hello/issues/1/lock', json: { lock_reason: 'off-topic' }, answer: 'none' },
  { what: 'DELETE, a path parameter holding spaces', tool: 'issues.remove-label', args: { ...repo, issue_number: 1, name: 'good first issue' }, method: 'DELETE', url: '/repos/octo/hello/issues/1/labels/good%20first%20issue', answer: 'array' },
];

const ajv = new Ajv2020({ strict: false, validateFormats: false });
const resultText = (r: Json) => ((r.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? `[${c.type}]`).join('\n');

describe('OpenAPI source: GitHub\'s REST description (@octokit/openapi) through svc serve, answered by Prism (both SDK clients)', function () {
  this.timeout(180_000);
  let prism: Prism;
  let proxy: RecordingProxy;
  let srv: Served;
  const token = secret(randomBytes(24).toString('base64url'));
  const ghToken = secret(`ghp_${randomBytes(18).toString('base64url')}`);

  before(async () => {
    prism = await startPrism(join(ROOT, GITHUB), { timeoutMs: 150_000 });
    proxy = await recordingProxy(prism.url);
    srv = await serveManifest({
      version: 1,
      name: 'github-e2e',
      // The 2.x SDK client compiles a validator for every listed output schema at its first tools/call (1,221 here:
      // many seconds on a loaded 2-core machine, its event loop blocked). Past a 5 s keep-alive (the old default) the
      // server closed the idle socket, which undici, blocked meanwhile, still reused: "other side closed". The default
      // (65 s) outlasts it: this test runs with it.
      server: { host: '127.0.0.1' },
      profile: { scopes: ['github.use'] },
      auth: { token: '${SVC_TOKEN}' },
      openapi: [{ name: 'github', document: 'apis/github.json', base_url: proxy.url, auth: { static: { bearer: '${GH_TOKEN}' } }, required_scopes: ['github.use'] }],
    }, { copy: { 'apis/github.json': GITHUB }, env: { SVC_TOKEN: token, GH_TOKEN: ghToken } });
  });
  after(async () => {
    await srv?.stop();
    await proxy?.close();
    await prism?.stop();
  });

  // Failure messages leave request headers out (they carry the test's credentials).
  const why = (r: unknown) => `${JSON.stringify(r, (k, v: unknown) => (k === 'headers' ? Object.keys(v as object) : v)).slice(0, 1500)}\nproxy saw: ${proxy.seen.slice(-2).map((s) => `${s.method} ${s.url} → ${s.status} ${s.answerHeaders['sl-violations'] ?? ''} ${s.answer.slice(0, 300)}`).join('\n')}\nPrism:\n${prism.tail(12)}`;

  it('the expected requests of the table, sent by plain fetch, are what Prism accepts (the table matches the description)', async () => {
    for (const k of CASES) {
      const res = await fetch(`${prism.url}${k.url}`, { method: k.method, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: k.json === undefined ? undefined : JSON.stringify(k.json) });
      const got = `${k.method} ${k.url} → ${res.status} ${res.headers.get('sl-violations') ?? ''} ${(await res.text()).slice(0, 300)}`;
      assert.equal(res.headers.get('sl-violations'), null, got);
      assert.ok(res.ok, got);
    }
  });

  for (const kind of SDK_CLIENTS) {
    describe(kind, () => {
      let c: McpCaller;
      let tools: Map<string, ListedTool>;
      before(async () => {
        // A generous request bound: the 2.x client compiles 1,221 output validators around its first call.
        c = await connectSdk(kind, srv.url, token, 150_000);
        tools = new Map((await c.listAll()).map((t) => [t.name, t]));
      });
      after(() => c?.close());

      it('pages through the whole catalog: more than 1,000 tools, operationIds with dots for slashes', () => {
        assert.ok(tools.size > 1000, `${tools.size} tools`);
        for (const k of CASES) assert.ok(tools.has(k.tool), `${k.tool} listed`);
        assert.equal(tools.get('issues.remove-label')?.annotations?.destructiveHint, true);
        assert.equal(tools.get('users.get-by-username')?.annotations?.readOnlyHint, true);
        const list = tools.get('issues.list-for-repo')!;
        assert.deepEqual((list.inputSchema.required as string[]).slice().sort(), ['owner', 'repo']);
        assert.deepEqual((list.inputSchema.properties as Record<string, Json>).state?.enum, ['open', 'closed', 'all']);
      });

      for (const k of CASES) {
        it(`${k.what}: ${k.tool} reaches Prism as ${k.method} ${k.url} and Prism accepts it`, async () => {
          const before = proxy.seen.length;
          const out = await c.call(k.tool, k.args);
          assert.ok('result' in out, why(out));
          const r = out.result;
          assert.notEqual(r.isError, true, why(r));
          const sent = proxy.seen.slice(before);
          assert.equal(sent.length, 1, why(sent));
          const x = sent[0]!;
          assert.equal(`${x.method} ${x.url}`, `${k.method} ${k.url}`);
          assert.equal(x.answerHeaders['sl-violations'], undefined, why(x));
          assert.ok(x.status >= 200 && x.status < 300, why(x));
          assert.equal(x.headers.authorization, `Bearer ${ghToken}`);
          if (k.json !== undefined) {
            assert.match(String(x.headers['content-type']), /^application\/json/);
            assert.deepEqual(JSON.parse(x.body), k.json);
          } else assert.equal(x.body, '');
          const schema = tools.get(k.tool)!.outputSchema;
          if (k.answer === 'object') {
            assert.ok(r.structuredContent && typeof r.structuredContent === 'object', why(r));
            assert.deepEqual(JSON.parse(resultText(r)), r.structuredContent);
            if (schema) assert.ok(ajv.validate(schema, r.structuredContent), `against the output schema: ${ajv.errorsText()}`);
          }
          if (k.answer === 'array') assert.ok(Array.isArray(JSON.parse(resultText(r))), why(r));
        });
      }
    });
  }
});
