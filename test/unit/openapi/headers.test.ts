// A parameter the document declares never refuses the whole manifest (issue 38, point 10). Documents
// commonly declare their API-key header, and some declare Host, Cookie or Content-Length: the http
// backend lets no parameter set a header fastsvc, the credential or the source's `headers` set.
// Through the whole manifest pipeline (checkManifest): a header the credential or `headers` sets is
// left out (they set it); one the HTTP stack sets (Host, Content-Length, Connection…) is left out;
// Cookie, traceparent and the like are left out when optional and skip the operation (OPENAPI_SKIPPED
// naming why) when required; cookie parameters beside a credential that sets Cookie likewise; a
// parameter the backend could not send as the document describes it (a header name that is not a
// token, a style its location does not take, a path parameter the path does not name, a GET body)
// skips its operation or is left out — never BACKEND_CONFIG.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkManifest } from '../../../src/manifest/index.js';

const OP = (id: string, params: string, extra = '') => `  /${id}:\n    get:\n      operationId: ${id}\n      parameters:\n${params}${extra}      responses:\n        "200": {description: ok}\n`;
const P = (name: string, where: string, required = false, more = '') => `        - {name: "${name}", in: ${where}, required: ${required}, schema: {type: string}${more}}\n`;

describe('openapi: a parameter the document declares never refuses the manifest', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'oa-headers-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const check = (paths: string, source = '') => {
    writeFileSync(join(dir, 'api.yaml'), `openapi: 3.0.3\ninfo: {title: h, version: "1"}\nservers: [{url: "https://api.example.com"}]\npaths:\n${paths}`);
    writeFileSync(join(dir, 'svc.yaml'), `version: 1\nname: h\nauth:\n  token: \${SVC_TOKEN:-a-test-token-of-some-length}\nopenapi:\n  - name: api\n    document: api.yaml\n${source}`);
    const c = checkManifest(join(dir, 'svc.yaml'), { API_KEY: 'k-0123456789', COOKIE: 'session=abc' });
    assert.deepEqual(c.problems.map((p) => p.format()), []);
    const tools = new Map(c.plan!.manifest.tools!.map((t) => [t.name, t]));
    const skipped = c.warnings.filter((w) => w.code === 'OPENAPI_SKIPPED').map((w) => w.message);
    return { tools, skipped };
  };
  const args = (t: { input_schema?: unknown } | undefined) => Object.keys((t!.input_schema as { properties: object }).properties);
  const sent = (t: { http?: unknown } | undefined) => ((t!.http as { parameters?: { name: string; in: string }[] }).parameters ?? []).map((p) => `${p.in} ${p.name}`);

  it('the API-key header the credential sets is left out, required or not; the rest of the operation is served', () => {
    const { tools, skipped } = check(OP('search', P('X-Api-Key', 'header', true) + P('q', 'query', true)) + OP('other', P('x-api-key', 'header')),
      '    auth:\n      static:\n        header: X-API-KEY\n        value: ${API_KEY}\n');
    assert.deepEqual(skipped, []);
    assert.deepEqual(args(tools.get('search')), ['q']);
    assert.deepEqual(sent(tools.get('search')), ['query q']);
    assert.deepEqual(args(tools.get('other')), []);
  });

  it('a header the source\'s `headers` sets is left out; Authorization too when a bearer credential sets it', () => {
    const { tools } = check(OP('tenant', P('X-Tenant', 'header', true) + P('Authorization', 'header', true)),
      '    headers:\n      x-tenant: acme\n    auth:\n      static:\n        bearer: ${API_KEY}\n');
    assert.deepEqual(args(tools.get('tenant')), []);
  });

  it('Host, Content-Length, Connection and Transfer-Encoding (the HTTP stack sets them) are left out, required or not', () => {
    const { tools, skipped } = check(OP('stack', P('Host', 'header', true) + P('Content-Length', 'header', true) + P('Connection', 'header') + P('Transfer-Encoding', 'header') + P('id', 'query')));
    assert.deepEqual(skipped, []);
    assert.deepEqual(args(tools.get('stack')), ['id']);
  });

  it('an optional Cookie or traceparent header is left out; a required one skips its operation, saying why', () => {
    const { tools, skipped } = check(OP('optional', P('Cookie', 'header') + P('traceparent', 'header') + P('id', 'query')) + OP('needed', P('Cookie', 'header', true)));
    assert.deepEqual(args(tools.get('optional')), ['id']);
    assert.ok(!tools.has('needed'));
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!, /GET \/needed \(operationId needed\) is not served: its header parameter Cookie is required, and fastsvc sets that header itself/);
  });

  it('cookie parameters beside a credential that sets Cookie: optional left out, required skipped', () => {
    const { tools, skipped } = check(OP('opt', P('session', 'cookie') + P('id', 'query')) + OP('req', P('session', 'cookie', true)),
      '    auth:\n      static:\n        header: Cookie\n        value: ${COOKIE}\n');
    assert.deepEqual(args(tools.get('opt')), ['id']);
    assert.ok(!tools.has('req'));
    assert.match(skipped[0]!, /GET \/req \(operationId req\) is not served: its cookie parameter session is required, and the source's credential sets the Cookie header/);
  });

  it('one header declared twice in different case (path level and operation level) is one parameter, the operation\'s', () => {
    const { tools } = check(`  /twice:\n    parameters:\n${P('X-Trace', 'header')}    get:\n      operationId: twice\n      parameters:\n${P('x-trace', 'header', true)}      responses:\n        "200": {description: ok}\n`);
    assert.deepEqual(sent(tools.get('twice')), ['header x-trace']);
  });

  it('what the backend could not send as described skips the operation by name, never BACKEND_CONFIG', () => {
    const { tools, skipped } = check(
      OP('badname', P('X Bad Name', 'header', true))
      + OP('badstyle', P('ids', 'query', true, ', style: matrix'))
      + `  /stray:\n    get:\n      operationId: stray\n      parameters:\n${P('id', 'path', true)}${P('q', 'query')}      responses:\n        "200": {description: ok}\n`
      + `  /getbody:\n    get:\n      operationId: getbody\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema: {type: object}\n      responses:\n        "200": {description: ok}\n`
      + `  "/find?kind={kind}":\n    get:\n      operationId: query_in_path\n      parameters:\n${P('kind', 'path', true)}      responses:\n        "200": {description: ok}\n`
      + `  /getoptbody:\n    get:\n      operationId: getoptbody\n      requestBody:\n        content:\n          application/json:\n            schema: {type: object}\n      responses:\n        "200": {description: ok}\n`,
    );
    assert.deepEqual([...tools.keys()].sort(), ['getoptbody', 'stray']);
    assert.deepEqual(args(tools.get('stray')), ['q'], 'a path parameter the path does not name is left out');
    assert.deepEqual(args(tools.get('getoptbody')), [], 'an optional GET body is left out');
    assert.deepEqual(skipped.map((m) => /\(operationId (\w+)\)/.exec(m)![1]).sort(), ['badname', 'badstyle', 'getbody', 'query_in_path']);
    // What only the backend's own check sees (a placeholder after the path's "?"): skipped with its words.
    assert.match(skipped.find((m) => m.includes('query_in_path'))!, /the http backend cannot send it as the document describes it: .*path parameter kind/);
    assert.match(skipped.find((m) => m.includes('badname'))!, /its header parameter X Bad Name is required, and "X Bad Name" is not a valid header name/);
    assert.match(skipped.find((m) => m.includes('badstyle'))!, /its query parameter ids is required, and style matrix is not allowed for a query parameter/);
    assert.match(skipped.find((m) => m.includes('getbody'))!, /a GET with a required request body/);
  });
});
