// The Petstore documents (OpenAPI 3.0, 3.1 and Swagger 2.0, test/fixtures/openapi/) as `openapi:` sources of the real
// `svc serve`, every call answered by Stoplight Prism mocking the same document (--errors: a request that breaks the
// document is refused, test/e2e/prism-self-check.test.ts shows it), with a recording proxy between them that keeps
// the exact request fastsvc built (the call tables: openapi-petstore-cases.ts). Run with both MCP SDK clients (1.x on
// 2025-11-25, 2.x on 2026-07-28), one call also on /svc and /ws. Asserted for each document: the catalog (the
// operations as tools, the method's annotations, path/body arguments required; an operation fastsvc cannot express
// absent, and named by a located `svc validate` warning); a call of each kind — a path parameter, query parameters, a
// query array exploded, a header parameter, a JSON body on POST and PUT, DELETE, a form body where the document has
// one, a path value that needs escaping — reaches Prism exactly as the document describes (method, path and query,
// headers, body) and Prism finds no violation (2xx, or the only answer the document gives), its JSON answer coming
// back as structured content valid against the listed output schema; the source's outbound auth reaches Prism as the
// api_key header the document's securitySchemes name, with the value from the environment; a source without
// credentials is refused by Prism and the call comes back as a tool error naming the status (and, where Prism writes
// a problem+json, its message), also when run as a task; scopes: a caller without the scope (scope_map from the
// oauth2 scopes, an override per operation, which also sets a description and an annotation beside the method's)
// neither sees nor calls the tool, and neither the proxy nor Prism ever sees that call.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { childEnv, ROOT, run } from '../helpers/cli.js';
import { PRISM_CHECK, startPrism, type Prism } from '../helpers/prism.js';
import { recordingProxy, type Exchange, type RecordingProxy } from '../helpers/recording-proxy.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { connectSdk, SDK_CLIENTS, type ListedTool, type McpCaller } from '../helpers/sdk-clients.js';
import { callTool, legacyClient, type Outcome } from '../helpers/gateway-front.js';
import { DOCS, PET } from './openapi-petstore-cases.js';

type Json = Record<string, unknown>;
const FIXTURES = join(ROOT, 'test', 'fixtures', 'openapi');

const ajv = new Ajv2020({ strict: false, validateFormats: false });
const resultText = (r: Json) => ((r.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? `[${c.type}]`).join('\n');

for (const doc of DOCS) {
  describe(`OpenAPI source: ${doc.label} through svc serve, answered by Prism (both SDK clients)`, function () {
    this.timeout(120_000);
    let dir: string;
    let prism: Prism;
    let checkPrism: Prism;
    let proxy: RecordingProxy;
    let srv: Served;
    const token = secret(randomBytes(24).toString('base64url'));
    const reader = secret(randomBytes(24).toString('base64url'));
    const writer = secret(randomBytes(24).toString('base64url'));
    const petKey = secret(`key-${randomBytes(18).toString('base64url')}`);
    const petBearer = secret(`bearer-${randomBytes(18).toString('base64url')}`);
    const fixture = readFileSync(join(FIXTURES, doc.fixture), 'utf8');
    const ext = doc.fixture.slice(doc.fixture.lastIndexOf('.'));

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'fastsvc-oa-prism-'));
      const prismDoc = join(dir, `for-prism${ext}`);
      writeFileSync(prismDoc, doc.forPrism ? doc.forPrism(fixture) : fixture);
      [prism, checkPrism] = await Promise.all([startPrism(prismDoc), startPrism(PRISM_CHECK)]);
      proxy = await recordingProxy(prism.url);
      const source = (name: string, more: Json) => ({ name, document: `apis/petstore${ext}`, base_url: proxy.url, ...more });
      srv = await serveManifest({
        version: 1,
        name: 'petstore-e2e',
        server: { host: '127.0.0.1' },
        profile: { scopes: ['pets.read', 'pets.write', 'pets.admin'] },
        auth: {
          token: '${SVC_TOKEN}',
          tokens: [{ name: 'reader', token: '${READER_TOKEN}', scopes: ['pets.read'] }, { name: 'writer', token: '${WRITER_TOKEN}', scopes: ['pets.read', 'pets.write'] }],
        },
        openapi: [
          // Every operation but deletePet, with the api_key the document's securitySchemes name as the source's
          // credential, and a bearer for the oauth2 scheme as a fixed header (Prism checks both schemes are met).
          source('petstore', {
            auth: { static: { header: 'api_key', value: '${PET_KEY}' } },
            headers: { Authorization: 'Bearer ${PET_BEARER}' },
            exclude: { operations: ['deletePet'] },
            required_scopes: ['pets.read'],
            scope_map: { 'read:pets': ['pets.read'], 'write:pets': ['pets.write'] },
          }),
          // deletePet alone, so its own api_key header parameter is the caller's (no credential sets that header).
          source('keyless', {
            headers: { Authorization: 'Bearer ${PET_BEARER}' },
            include: { operations: ['deletePet'] },
            naming: 'keyless.{operationId}',
            required_scopes: ['pets.read'],
            overrides: { deletePet: { required_scopes: ['pets.admin'], description: 'Deletes a pet (administrators only).', annotations: { openWorldHint: true } } },
          }),
          // No credential at all: Prism refuses getPetById (401). It may also run as a task.
          source('anon', { include: { operations: ['getPetById'] }, naming: 'anon.{operationId}', required_scopes: ['pets.read'], overrides: { getPetById: { task: 'optional' } } }),
          // The same refusal from a document with no 401 documented: Prism writes a problem+json message.
          { name: 'check', document: 'apis/prism-check.json', base_url: checkPrism.url, include: { operations: ['getPet'] }, naming: 'check.{operationId}', required_scopes: ['pets.read'] },
        ],
      }, {
        files: { [`apis/petstore${ext}`]: fixture, 'apis/prism-check.json': readFileSync(PRISM_CHECK) },
        env: { SVC_TOKEN: token, READER_TOKEN: reader, WRITER_TOKEN: writer, PET_KEY: petKey, PET_BEARER: petBearer },
      });
    });
    after(async () => {
      await srv?.stop();
      await proxy?.close();
      await Promise.all([prism?.stop(), checkPrism?.stop()]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    // Failure messages leave request headers out (they carry the test's credentials).
    const why = (r: unknown) => `${JSON.stringify(r, (k, v: unknown) => (k === 'headers' ? Object.keys(v as object) : v)).slice(0, 1500)}\nproxy saw: ${proxy.seen.slice(-3).map((s) => `${s.method} ${s.url} → ${s.status} ${s.answer.slice(0, 300)}`).join('\n')}\nPrism:\n${prism.tail(15)}\nsvc serve:\n${srv.stderr().slice(-1500)}`;

    it('the expected requests of the table, sent by plain fetch, are what Prism accepts (the table matches the document), and a bad one it refuses', async () => {
      for (const k of doc.cases) {
        const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${petBearer}`, api_key: petKey, ...k.headers };
        const body = k.json !== undefined ? JSON.stringify(k.json) : k.form;
        const res = await fetch(`${prism.url}${k.url}`, { method: k.method, headers, body });
        const text = await res.text();
        const got = `${k.method} ${k.url} → ${res.status} ${res.headers.get('sl-violations') ?? ''} ${text.slice(0, 300)}`;
        assert.equal(res.headers.get('sl-violations'), null, got);
        if (k.status) assert.equal(res.status, k.status, got);
        else assert.ok(res.ok, got);
        if (k.answer !== 'none') assert.match(res.headers.get('content-type') ?? '', /json/, `${k.method} ${k.url} answers JSON`);
      }
      // And this document's Prism refuses what breaks it, naming the violation (so an accepted call means something).
      const bad = await fetch(`${prism.url}/pet/rex`, { headers: { accept: 'application/json', authorization: `Bearer ${petBearer}`, api_key: petKey } });
      await bad.text();
      assert.ok(bad.status >= 400 && bad.status < 500, String(bad.status));
      assert.match(bad.headers.get('sl-violations') ?? '', /petid must be integer/i);
    });

    it('svc validate warns about each operation it cannot serve, naming it, at the source\'s line', async () => {
      const v = await run(['validate', srv.file], { env: childEnv({ SVC_TOKEN: token, READER_TOKEN: reader, WRITER_TOKEN: writer, PET_KEY: petKey, PET_BEARER: petBearer }) });
      assert.equal(v.code, 0, v.stderr);
      const skipped = (v.stdout + v.stderr).split('\n').filter((l) => /warning: OPENAPI_SKIPPED/.test(l));
      for (const n of doc.absent) assert.ok(skipped.some((l) => l.includes(`operationId ${n}`) && /svc\.yaml:\d+:\d+: /.test(l)), `a located warning names ${n}:\n${v.stdout}${v.stderr}`);
      if (!doc.absent.length) assert.deepEqual(skipped, []);
    });

    for (const kind of SDK_CLIENTS) {
      describe(kind, () => {
        let c: McpCaller;
        let tools: Map<string, ListedTool>;
        before(async () => {
          c = await connectSdk(kind, srv.url, token);
          tools = new Map((await c.listAll()).map((t) => [t.name, t]));
        });
        after(() => c?.close());

        it('lists the operations as tools, with the method\'s annotations and what it cannot express left out', () => {
          const names = [...tools.keys()];
          for (const k of doc.cases) assert.ok(tools.has(k.tool), `${k.tool} listed: ${names.join(', ')}`);
          for (const n of ['anon.getPetById', 'check.getPet']) assert.ok(tools.has(n), `${n} listed: ${names.join(', ')}`);
          assert.ok(!tools.has('deletePet'), 'deletePet is excluded from the petstore source');
          for (const n of doc.absent) assert.ok(!names.some((x) => x.endsWith(n)), `${n} cannot be expressed and is not listed`);
          for (const [name, hints] of Object.entries(doc.annotations)) {
            assert.deepEqual(Object.fromEntries(Object.keys(hints).map((h) => [h, tools.get(name)?.annotations?.[h]])), hints, `${name}'s annotations: ${JSON.stringify(tools.get(name)?.annotations)}`);
          }
          const del = tools.get('keyless.deletePet')!;
          assert.equal(del.description, 'Deletes a pet (administrators only).', 'the override\'s description');
          assert.deepEqual(del.annotations, { destructiveHint: true, openWorldHint: true }, 'the override\'s annotations beside the method\'s');
          const get = tools.get('getPetById')!;
          assert.ok((get.inputSchema.required as string[] | undefined)?.includes('petId'), JSON.stringify(get.inputSchema));
          assert.equal((get.inputSchema.properties as Record<string, Json>).petId?.type, 'integer');
          const add = tools.get('addPet')!;
          assert.ok((add.inputSchema.required as string[] | undefined)?.includes('body'), `the JSON body is the required argument body: ${JSON.stringify(add.inputSchema)}`);
          // The Pet's own required properties, whether the body schema is Pet or (3.1: siblings of a $ref) allOf [Pet, …].
          const body = (add.inputSchema.properties as Record<string, Json>).body!;
          const required = [body, ...((body.allOf as Json[] | undefined) ?? [])].flatMap((s) => (s.required as string[] | undefined) ?? []);
          for (const r of ['name', 'photoUrls']) assert.ok(required.includes(r), `body requires ${r}: ${JSON.stringify(body).slice(0, 400)}`);
        });

        for (const k of doc.cases) {
          it(`${k.what}: ${k.tool} reaches Prism as ${k.method} ${k.url} and Prism accepts it${k.status ? ` (the document's answer: ${k.status})` : ''}`, async () => {
            const before = proxy.seen.length;
            const out = await c.call(k.tool, k.args);
            assert.ok('result' in out, why(out));
            const r = out.result;
            const sent = proxy.seen.slice(before);
            assert.equal(sent.length, 1, why(sent));
            const x = sent[0] as Exchange;
            assert.equal(`${x.method} ${x.url}`, `${k.method} ${k.url}`);
            assert.equal(x.answerHeaders['sl-violations'], undefined, `Prism found no violation: ${why(x)}`);
            if (k.status) {
              assert.equal(x.status, k.status, why(x));
              assert.equal(r.isError, true, `a ${k.status} answer is a tool error: ${why(r)}`);
              assert.match(resultText(r), new RegExp(String(k.status)));
            } else {
              assert.ok(x.status >= 200 && x.status < 300, why(x));
              assert.notEqual(r.isError, true, why(r));
            }
            for (const [h, v] of Object.entries(k.headers ?? {})) assert.equal(String(x.headers[h]).split(';')[0], v, `header ${h} among ${Object.keys(x.headers).join(', ')}`);
            if (k.json !== undefined) assert.deepEqual(JSON.parse(x.body), k.json);
            if (k.form !== undefined) assert.equal(x.body, k.form);
            if (k.json === undefined && k.form === undefined) assert.equal(x.body, '', 'no body');
            if (!k.tool.startsWith('keyless.')) assert.equal(x.headers['api_key'], petKey, 'the source\'s credential is the api_key header');
            assert.equal(x.headers.authorization, `Bearer ${petBearer}`);
            const schema = tools.get(k.tool)!.outputSchema;
            if (k.answer === 'array') assert.ok(Array.isArray(JSON.parse(resultText(r))), `a JSON array: ${why(r)}`);
            if (k.answer === 'object') {
              assert.ok(schema, `${k.tool} lists an output schema`);
              assert.ok(r.structuredContent && typeof r.structuredContent === 'object', why(r));
              const valid = ajv.validate(schema, r.structuredContent);
              assert.ok(valid, `structured content against the output schema: ${ajv.errorsText()}\n${why(r)}`);
              assert.deepEqual(JSON.parse(resultText(r)), r.structuredContent, 'the text is the same JSON');
            }
          });
        }

        it('a source without credentials: Prism refuses (401) and the call is a tool error naming the status', async () => {
          const before = prism.received().length;
          const out = await c.call('anon.getPetById', { petId: 7 });
          assert.ok('result' in out, why(out));
          assert.equal(out.result.isError, true, why(out));
          assert.match(resultText(out.result), /401/);
          assert.equal(prism.received().length, before + 1, 'Prism saw it');
          assert.equal(proxy.seen.at(-1)?.headers['api_key'], undefined);
        });

        it('Prism\'s own message comes back in the tool error when it writes one (problem+json detail)', async () => {
          const out = await c.call('check.getPet', { petId: 7 });
          assert.ok('result' in out, JSON.stringify(out));
          assert.equal(out.result.isError, true, JSON.stringify(out));
          const text = resultText(out.result);
          assert.match(text, /401/);
          assert.match(text, /does not fullfil the security requirements/, text);
        });
      });
    }

    it('the same call on /svc and /ws reaches Prism as the same request, with the same structured answer', async () => {
      const answers = [];
      for (const front of ['svc', 'ws'] as const) {
        const before = proxy.seen.length;
        const out = await callTool(front, srv.url, token, 'getPetById', { petId: 7 });
        assert.ok('result' in out, `${front}: ${JSON.stringify(out)}`);
        assert.equal(proxy.seen.length, before + 1);
        assert.equal(`${proxy.seen.at(-1)!.method} ${proxy.seen.at(-1)!.url}`, 'GET /pet/7');
        assert.equal(proxy.seen.at(-1)!.headers['api_key'], petKey);
        answers.push(out.result.structuredContent);
      }
      assert.ok(answers[0] && typeof answers[0] === 'object', JSON.stringify(answers));
      assert.deepEqual(answers[1], answers[0]);
    });

    it('run as a task (override task: optional; the 1.x client\'s tasks): Prism\'s refusal fails the task, and tasks/result is the tool error', async () => {
      const c = await legacyClient(srv.url, token);
      try {
        await c.client.listTools();
        const before = prism.received().length;
        const seen: { type: string; error?: Error; task?: { taskId: string; status: string; statusMessage?: string } }[] = [];
        for await (const m of c.client.experimental.tasks.callToolStream({ name: 'anon.getPetById', arguments: { petId: 7 } }, undefined, { task: { ttl: 60_000 } })) seen.push(m as never);
        const what = JSON.stringify(seen);
        assert.equal(seen[0]?.type, 'taskCreated', what);
        // 2025-11-25: a tool call whose result is an error ends its task `failed` (the 2026 era says completed).
        const end = seen.filter((m) => m.type === 'taskStatus').at(-1)?.task;
        assert.equal(end?.status, 'failed', what);
        assert.match(end?.statusMessage ?? '', /BACKEND_FAILED.*401/, what);
        assert.equal(prism.received().length, before + 1);
        const result = await c.client.experimental.tasks.getTaskResult(seen[0]!.task!.taskId, CallToolResultSchema);
        assert.equal(result.isError, true, JSON.stringify(result));
        assert.match(resultText(result as Json), /401/);
        // The tool has an output schema: its error result carries no structuredContent to check against it, as on a plain call.
        assert.equal((result as Json).structuredContent, undefined);
      } finally {
        await c.close();
      }
    });

    it('scopes: a caller without the scope neither sees nor calls the tool, and Prism never sees the call', async () => {
      const seen = proxy.seen.length;
      const received = prism.received().length;
      const asReader = await connectSdk('sdk 1.x (2025-11-25)', srv.url, reader);
      const asWriter = await connectSdk('sdk 2.x (2026-07-28)', srv.url, writer);
      try {
        const readerTools = (await asReader.listAll()).map((t) => t.name);
        assert.ok(readerTools.includes('getUserByName') || readerTools.includes('findPetsByStatus') || readerTools.includes('anon.getPetById'), readerTools.join(', '));
        // scope_map: addPet's oauth2 scopes are write:pets and read:pets → pets.write and pets.read.
        assert.ok(!readerTools.includes('addPet'), `the reader does not see addPet: ${readerTools.join(', ')}`);
        assert.ok(!readerTools.includes('keyless.deletePet'));
        const refused = async (who: McpCaller, tool: string, args: Json) => {
          const out: Outcome = await who.call(tool, args);
          assert.ok('refused' in out, `${tool} refused: ${JSON.stringify(out)}`);
          return out.refused;
        };
        assert.equal(await refused(asReader, 'addPet', { body: PET }), 'INSUFFICIENT_SCOPE');
        assert.equal(await refused(asReader, 'updatePet', { body: PET }), 'INSUFFICIENT_SCOPE');
        // The override: deletePet needs pets.admin, which the writer lacks.
        assert.equal(await refused(asWriter, 'keyless.deletePet', { petId: 7 }), 'INSUFFICIENT_SCOPE');
        assert.equal(proxy.seen.length, seen, 'nothing reached the proxy');
        assert.equal(prism.received().length, received, 'nothing reached Prism');
        // The writer holds what addPet needs: the same call goes through (to the answer the document gives it).
        const ok = await asWriter.call('addPet', { body: PET });
        const documented = doc.cases.find((k) => k.tool === 'addPet')!.status;
        assert.ok('result' in ok && (ok.result.isError === true) === (documented !== undefined), why(ok));
        assert.equal(proxy.seen.length, seen + 1);
        assert.equal(proxy.seen.at(-1)!.answerHeaders['sl-violations'], undefined, 'Prism accepted it');
      } finally {
        await asReader.close();
        await asWriter.close();
      }
    });
  });
}
