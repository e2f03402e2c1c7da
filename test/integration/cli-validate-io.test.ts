// `svc validate` finds what `svc serve` would refuse, offline: a missing SQLite
// file, a query that does not prepare, an exec program not found, a missing
// content or resource file, an fs.root that is not a folder, an unreadable or
// certificate-less oauth.client_id_metadata_documents.ca_file, a sign-in provider's
// private_key_file that is missing or holds no private key (a-file.txt) — each one line
// FILE:LINE:COL: CODE: at the offending value, the very line serve prints;
// `--no-io` skips them; no network and no module code; "did you mean …?" for an
// unknown field; `--allow-unset-env` for CI without secrets. Spawns the real CLI.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { childEnv, CLI, PROBLEM_LINE, run, STACK_FRAME } from '../helpers/cli.js';

const HEAD = `version: 1
name: io-test
routes: { public: [/healthz, /svc], protected: [] }
`;

/** LINE:COL (1-based) of the first occurrence of `needle` in `text`. */
function pos(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0, `${needle} not in the manifest`);
  const before = text.slice(0, i).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

const TOOL = (backend: string) => `tools:
  - name: t.one
    description: one tool
    input_schema: { type: object, properties: { path: { type: string } } }
${backend}`;

/** Sign-in through a provider with private_key_jwt, its key in `keyFile`. */
const LOGIN = (keyFile: string) => `oauth:
  enabled: true
  provider: { type: memory }
  login:
    mode: upstream
    upstreams:
      - name: corp
        issuer: https://idp.example
        client_id: fastsvc
        auth_method: private_key_jwt
        private_key_file: ${keyFile}
        rules: [{ when: {}, scopes: [a] }]
profile: { scopes: [a] }
`;

/** Each case: the manifest body, the code, and the text its problem points at. */
const CASES: { name: string; body: string; code: string; at: string }[] = [
  { name: 'a missing SQLite file', body: TOOL('    sqlite:\n      path: missing.db\n      query: SELECT 1\n'), code: 'BACKEND_CONFIG', at: 'missing.db' },
  { name: 'a query that does not prepare', body: TOOL('    sqlite:\n      path: data.db\n      query: SELECT nope FROM notes\n'), code: 'BACKEND_CONFIG', at: 'SELECT nope' },
  { name: 'an exec program not on PATH', body: TOOL('    exec:\n      argv: [fastsvc-no-such-program, "{{path}}"]\n'), code: 'BACKEND_CONFIG', at: 'fastsvc-no-such-program' },
  { name: 'an exec program path that does not exist', body: TOOL('    exec:\n      argv: [./bin/nothing.sh]\n'), code: 'BACKEND_CONFIG', at: './bin/nothing.sh' },
  { name: 'a content file that does not exist', body: TOOL('    content:\n      - type: text\n        text: hi\n      - type: image\n        file: missing.png\n'), code: 'FILE_UNREADABLE', at: 'missing.png' },
  { name: 'a resource file that does not exist', body: 'resources:\n  - name: readme\n    uri: docs://readme\n    file: docs/missing.md\n', code: 'FILE_UNREADABLE', at: 'docs/missing.md' },
  { name: 'a client metadata documents ca_file that does not exist', body: 'oauth:\n  enabled: true\n  provider: { type: memory }\n  client_id_metadata_documents: { ca_file: dev-ca.pem }\nprofile: { scopes: [a] }\n', code: 'FILE_UNREADABLE', at: 'dev-ca.pem' },
  { name: 'a client metadata documents ca_file with no certificate', body: 'oauth:\n  enabled: true\n  provider: { type: memory }\n  client_id_metadata_documents: { ca_file: a-file.txt }\nprofile: { scopes: [a] }\n', code: 'OAUTH_CONFIG', at: 'a-file.txt' },
  { name: 'a sign-in provider\'s private_key_file that does not exist', body: LOGIN('keys/missing.pem'), code: 'OAUTH_CONFIG', at: 'keys/missing.pem' },
  { name: 'a sign-in provider\'s private_key_file that holds no private key', body: LOGIN('a-file.txt'), code: 'OAUTH_CONFIG', at: 'a-file.txt' },
  { name: 'an fs.root that is a file, not a folder', body: TOOL('    fs:\n      root: a-file.txt\n      op: read\n'), code: 'BACKEND_CONFIG', at: 'a-file.txt' },
];

describe('cli validate: I/O checks', function () {
  let tmp: string;
  before(() => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-validate-io-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** A folder with a manifest, data.db (table notes) and a-file.txt. */
  function project(text: string): string {
    const dir = mkdtempSync(join(tmp, 'p-'));
    const db = new Database(join(dir, 'data.db'));
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT)');
    db.close();
    writeFileSync(join(dir, 'a-file.txt'), 'not a folder\n');
    writeFileSync(join(dir, 'svc.yaml'), text);
    return join(dir, 'svc.yaml');
  }

  for (const c of CASES) {
    it(`${c.name}: one ${c.code} line at the value, exit 1 — the line serve prints; --no-io passes`, async () => {
      const text = HEAD + c.body;
      const file = project(text);
      const r = await run(['validate', file]);
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      const m = PROBLEM_LINE.exec(lines[0]!);
      assert.ok(m, lines[0]);
      assert.equal(`${m[1]}:${m[2]}:${m[3]}: ${m[4]}`, `${file}:${pos(text, c.at)}: ${c.code}`);
      assert.doesNotMatch(r.stderr, STACK_FRAME);

      const served = await run(['serve', file, '--port', '0', '--no-watch']);
      assert.equal(served.code, 1);
      assert.ok(served.stderr.split('\n').includes(lines[0]!), `serve printed:\n${served.stderr}`);

      const skipped = await run(['validate', file, '--no-io']);
      assert.equal(skipped.code, 0, skipped.stderr);
    });
  }

  it('reports every I/O problem at once, and --json carries code, line and col', async () => {
    const text = HEAD + `tools:
  - name: a.db
    description: missing db
    sqlite: { path: missing.db, query: SELECT 1 }
  - name: b.exec
    description: missing program
    exec: { argv: [fastsvc-no-such-program] }
  - name: c.fs
    description: root is a file
    input_schema: { type: object, properties: { path: { type: string } } }
    fs: { root: a-file.txt, op: list }
`;
    const r = await run(['validate', project(text), '--json']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { valid: boolean; problems: { code: string; line: number; col: number }[] };
    assert.equal(out.valid, false);
    assert.deepEqual(out.problems.map((p) => `${p.code}@${p.line}:${p.col}`), [
      `BACKEND_CONFIG@${pos(text, 'missing.db')}`,
      `BACKEND_CONFIG@${pos(text, 'fastsvc-no-such-program')}`,
      `BACKEND_CONFIG@${pos(text, 'a-file.txt')}`,
    ]);
  });

  it('makes no network call and runs no module code', async () => {
    const listener = net.createServer((s) => s.destroy());
    let connections = 0;
    listener.on('connection', () => connections++);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const text = HEAD + `tools:
  - name: h.call
    description: an http tool
    http: { url: "http://127.0.0.1:${port}/x" }
  - name: m.call
    description: a module tool
    module: ./handler.js#run
`;
      const file = project(text);
      const marker = join(file, '..', 'module-ran.flag');
      writeFileSync(join(file, '..', 'handler.js'), `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport function run() { return 'x'; }\n`);
      const r = await run(['validate', file]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(connections, 0, 'validate connected to the http backend');
      assert.equal(existsSync(marker), false, 'validate ran the module');

      // The module file itself is checked.
      const missing = project(text.replace('./handler.js', './nope.js'));
      const m = await run(['validate', missing]);
      assert.equal(m.code, 1);
      assert.match(m.stderr, new RegExp(`:${pos(text, './handler.js')}: BACKEND_CONFIG: `));
    } finally {
      listener.close();
    }
  });

  it('an unknown field close to an allowed one says "did you mean …?" (text and --json); a far one does not', async () => {
    const text = HEAD + `profile: { scopes: [a.use] }
tools:
  - name: a.b
    description: x
    required_scope: [a.use]
    zzzzzz: 1
    template: hi
`;
    const file = project(text);
    const r = await run(['validate', file]);
    assert.equal(r.code, 1);
    const lines = r.stderr.trimEnd().split('\n').sort();
    assert.equal(lines.length, 2, r.stderr);
    assert.ok(lines[0]!.startsWith(`${file}:${pos(text, 'required_scope')}: SCHEMA_VIOLATION: `), lines[0]);
    assert.match(lines[0]!, /did you mean "required_scopes"\?$/);
    assert.ok(lines[1]!.startsWith(`${file}:${pos(text, 'zzzzzz')}: SCHEMA_VIOLATION: `), lines[1]);
    assert.doesNotMatch(lines[1]!, /did you mean/);
    const json = JSON.parse((await run(['validate', file, '--json'])).stdout) as { problems: { suggestion?: string }[] };
    assert.deepEqual(json.problems.map((p) => p.suggestion).filter(Boolean), ['required_scopes']);
  });

  it('--allow-unset-env: an unset ${VAR} is a placeholder and a note, not a failure', async () => {
    const text = HEAD.replace('public: [/healthz, /svc], protected: []', 'public: [/healthz], protected: [/svc]') + `auth:
  token: \${FASTSVC_TEST_UNSET_TOKEN}
tools:
  - { name: a.b, description: x, template: hi }
`;
    const file = project(text);
    const env = childEnv({ FASTSVC_TEST_UNSET_TOKEN: undefined });
    const strict = await run(['validate', file], { env });
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, new RegExp(`:${pos(text, '${FASTSVC')}: ENV_UNSET: `));
    assert.match(strict.stderr, /^hint: set the variable, or give it a default .*--allow-unset-env/m, 'the error says how to validate without the secret');

    const lenient = await run(['validate', file, '--allow-unset-env'], { env });
    assert.equal(lenient.code, 0, lenient.stderr);
    assert.equal(lenient.stderr, '');
    assert.match(lenient.stdout, /: ok — 1 tool, 0 resources, 0 prompts$/m);
    assert.match(lenient.stdout, /note: .*FASTSVC_TEST_UNSET_TOKEN/);

    const json = await run(['validate', file, '--allow-unset-env', '--json'], { env });
    assert.equal(json.code, 0);
    assert.deepEqual((JSON.parse(json.stdout) as { unset_env: string[] }).unset_env, ['FASTSVC_TEST_UNSET_TOKEN']);
  });
});
