// The `svc` command as users run it: `node dist/cli.js …` in a child process
// (run `npm run build` first; `npm test` does). Exit codes, the
// FILE:LINE:COL: CODE: message format, --json, the single listening line,
// PORT, SIGTERM draining, init, and the generated development token. The serve
// process helpers live in test/helpers/serve-process.ts.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { childEnv, CLI, PROBLEM_LINE, ROOT, run, STACK_FRAME } from '../helpers/cli.js';
import { serveManifest } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const INVALID = join(ROOT, 'test', 'fixtures', 'invalid');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('cli', function () {
  let tmp: string;
  before(() => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-cli-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  describe('validate', () => {
    const manifests = ['svc.yaml', ...(existsSync(join(ROOT, 'examples'))
      ? readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'examples', d.name, 'svc.yaml')))
        .map((d) => `examples/${d.name}/svc.yaml`)
      : [])];

    it('the list of manifests to validate includes the root svc.yaml', () => {
      assert.ok(manifests.includes('svc.yaml'));
      assert.ok(existsSync(join(ROOT, 'svc.yaml')));
    });

    for (const m of manifests) {
      it(`exits 0 on ${m}`, async () => {
        // Secrets an example takes from the environment (${VAR} with no default) get a placeholder
        // value, as an operator would set them; everything else is validated as written.
        const required = [...readFileSync(join(ROOT, m), 'utf8').matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((x) => x[1]!);
        const r = await run(['validate', m], { env: childEnv(Object.fromEntries(required.map((v) => [v, 'placeholder-secret-value']))) });
        assert.equal(r.stderr, '', `stderr:\n${r.stderr}`);
        assert.equal(r.code, 0);
      });
    }

    it('every examples/* folder has a svc.yaml', () => {
      if (!existsSync(join(ROOT, 'examples'))) return;
      const dirs = readdirSync(join(ROOT, 'examples'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
      assert.deepEqual(dirs.filter((d) => !existsSync(join(ROOT, 'examples', d, 'svc.yaml'))), []);
    });

    it('on a broken file: one FILE:LINE:COL: CODE: message line per problem on stderr, exit 1', async () => {
      const file = relative(ROOT, join(INVALID, 'multiple-problems.yaml'));
      const r = await run(['validate', file]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 4, r.stderr);
      const parsed = lines.map((l) => {
        const m = PROBLEM_LINE.exec(l);
        assert.ok(m, `not FILE:LINE:COL: CODE: message — ${l}`);
        return { file: m[1], at: `${m[2]}:${m[3]}`, code: m[4] };
      });
      assert.ok(parsed.every((p) => p.file === file));
      assert.deepEqual(parsed.map((p) => `${p.code}@${p.at}`).sort(), ['AUTH_MISSING@6:14', 'DUPLICATE_NAME@12:5', 'SCOPE_UNDECLARED@10:23', 'TEMPLATE_ARG_UNKNOWN@11:15']);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });

    it('a YAML syntax error is reported the same way', async () => {
      const file = join(INVALID, 'yaml-syntax.yaml');
      const r = await run(['validate', file]);
      assert.equal(r.code, 1);
      assert.match(r.stderr.trimEnd(), new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:18: YAML_SYNTAX: \\S`));
    });

    it('a missing file exits 1 with FILE_UNREADABLE', async () => {
      const r = await run(['validate', join(tmp, 'nope.yaml')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, / FILE_UNREADABLE: cannot read manifest: no such file \(`fastsvc init` writes a starter svc\.yaml\)/);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });

    it('--json lists the problems with code, line and col (and exits 1)', async () => {
      const r = await run(['validate', join(INVALID, 'multiple-problems.yaml'), '--json']);
      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout);
      assert.equal(out.valid, false);
      const got = (out.problems as { code: string; line: number; col: number }[]).map((p) => `${p.code}@${p.line}:${p.col}`).sort();
      assert.deepEqual(got, ['AUTH_MISSING@6:14', 'DUPLICATE_NAME@12:5', 'SCOPE_UNDECLARED@10:23', 'TEMPLATE_ARG_UNKNOWN@11:15']);
    });

    it('--json on a valid file says valid with no problems (exit 0)', async () => {
      const r = await run(['validate', 'svc.yaml', '--json']);
      assert.equal(r.code, 0);
      const out = JSON.parse(r.stdout);
      assert.equal(out.valid, true);
      assert.deepEqual(out.problems, []);
    });
  });

  describe('serve', () => {
    it('--port 0 prints exactly one stdout line, listening on http://127.0.0.1:PORT, and /healthz answers', async () => {
      const s = await serveManifest({ file: 'svc.yaml' }, { env: { SVC_TOKEN: 'cli-test-token-0123456789' } });
      try {
        assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.notEqual(new URL(s.url).port, '0');
        const r = await fetch(s.url + '/healthz');
        assert.equal(r.status, 200);
        const tool = await fetch(s.url + '/svc/tools/greet.hello', { method: 'POST', headers: { authorization: 'Bearer cli-test-token-0123456789', 'content-type': 'application/json' }, body: '{"name":"CLI"}' });
        assert.equal(tool.status, 200);
      } finally {
        const { code } = await s.stop();
        assert.equal(code, 0);
      }
      assert.equal(s.stdout(), `listening on ${s.url}\n`);
    });

    it('the PORT environment variable picks the port', async () => {
      const port = await freePort();
      const s = await serveManifest({ file: 'svc.yaml' }, { port: null, env: { PORT: String(port), SVC_TOKEN: 'cli-test-token-0123456789' } });
      try {
        assert.equal(s.url, `http://127.0.0.1:${port}`);
        assert.equal((await fetch(s.url + '/healthz')).status, 200);
      } finally {
        await s.stop();
      }
    });

    it('SIGTERM lets an in-flight request finish, then exits 0', async () => {
      const s = await serveManifest(`version: 1
name: drain-test
server: { host: 127.0.0.1, port: 0 }
routes: { public: [/healthz, /svc], protected: [] }
tools:
  - name: slow.op
    description: Marks that it started, sleeps half a second, then answers.
    exec: { argv: [sh, -c, "echo > started.flag; sleep 0.5; echo done"], timeout_ms: 10000 }
`, { port: null });
      const call = fetch(s.url + '/svc/tools/slow.op', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await waitFor(() => existsSync(join(s.dir, 'started.flag')) || undefined, 'the slow call has started', 10_000, 25);
      s.proc.kill('SIGTERM');
      const res = await call;
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { result: string }).result, 'done\n');
      const { code, signal } = await s.exit;
      assert.equal(signal, null);
      assert.equal(code, 0);
    });

    it('after SIGTERM no new connection is accepted', async () => {
      const s = await serveManifest({ file: 'svc.yaml' }, { env: { SVC_TOKEN: 'cli-test-token-0123456789' } });
      const exit = await s.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, s.stderr());
      await assert.rejects(fetch(s.url + '/healthz'));
    });

    it('a broken manifest exits 1 with FILE:LINE:COL: CODE lines and no stack trace', async () => {
      const file = join(INVALID, 'scope-undeclared-tool.yaml');
      const r = await run(['serve', file, '--port', '0']);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.ok(lines.some((l) => PROBLEM_LINE.test(l) && l.includes(': SCOPE_UNDECLARED: ')), r.stderr);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });

    it('a port already in use exits 1 with one line saying what to do, and no stack trace', async () => {
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
      const port = (blocker.address() as net.AddressInfo).port;
      try {
        const r = await run(['serve', join(ROOT, 'svc.yaml'), '--port', String(port)], { env: childEnv({ SVC_TOKEN: 't' }) });
        assert.equal(r.code, 1);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use: .*--port N`));
        assert.doesNotMatch(r.stderr, STACK_FRAME);
      } finally {
        blocker.close();
      }
    });

    it('a manifest that fails while assembling (missing fs root) exits 1 without a stack trace', async () => {
      const dir = mkdtempSync(join(tmp, 'assemble-'));
      writeFileSync(join(dir, 'svc.yaml'), `version: 1
name: t
routes: { public: [/healthz], protected: [] }
tools:
  - name: files.read
    description: x
    input_schema: { type: object, properties: { path: { type: string } } }
    fs: { root: no-such-folder, op: read }
`);
      const r = await run(['serve', join(dir, 'svc.yaml'), '--port', '0']);
      assert.equal(r.code, 1);
      assert.ok(r.stderr.trimEnd().split('\n').some((l) => PROBLEM_LINE.test(l)), r.stderr);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });

    it('with auth.generate_if_unset and SVC_TOKEN unset, a token is printed on stderr and it works', async () => {
      const s = await serveManifest(`version: 1
name: gen-test
server: { host: 127.0.0.1, port: 0 }
profile: { scopes: [a.use] }
auth:
  token: \${SVC_TOKEN:-}
  generate_if_unset: true
tools:
  - { name: a.ping, description: p, required_scopes: [a.use], template: pong }
`, { port: null });
      try {
        const call = (token: string) => fetch(s.url + '/svc/tools/a.ping', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
        assert.equal((await call('not-the-token')).status, 401);
        // Candidates: long base64url words on stderr lines that are not JSON log lines.
        const candidates = s.stderr().split('\n').filter((l) => !l.startsWith('{')).flatMap((l) => l.match(/[A-Za-z0-9_-]{32,}/g) ?? []);
        assert.ok(candidates.length > 0, `no token on stderr:\n${s.stderr()}`);
        const statuses = await Promise.all(candidates.map(async (c) => (await call(c)).status));
        assert.ok(statuses.includes(200), `none of the printed strings works as a token: ${statuses}`);
        assert.ok(!s.stdout().includes(candidates[statuses.indexOf(200)]!), 'the token is not on stdout');
      } finally {
        await s.stop();
      }
    });
  });

  describe('init and usage', () => {
    it('init writes a svc.yaml that validates, and refuses to overwrite it', async () => {
      const dir = join(tmp, 'init-target');
      const r = await run(['init', dir]);
      assert.equal(r.code, 0, r.stderr);
      const file = join(dir, 'svc.yaml');
      assert.ok(existsSync(file));
      const v = await run(['validate', file]);
      assert.equal(v.code, 0, v.stderr);
      const before = readFileSync(file, 'utf8');
      writeFileSync(file, before + '# my edit\n');
      const again = await run(['init', dir]);
      assert.notEqual(again.code, 0);
      assert.equal(readFileSync(file, 'utf8'), before + '# my edit\n', 'the existing file is untouched');
    });

    it('an unknown command exits 2', async () => {
      const r = await run(['frobnicate']);
      assert.equal(r.code, 2);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    });
  });
});
