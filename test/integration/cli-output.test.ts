// The command line says things one way, through the real CLI (helpers/cli.ts): a command's own
// refusal is `fastsvc COMMAND: …` (never `svc …`), then the usage and exit 2 when it is about the
// arguments; both spellings of the offline switch work where they did, and together they are a
// usage error; --allow-unset-env on explain, diff, keys and upstreams leaves a note naming the
// variables; and a reader that goes away ends a command quietly: its stdout is a real pipe closed
// after one line, and it exits 0 with nothing on stderr — no EPIPE, no stack trace.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CLI, childEnv, run } from '../helpers/cli.js';

const MANIFEST = `version: 1
name: said
auth:
  token: \${SAID_TOKEN}
profile: { scopes: [notes.read] }
tools:
  - { name: notes.list, description: Lists., template: none, required_scopes: [notes.read] }
`;

/** A manifest whose explain output is far larger than a pipe holds (64 KiB): the CLI is still writing when the reader goes. */
const LARGE = `version: 1
name: large
auth: { token: large-token-0123456789 }
profile: { scopes: [notes.read] }
tools:
${Array.from({ length: 3000 }, (_, i) => `  - { name: notes.tool${i}, description: Tool ${i}., template: t, required_scopes: [notes.read] }`).join('\n')}
`;

/** Runs the CLI with stdout on a pipe, reads its first line, then closes the pipe; its exit and stderr. */
function readOneLineThenClose(args: string[]): Promise<{ first: string; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let first: string | undefined;
    child.stderr.setEncoding('utf8').on('data', (c: string) => void (stderr += c));
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      first = line;
      lines.close();
      child.stdout.destroy(); // the reader goes away, as `| head -1` does
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ first: first ?? '', code, signal, stderr }));
  });
}

describe('cli: one way to say things', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-cli-output-'));
    file = join(dir, 'svc.yaml');
    writeFileSync(file, MANIFEST);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a command refusing its arguments says `fastsvc COMMAND: …`, then its usage, exit 2 — never `svc …`', async () => {
    const env = childEnv({ SAID_TOKEN: 'said-token-0123456789' });
    const cases: [string[], string][] = [
      [['explain', file], 'fastsvc explain: give exactly one of --scopes, --token, --token-file, --subject'],
      [['explain', file, '--scopes', 'a', '--no-verify'], 'fastsvc explain: --no-verify goes with --token-file'],
      [['explain', file, '--scopes', 'a', '--claims', '{'], 'fastsvc explain: --claims and --args take JSON objects'],
      [['diff', file], 'fastsvc diff: give two manifests'],
      [['keys', 'spin', file], 'fastsvc keys: unknown action spin'],
      [['upstreams', 'accept'], 'fastsvc upstreams: wrong arguments for accept'],
      [['import', 'wsdl', 'x'], 'fastsvc import: give the kind and the document: fastsvc import openapi DOC'],
      [['validate', file, '--io', '--no-io'], 'fastsvc validate: --io and --no-io contradict each other: give one'],
    ];
    for (const [args, line] of cases) {
      const r = await run(args, { env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      const [said, usage] = r.stderr.split('\n');
      assert.equal(said, line);
      assert.match(usage!, new RegExp(`^usage: fastsvc ${args[0]} `));
      assert.doesNotMatch(r.stderr, /^svc /m);
    }
    const unknown = await run(['explain', file, '--scopes', 'notes.read', '--capability', 'notes.gone'], { env });
    assert.deepEqual([unknown.code, unknown.stderr], [1, 'fastsvc explain: no capability notes.gone\n']);
  });

  it('--io and --no-io: validate opens what the manifest names unless --no-io, explain and diff only with --io', async () => {
    const probed = join(dir, 'probed.yaml');
    writeFileSync(probed, MANIFEST.replace('template: none', 'sqlite: { path: missing.db, query: "select 1" }'));
    const env = childEnv({ SAID_TOKEN: 'said-token-0123456789' });
    for (const [args, code] of [
      [['validate', probed], 1], [['validate', probed, '--io'], 1], [['validate', probed, '--no-io'], 0],
      [['explain', probed, '--scopes', 'notes.read'], 0], [['explain', probed, '--scopes', 'notes.read', '--no-io'], 0], [['explain', probed, '--scopes', 'notes.read', '--io'], 1],
      [['diff', probed, probed], 0], [['diff', probed, probed, '--io'], 1],
    ] as [string[], number][]) {
      const r = await run(args, { env });
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      if (code === 1) assert.match(r.stderr, /probed\.yaml:\d+:\d+: BACKEND_CONFIG: .*missing\.db/);
    }
  });

  it('--allow-unset-env: explain and diff go on with placeholders and say which variables, on stderr', async () => {
    const env = childEnv({ SAID_TOKEN: undefined });
    const strict = await run(['explain', file, '--scopes', 'notes.read'], { env });
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /: ENV_UNSET: .*SAID_TOKEN/);
    assert.match(strict.stderr, /^hint: set the variable, or give it a default .* --allow-unset-env /m);
    const lenient = await run(['explain', file, '--scopes', 'notes.read', '--allow-unset-env'], { env });
    assert.equal(lenient.code, 0, lenient.stderr);
    assert.match(lenient.stdout, /^tool:notes\.list +visible +callable: yes/m);
    assert.equal(lenient.stderr, `${file}: note: read with placeholders for unset environment variables: SAID_TOKEN\n`);
    const diff = await run(['diff', file, file, '--allow-unset-env'], { env });
    assert.equal(diff.code, 0, diff.stderr);
    assert.equal(diff.stderr.split('\n').filter((l) => l.includes('note: read with placeholders')).length, 2, 'one note per manifest');
  });

  it('serve takes no --allow-unset-env, and an unset variable stops it before it listens', async () => {
    const r = await run(['serve', file, '--port', '0', '--allow-unset-env'], { env: childEnv({ SAID_TOKEN: undefined }) });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^fastsvc serve: unknown option --allow-unset-env\n/);
    const unset = await run(['serve', file, '--port', '0'], { env: childEnv({ SAID_TOKEN: undefined }) });
    assert.equal(unset.code, 1);
    assert.match(unset.stderr, /: ENV_UNSET: /);
    assert.doesNotMatch(unset.stdout, /listening on/);
  });

  it('a closed pipe: explain and --help end quietly with exit 0, no EPIPE and no stack trace', async () => {
    const large = join(dir, 'large.yaml');
    writeFileSync(large, LARGE);
    for (const args of [['explain', large, '--scopes', 'notes.read'], ['explain', large, '--scopes', 'notes.read', '--json'], ['--help']]) {
      const r = await readOneLineThenClose(args);
      assert.ok(r.first.length > 0, `${args.join(' ')}: a first line was read`);
      assert.deepEqual([r.code, r.signal, r.stderr], [0, null, ''], args.join(' '));
    }
  });
});
