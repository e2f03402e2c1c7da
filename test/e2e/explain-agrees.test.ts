// `svc explain` agrees with the running server over every example manifest. For each
// examples/*/svc.yaml that `svc serve` can start here, and each static token it names:
// `svc explain FILE --token NAME --json` equals GET /svc/explain with that token; the
// capabilities it calls visible are exactly what GET /svc lists; each one it calls hidden is
// refused, when called, with the status of the code explain names (403 for a missing scope, 404
// for an app-only tool — ui.visibility [app] — which exists only for MCP clients that declare the
// Apps extension, as /svc does not), and a call explained one by one gives the same code (each on the
// server, the CLI once per step and code); with
// --apps (?apps=1) an app-only tool is visible, and an MCP client declaring the extension calls it.
// Where /svc is public, the anonymous view is compared the same way with `--scopes ""`. OAuth-only
// examples have no static token to compare.
// A tool the view calls `callable: as a task` (task: required): explaining a plain call says
// TASK_REQUIRED in the CLI and the server alike, and a plain MCP tools/call from the SDK client
// is refused with that code (-32601); a task-augmented call is explained as running as a task.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, run, childEnv } from '../helpers/cli.js';
import { CODES, type ErrorCode } from '../../src/errors.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { refusal } from '../helpers/gateway-front.js';

type Json = Record<string, any>;
const EXAMPLES = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'examples', d.name, 'svc.yaml'))).map((d) => `examples/${d.name}/svc.yaml`);

const varOf = (v: unknown) => (typeof v === 'string' ? /^\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}$/.exec(v)?.[1] : undefined);

/** Env for an example: a distinct value for each ${VAR} without a default and for each token variable. */
function envFor(file: string, doc: Json): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of readFileSync(file.startsWith('/') ? file : join(ROOT, file), 'utf8').matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) env[m[1]!] = `value-of-${m[1]}-0123456789`;
  for (const t of [doc.auth, ...(doc.auth?.tokens ?? [])]) {
    const v = varOf(t?.token);
    if (v) env[v] = `value-of-${v}-0123456789`;
  }
  return env;
}

/** Token name → value, for the tokens whose value comes from the environment. */
function tokensOf(doc: Json, env: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  const main = varOf(doc.auth?.token);
  if (main) out.set(doc.auth.subject ?? 'operator', env[main]!);
  for (const t of doc.auth?.tokens ?? []) {
    const v = varOf(t.token);
    if (v) out.set(t.name, env[v]!);
  }
  return out;
}

let taskToolsCompared = 0;

/** One call explained by the server alone. */
async function explainServed(srv: Served, auth: Record<string, string>, id: string): Promise<Json> {
  return (await (await fetch(`${srv.url}/svc/explain?capability=${encodeURIComponent(id)}&args=${encodeURIComponent('{}')}`, { headers: auth })).json()) as Json;
}

/** One call explained by the CLI and by the server, which must agree. */
async function explainOne(srv: Served, file: string, env: Record<string, string>, cliArgs: string[], auth: Record<string, string>, id: string, task: boolean): Promise<Json> {
  const q = `capability=${encodeURIComponent(id)}&args=${encodeURIComponent('{}')}${task ? '&task=1' : ''}`;
  const served = (await (await fetch(`${srv.url}/svc/explain?${q}`, { headers: auth })).json()) as Json;
  const cli = await run(['explain', file, ...cliArgs, '--capability', id, '--args', '{}', ...(task ? ['--task'] : []), '--json'], { env: childEnv(env) });
  assert.equal(cli.code, served.allowed ? 0 : 1, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), served, `${id}${task ? ' as a task' : ''}`);
  return served;
}

/** The task-required tools the view shows: explained as the MCP transport enforces. */
async function compareTaskRequired(srv: Served, file: string, env: Record<string, string>, cliArgs: string[], auth: Record<string, string>, view: Json, label: string): Promise<void> {
  const ids = view.capabilities.filter((c: Json) => c.callable === 'as a task').map((c: Json) => c.id as string);
  if (!ids.length) return;
  const client = new Client({ name: 'explain-agrees', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: auth } }));
  try {
    for (const id of ids) {
      const c = view.capabilities.find((x: Json) => x.id === id);
      assert.ok(c.reasons.some((r: string) => r.startsWith('task required:')), `${label}: ${id} says why`);
      const plain = await explainOne(srv, file, env, cliArgs, auth, id, false);
      assert.equal(plain.allowed, false, `${label}: ${id}`);
      assert.match(plain.reasons[0], /^TASK_REQUIRED: .*accepts a task-augmented call/);
      // The SDK's callTool refuses a task-required tool itself; a plain tools/call request reaches the server.
      await assert.rejects(client.request({ method: 'tools/call', params: { name: id.slice('tool:'.length), arguments: {} } }, CallToolResultSchema),
        (e: McpError) => e.code === -32601 && /Task augmentation required/.test(e.message), `${label}: ${id} plain MCP call`);
      const augmented = await explainOne(srv, file, env, cliArgs, auth, id, true);
      assert.ok(!augmented.reasons.some((r: string) => r.startsWith('TASK_REQUIRED')), `${label}: ${id} as a task`);
      taskToolsCompared++;
    }
  } finally {
    await client.close();
  }
}

let appOnlyCompared = 0;

/**
 * App-only tools (hidden at the `visible` step): explained for a client that declares MCP Apps (--apps,
 * ?apps=1), the view shows them, the CLI and the server agree, and an MCP client declaring the extension
 * calls them as explain says — a plain client is told NOT_FOUND, as the explained plain call says.
 */
async function compareApps(srv: Served, file: string, env: Record<string, string>, cliArgs: string[], auth: Record<string, string>, plainView: Json, label: string): Promise<void> {
  const ids = plainView.capabilities.filter((c: Json) => c.refused?.step === 'visible').map((c: Json) => c.id as string);
  if (!ids.length) return;
  const served = (await (await fetch(`${srv.url}/svc/explain?apps=1`, { headers: auth })).json()) as Json;
  const cli = await run(['explain', file, ...cliArgs, '--apps', '--json'], { env: childEnv(env) });
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout).capabilities, served.capabilities, `${label} --apps`);
  const client = new Client({ name: 'explain-agrees-apps', version: '1' }, { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } as never });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: auth } }));
  const plain = new Client({ name: 'explain-agrees-plain', version: '1' });
  await plain.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: auth } }));
  try {
    for (const id of ids) {
      const c = served.capabilities.find((x: Json) => x.id === id);
      const q = `capability=${encodeURIComponent(id)}&args=${encodeURIComponent('{}')}&apps=1`;
      const one = (await (await fetch(`${srv.url}/svc/explain?${q}`, { headers: auth })).json()) as Json;
      const name = id.slice('tool:'.length);
      // A refusal is a JSON-RPC error, or (invalid arguments, 2025-11-25) an error result naming its code.
      const call = await client.request({ method: 'tools/call', params: { name, arguments: {} } }, CallToolResultSchema).then(
        (r) => (r.isError ? String((r.content[0] as { text?: string })?.text).split(':')[0] : 'allowed'),
        (e: unknown) => (refusal(e) as { refused: string }).refused);
      assert.notEqual(c.refused?.step, 'visible', `${label}: ${id} with --apps is past the visible step`);
      assert.equal(call, one.allowed ? 'allowed' : one.code, `${label}: ${id}: explain --apps says ${one.reasons.join('; ')}`);
      await assert.rejects(plain.request({ method: 'tools/call', params: { name, arguments: {} } }, CallToolResultSchema),
        (e: McpError) => (e.data as Json)?.code === 'NOT_FOUND', `${label}: ${id} from a plain MCP client`);
      appOnlyCompared++;
    }
  } finally {
    await client.close();
    await plain.close();
  }
}

async function compareView(srv: Served, file: string, env: Record<string, string>, cliArgs: string[], token: string | undefined, label: string, whole: boolean): Promise<void> {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(`${srv.url}/svc/explain`, { headers: auth });
  assert.equal(res.status, 200, `${label}: ${await res.clone().text()}`);
  const served = (await res.json()) as Json;
  const cli = await run(['explain', file, ...cliArgs, '--json'], { env: childEnv(env) });
  assert.equal(cli.code, 0, `${label}: ${cli.stderr}`);
  const offline = JSON.parse(cli.stdout) as Json;
  if (whole) assert.deepEqual(offline, served, label);
  else assert.deepEqual(offline.capabilities, served.capabilities, label);

  // Enforcement: the lists and the refusals.
  const listed = (await (await fetch(`${srv.url}/svc`, { headers: auth })).json()) as Json;
  const ids = [
    ...listed.tools.map((t: Json) => `tool:${t.name}`), ...listed.resources.map((r: Json) => `resource:${r.uri}`),
    ...listed.resource_templates.map((r: Json) => `resource:${r.uriTemplate}`), ...listed.prompts.map((p: Json) => `prompt:${p.name}`),
  ].sort();
  const visible = served.capabilities.filter((c: Json) => c.visible).map((c: Json) => c.id).sort();
  assert.deepEqual(ids, visible, `${label}: GET /svc lists what explain calls visible`);
  const viaCli = new Set<string>(); // the CLI is compared once per step and code; the server's own answer for every one
  for (const c of served.capabilities.filter((x: Json) => !x.visible)) {
    const [kind, ...rest] = (c.id as string).split(':');
    const key = rest.join(':');
    if (kind === 'resource' && key.includes('{')) continue; // a template has no single URI to read
    const r = kind === 'resource'
      ? await fetch(`${srv.url}/svc/resources?uri=${encodeURIComponent(key)}`, { headers: auth })
      : await fetch(`${srv.url}/svc/${kind}s/${encodeURIComponent(key)}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
    const body = (await r.json()) as Json;
    assert.equal(body.error?.code, c.refused.code, `${label}: ${c.id} is hidden (${c.reasons.join('; ')}) and a call gets the code explain names`);
    assert.equal(r.status, CODES[c.refused.code as ErrorCode].status, `${label}: ${c.id}`);
    const pair = `${c.refused.step} ${c.refused.code}`;
    const one = viaCli.has(pair) ? await explainServed(srv, auth, c.id) : await explainOne(srv, file, env, cliArgs, auth, c.id, false);
    viaCli.add(pair);
    assert.equal(one.allowed, false, `${label}: ${c.id} explained alone`);
    if (c.refused.step !== 'access') assert.equal(one.code, c.refused.code, `${label}: ${c.id} explained alone`); // access: the call's own arguments decide
  }
  await compareApps(srv, file, env, cliArgs, auth, served, label);
  await compareTaskRequired(srv, file, env, cliArgs, auth, served, label);
}

describe('svc explain agrees with the server over the example manifests', () => {
  let compared = 0;
  const tmp: string[] = [];
  after(() => {
    for (const d of tmp) rmSync(d, { recursive: true, force: true });
    assert.ok(compared >= 8, `only ${compared} views compared`);
    assert.ok(taskToolsCompared >= 1, 'no task-required tool was compared');
    assert.ok(appOnlyCompared >= 1, 'no app-only tool was compared');
  });

  for (const example of EXAMPLES) {
    it(`${example}: every static token's view (and the anonymous one on a public /svc)`, async function () {
      this.timeout(60_000);
      let file = example;
      let doc = parse(readFileSync(join(ROOT, file), 'utf8')) as Json;
      if (doc.server?.allowed_hosts || doc.oauth?.provider?.path?.startsWith('/')) {
        // A deployment example (a public host name, a database under /var/lib) is served from a copy
        // that answers on loopback and keeps its database in a temporary folder; its policy is unchanged.
        const dir = mkdtempSync(join(tmpdir(), 'fastsvc-explain-'));
        tmp.push(dir);
        doc = { ...doc, server: { ...doc.server, allowed_hosts: undefined, allowed_origins: undefined, host: '127.0.0.1' } };
        if (doc.oauth?.provider?.path) doc.oauth.provider.path = join(dir, 'oauth.db');
        delete doc.base_url;
        file = join(dir, 'svc.yaml');
        writeFileSync(file, stringify(doc));
      }
      const env = envFor(file, doc);
      const tokens = tokensOf(doc, env);
      const svcPublic = (doc.routes?.public ?? []).includes('/svc');
      if (!tokens.size && !svcPublic) {
        // OAuth only: the CLI still explains each user's view.
        for (const u of doc.oauth?.users ?? []) {
          const r = await run(['explain', file, '--subject', u.username, '--json'], { env: childEnv(env) });
          assert.equal(r.code, 0, r.stderr);
          assert.equal(JSON.parse(r.stdout).principal.sub, u.username);
        }
        return;
      }
      const srv = await serveManifest({ file }, { args: ['--no-watch', '--host', '127.0.0.1'], env });
      try {
        for (const [name, value] of tokens) {
          await compareView(srv, file, env, ['--token', name], value, `${file} as ${name}`, true);
          compared++;
        }
        if (svcPublic) {
          await compareView(srv, file, env, ['--scopes', ''], undefined, `${file} anonymous`, false);
          compared++;
        }
      } finally {
        await srv.stop();
      }
    });
  }
});

// Through named endpoints: a manifest of its own with endpoints selecting by source (the Petstore `openapi` source),
// by source and tag (its `store` operations), by name (notes.*), and one with a door (required_scopes). For each
// token and endpoint: `svc explain --endpoint NAME --json` equals GET /svc/explain?endpoint=NAME; what it calls
// visible is exactly what /svc/NAME and /mcp/NAME list (SDK 1.x); each hidden capability called there — on /svc/NAME
// and over MCP on /mcp/NAME — is refused with the code explain names, and explained alone (?endpoint=&capability=,
// the CLI's --endpoint --capability) with the same code; a caller the door refuses is refused INSUFFICIENT_SCOPE
// there, by explain and by every route; a capability of the catalog outside the endpoint, explained through it, does
// not exist there (404 NOT_FOUND; the CLI: no capability, exit 1), which is what a call there gets.
const EP_ALL = 'explain-endpoints-all-0123456789';
const EP_READER = 'explain-endpoints-reader-0123456789';
const EP_ENV = { EP_ALL, EP_READER };
const ENDPOINTS_MANIFEST = `
version: 1
name: agrees
routes:
  protected: [/svc, /mcp, /ws]
profile:
  scopes: [notes.read, notes.write, ops, pets.read]
auth:
  tokens:
    - { name: all, token: "\${EP_ALL}", scopes: [notes.read, notes.write, ops, pets.read] }
    - { name: reader, token: "\${EP_READER}", scopes: [notes.read] }
tools:
  - { name: notes.hello, description: Greets., required_scopes: [notes.read], template: "Hello" }
  - { name: notes.erase, description: Erases., required_scopes: [notes.write], template: "erased" }
  - { name: ops.restart, description: Restarts., required_scopes: [ops], template: "restarted" }
resources:
  - { uri: "file:///notes/today", name: today, text: "buy milk", required_scopes: [notes.read] }
  - { uri: "file:///notes/locked", name: locked, text: "hush", required_scopes: [notes.write] }
prompts:
  - { name: notes.summary, description: Summarises., required_scopes: [notes.write], messages: [{ role: user, text: "Summarise" }] }
openapi:
  - { name: pets, document: petstore-3.0.yaml, base_url: "http://127.0.0.1:9/api/v3", required_scopes: [pets.read] }
endpoints:
  pets: { select: { sources: [pets] } }
  store: { select: { sources: [pets], tags: [store] } }
  notes: { select: { names: ["notes.*", "file:///notes/*"] } }
  ops: { required_scopes: [ops], select: { names: ["ops.*"] } }
`;

describe('svc explain agrees with the server through named endpoints', function () {
  this.timeout(60_000);
  let srv: Served;
  let compared = 0;
  let refusedOverMcp = 0;
  before(async () => {
    srv = await serveManifest(ENDPOINTS_MANIFEST, { env: EP_ENV, args: ['--no-watch'], copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' } });
  });
  after(async () => {
    await srv?.stop();
    assert.equal(compared, 8, 'every token through every endpoint');
    assert.ok(refusedOverMcp >= 3, `only ${refusedOverMcp} refusals compared over MCP`);
  });

  const cliEnv = () => childEnv(EP_ENV);
  /** A call on /svc/NAME: the refusal's code and status, or 'allowed'. */
  const callSvc = async (ep: string, auth: Record<string, string>, id: string) => {
    const [kind, ...rest] = id.split(':');
    const key = rest.join(':');
    const r = kind === 'resource'
      ? await fetch(`${srv.url}/svc/${ep}/resources?uri=${encodeURIComponent(key)}`, { headers: auth })
      : await fetch(`${srv.url}/svc/${ep}/${kind}s/${encodeURIComponent(key)}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
    return { status: r.status, code: ((await r.json()) as Json).error?.code as string | undefined };
  };
  /** The same call over MCP on /mcp/NAME: the refusal's code, or 'allowed'. */
  const callMcp = (client: Client, id: string): Promise<string> => {
    const [kind, ...rest] = id.split(':');
    const key = rest.join(':');
    const call = kind === 'resource' ? client.readResource({ uri: key }) : kind === 'prompt' ? client.getPrompt({ name: key, arguments: {} })
      : client.request({ method: 'tools/call', params: { name: key, arguments: {} } }, CallToolResultSchema);
    return call.then(() => 'allowed', (e: unknown) => (refusal(e) as { refused: string }).refused);
  };
  const explainVia = async (ep: string, auth: Record<string, string>, id: string) => {
    const r = await fetch(`${srv.url}/svc/explain?endpoint=${ep}&capability=${encodeURIComponent(id)}&args=${encodeURIComponent('{}')}`, { headers: auth });
    return { status: r.status, body: (await r.json()) as Json };
  };

  for (const [name, token] of [['all', EP_ALL], ['reader', EP_READER]] as const) {
    for (const ep of ['pets', 'store', 'notes', 'ops']) {
      it(`${name} through ${ep}`, async () => {
        const auth = { authorization: `Bearer ${token}` };
        const served = (await (await fetch(`${srv.url}/svc/explain?endpoint=${ep}`, { headers: auth })).json()) as Json;
        const cli = await run(['explain', srv.file, '--token', name, '--endpoint', ep, '--json'], { env: cliEnv() });
        assert.equal(cli.code, 0, cli.stderr);
        assert.deepEqual(JSON.parse(cli.stdout), served, `${name} through ${ep}: the CLI and the server`);
        assert.ok(served.capabilities.length > 0, 'the endpoint selects something');
        const viaCli = new Set<string>();
        /** One capability explained through the endpoint by the server, and by the CLI once per code. */
        const explainedAlone = async (id: string, code: string) => {
          const one = await explainVia(ep, auth, id);
          assert.equal(one.status, 200);
          assert.equal(one.body.allowed, false, `${id} explained alone`);
          assert.equal(one.body.code, code, `${id} explained alone`);
          if (viaCli.has(code)) return;
          viaCli.add(code);
          const c = await run(['explain', srv.file, '--token', name, '--endpoint', ep, '--capability', id, '--args', '{}', '--json'], { env: cliEnv() });
          assert.equal(c.code, 1, c.stderr);
          assert.deepEqual(JSON.parse(c.stdout), one.body, `${id}: the CLI and the server`);
        };

        if (!served.endpoint.enters) {
          // The door refuses: nothing is reached, and every route there says INSUFFICIENT_SCOPE.
          assert.ok(served.capabilities.every((c: Json) => !c.visible));
          const svc = await fetch(`${srv.url}/svc/${ep}`, { headers: auth });
          assert.deepEqual([svc.status, ((await svc.json()) as Json).error?.code], [403, 'INSUFFICIENT_SCOPE']);
          const init = await fetch(`${srv.url}/mcp/${ep}`, {
            method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'door', version: '1' } } }),
          });
          assert.equal(init.status, 403);
          assert.match(init.headers.get('www-authenticate') ?? '', /insufficient_scope/);
          for (const c of served.capabilities) {
            assert.deepEqual(await callSvc(ep, auth, c.id), { status: 403, code: 'INSUFFICIENT_SCOPE' }, c.id);
            await explainedAlone(c.id, 'INSUFFICIENT_SCOPE');
          }
          compared++;
          return;
        }

        const visible = served.capabilities.filter((c: Json) => c.visible).map((c: Json) => c.id).sort();
        const listed = (await (await fetch(`${srv.url}/svc/${ep}`, { headers: auth })).json()) as Json;
        const svcIds = [
          ...listed.tools.map((t: Json) => `tool:${t.name}`), ...listed.resources.map((r: Json) => `resource:${r.uri}`),
          ...listed.resource_templates.map((r: Json) => `resource:${r.uriTemplate}`), ...listed.prompts.map((p: Json) => `prompt:${p.name}`),
        ].sort();
        assert.deepEqual(svcIds, visible, `GET /svc/${ep} lists what explain calls visible`);
        const client = new Client({ name: 'explain-agrees-endpoints', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp/${ep}`), { requestInit: { headers: auth } }));
        try {
          const mcpIds = [
            ...(await client.listTools()).tools.map((t) => `tool:${t.name}`), ...(await client.listResources()).resources.map((r) => `resource:${r.uri}`),
            ...(await client.listResourceTemplates()).resourceTemplates.map((r) => `resource:${r.uriTemplate}`), ...(await client.listPrompts()).prompts.map((p) => `prompt:${p.name}`),
          ].sort();
          assert.deepEqual(mcpIds, visible, `/mcp/${ep} lists what explain calls visible`);
          for (const c of served.capabilities.filter((x: Json) => !x.visible)) {
            const code = c.refused.code as ErrorCode;
            assert.deepEqual(await callSvc(ep, auth, c.id), { status: CODES[code].status, code }, `${c.id} on /svc/${ep} (${c.reasons.join('; ')})`);
            assert.equal(await callMcp(client, c.id), code, `${c.id} on /mcp/${ep}`);
            refusedOverMcp++;
            await explainedAlone(c.id, code);
          }

          // A capability of the catalog outside the endpoint does not exist there.
          const whole = (await (await fetch(`${srv.url}/svc/explain`, { headers: auth })).json()) as Json;
          const inView = new Set(served.capabilities.map((c: Json) => c.id));
          const outside = whole.capabilities.map((c: Json) => c.id as string).find((id: string) => id.startsWith('tool:') && !inView.has(id))!;
          assert.ok(outside, `the catalog has a tool outside ${ep}`);
          const one = await explainVia(ep, auth, outside);
          assert.deepEqual([one.status, one.body.error?.code], [404, 'NOT_FOUND'], `${outside} explained through ${ep}`);
          const c = await run(['explain', srv.file, '--token', name, '--endpoint', ep, '--capability', outside, '--json'], { env: cliEnv() });
          assert.equal(c.code, 1);
          assert.match(c.stderr, new RegExp(`no capability ${outside.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
          assert.deepEqual(await callSvc(ep, auth, outside), { status: 404, code: 'NOT_FOUND' }, `${outside} called on /svc/${ep}`);
          assert.equal(await callMcp(client, outside), 'NOT_FOUND', `${outside} called on /mcp/${ep}`);
        } finally {
          await client.close();
        }
        compared++;
      });
    }
  }
});
