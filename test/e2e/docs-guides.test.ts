// A newcomer's pages — README.md, docs/getting-started.md and every docs/guides/*.md — run as printed, in
// order, from the folder the page says, the way a reader pastes them into a terminal:
// - each page is one session, started in a reader's clone: a folder named fastsvc (a copy of this checkout as
//   it stands, built, its node_modules a link to this one's) beside a project of the reader's own, my-service
//   (a package.json, nothing installed). What a block exports and where it cd's carry to the next block. Each
//   block runs under `bash -euo pipefail` and must exit 0;
// - a block whose last command starts a server (`fastsvc serve`, `npm start`) leaves it running, as in a first
//   terminal: the blocks after it run as in a second terminal, opened in the same folder but with none of the
//   first one's variables — only what the reader pastes there — every http://127.0.0.1:8080 in them the
//   server's address. The next server block, or the page's end, stops it with Ctrl-C (SIGINT to its process
//   group);
// - the marker on the line before a block: `<!-- run -->`, or `<!-- run: WORD … -->` where a word NAME=value is
//   a variable for that block only (`{{tmp}}` in a value is a scratch folder: an OAuth database kept out of the
//   checkout) and paste:NAME is the reader pasting the last line `export … NAME=…` the page printed so far (a
//   server's generated token, a block's echo) before the block; `<!-- not run: REASON -->` for what no test machine can run (a production path, the suite's
//   own set-up), the reason required; `<!-- insert: FILE after LINE -->` before a YAML block is the reader's
//   edit: the block goes into FILE (in the session's folder) after its first line that reads LINE, and the test
//   waits for the watching server's `config.reloaded`. Every sh block on these pages is run or says why not;
//   docs-examples' `serve:` marker does not belong here (a page's own command starts its server).
// What the environment adds, and why: PORT=0, so no fixed port is taken on a shared machine (the address
// substitution above follows it); npm_config_prefer_offline and a local prebuild of better-sqlite3 (the binary
// this checkout built, which better-sqlite3's own install script unpacks: a .prebuild-installrc above the
// project names its folder), and in the project a package-lock.json
// pinning fastsvc's dependencies at this checkout's versions, so installing the packed tarball needs neither
// the registry nor a compiler (the install takes about 5–15 s, most of it unpacking the npm cache).
// A printed `export NAME=…` line shows a secret on purpose (for pasting) and is not given to the secret scan;
// every other line of the blocks and servers is, and the values the sessions export are registered secrets.
// What the pages write (svc.yaml's edit, the bearer example's reader.token, the tarball npm pack writes, the
// build it runs) lands in the copy, never in this checkout, which other test files read meanwhile when the suite
// runs in parallel; the OAuth databases go to scratch folders (the markers' {{tmp}}).

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { childEnv, ROOT, type Run } from '../helpers/cli.js';
import { fencedBlocks, type FencedBlock } from '../helpers/markdown.js';
import { logLine, secretsOfEnv } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const PAGES = ['README.md', 'docs/getting-started.md', ...readdirSync(join(ROOT, 'docs/guides')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/guides/${f}`)];
const PLACEHOLDER_URL = 'http://127.0.0.1:8080';
/** A command that starts a server and stays in the foreground. */
const SERVER = /\bfastsvc serve\b|\bnpm start\b/;
const BLOCK_TIMEOUT_MS = 120_000;

type Marker =
  | { kind: 'run'; env: Record<string, string>; paste: string[] }
  | { kind: 'not run'; reason: string }
  | { kind: 'insert'; file: string; after: string }
  | { kind: 'serve' }
  | { kind: 'malformed'; text: string };

function parseMarker(line: string | undefined): Marker | undefined {
  const m = line === undefined ? null : /^\s*<!--\s*(run|not run|insert|serve)(?::\s*(.*?))?\s*-->\s*$/.exec(line);
  if (!m) return undefined;
  const rest = m[2] ?? '';
  if (m[1] === 'serve') return { kind: 'serve' };
  if (m[1] === 'not run') return rest ? { kind: 'not run', reason: rest } : { kind: 'malformed', text: line! };
  if (m[1] === 'insert') {
    const ins = /^(\S+) after (.+)$/.exec(rest);
    return ins ? { kind: 'insert', file: ins[1]!, after: ins[2]! } : { kind: 'malformed', text: line! };
  }
  const env: Record<string, string> = {};
  const paste: string[] = [];
  for (const word of rest.split(/\s+/).filter(Boolean)) {
    const kv = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(word);
    const p = /^paste:([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (kv) env[kv[1]!] = kv[2]!;
    else if (p) paste.push(p[1]!);
    else return { kind: 'malformed', text: line! };
  }
  return { kind: 'run', env, paste };
}

/** A line printed for the reader to paste: `export NAME=value …`. */
const EXPORT_LINE = /^\s*export\s+[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * A stream of output, split into whole lines: each goes to `lines` (what the page printed) and, but for the
 * export lines printed to be pasted, to the secret scan. Returns the chunk handler; `end()` flushes a last line.
 */
function lineSink(source: string, lines: string[]): { push(chunk: string): void; end(): void } {
  let partial = '';
  const take = (line: string) => {
    lines.push(line);
    if (!EXPORT_LINE.test(line)) logLine(source, line);
  };
  return {
    push(chunk) {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      parts.forEach(take);
    },
    end() {
      if (partial) take(partial);
      partial = '';
    },
  };
}

const isShell = (b: FencedBlock) => b.lang === 'sh' || b.lang === 'bash' || b.lang === 'shell';

interface Server {
  url: string;
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  closed: Promise<void>;
}

/** Process groups of servers still running, killed if the test process exits first. */
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** One reader at a terminal: the exported variables and the folder, carried from block to block, the server it runs, and what the page printed. */
class Session {
  server?: Server;
  /** Every line the blocks and servers printed, for the reader to paste from. */
  private printed: string[] = [];
  private env: Record<string, string>;
  constructor(private readonly base: Record<string, string>, private cwd: string, private readonly scratch: string) {
    this.env = base;
  }

  /** Runs a block as printed, after the lines the reader pastes; a last command that starts a server is left running. */
  async run(b: FencedBlock, vars: Record<string, string>, paste: readonly string[], name: string): Promise<void> {
    const pasted: string[] = [];
    for (const n of paste) {
      const line = await waitFor(() => [...this.printed].reverse().find((l) => EXPORT_LINE.test(l) && new RegExp(`\\b${n}=`).test(l)), `${name}: a printed line "export ${n}=…" to paste`, 10_000);
      pasted.push(line.trim());
    }
    const text = this.server ? b.text.replaceAll(PLACEHOLDER_URL, this.server.url) : b.text;
    const lines = text.replace(/\n$/, '').split('\n');
    let last = lines.length - 1;
    while (last >= 0 && (lines[last]!.trim() === '' || lines[last]!.trim().startsWith('#'))) last--;
    const serves = last >= 0 && SERVER.test(lines[last]!.replace(/#.*$/, ''));
    if (serves) assert.ok(last === 0 || !lines[last - 1]!.trimEnd().endsWith('\\'), `${name}: the server command must be a line of its own`);
    const r = await this.script([...pasted, ...(serves ? lines.slice(0, last) : lines)].join('\n'), vars);
    const server = this.server;
    assert.equal(r.code, 0, `${name} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}${server ? `\n--- server stderr\n${server.stderr.slice(-3000)}` : ''}`);
    if (serves) {
      await this.serve(lines[last]!, vars, name);
      // The reader goes on in a second terminal: the same folder, none of this one's variables.
      this.env = this.base;
    }
  }

  /** The reader's edit: `text` into FILE after its first line `after`; a running server is waited for until it reloads. */
  async insert(file: string, after: string, text: string, name: string): Promise<void> {
    const path = resolve(this.cwd, file);
    const lines = readFileSync(path, 'utf8').split('\n');
    const at = lines.indexOf(after);
    assert.ok(at >= 0, `${name}: ${file} has no line ${JSON.stringify(after)}`);
    lines.splice(at + 1, 0, ...text.replace(/\n$/, '').split('\n'));
    const reloads = () => this.server?.stderr.split('"event":"config.reloaded"').length ?? 0;
    const before = reloads();
    writeFileSync(path, lines.join('\n'));
    if (this.server) await waitFor(() => (reloads() > before ? true : undefined), `${name}: the server to reload ${file}`, 30_000);
  }

  /** Ctrl-C in the server's terminal. */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    process.kill(-s.proc.pid!, 'SIGINT');
    const killer = setTimeout(() => process.kill(-s.proc.pid!, 'SIGKILL'), 20_000);
    await s.closed;
    clearTimeout(killer);
    running.delete(s.proc.pid!);
  }

  private async serve(line: string, vars: Record<string, string>, name: string): Promise<void> {
    await this.stop();
    const proc = spawn('bash', ['-euo', 'pipefail', '-c', line], { cwd: this.cwd, env: { ...this.env, ...vars, PWD: this.cwd }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(proc.pid!);
    const s: Server = { url: '', proc, stdout: '', stderr: '', closed: new Promise((r) => proc.on('close', () => r())) };
    const out = lineSink(`docs server ${name}`, this.printed);
    const err = lineSink(`docs server ${name}`, this.printed);
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      s.stdout += c;
      out.push(c);
    });
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
      s.stderr += c;
      err.push(c);
    });
    void s.closed.then(() => {
      out.end();
      err.end();
    });
    let exited = false;
    void s.closed.then(() => (exited = true));
    s.url = await waitFor(() => {
      if (exited) throw new Error(`exited before listening:\n${s.stderr.slice(-3000)}`);
      return /listening on (http:\/\/\S+)/.exec(s.stdout)?.[1];
    }, `${name}: ${line.trim()} to listen`, 60_000, 50);
    this.server = s;
  }

  /** Runs a script in this terminal and keeps what it exported and where it ended (a block's own variables are its own). */
  private script(script: string, vars: Record<string, string>): Promise<Run> {
    const state = mkdtempSync(join(this.scratch, 'state-'));
    const q = (p: string) => `'${p.replaceAll("'", `'\\''`)}'`;
    const trap = `trap 'env -0 > ${q(join(state, 'env'))}; pwd > ${q(join(state, 'pwd'))}' EXIT\n`;
    return new Promise((resolvePromise, reject) => {
      // PWD names the folder as the reader reached it: bash then keeps that path, and `cd ..` leads beside it.
      const child = spawn('bash', ['-euo', 'pipefail', '-c', trap + script], { cwd: this.cwd, env: { ...this.env, ...vars, PWD: this.cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const out = lineSink('docs block', this.printed);
      const err = lineSink('docs block', this.printed);
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        stdout += c;
        out.push(c);
      });
      child.stderr.setEncoding('utf8').on('data', (c: string) => {
        stderr += c;
        err.push(c);
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), BLOCK_TIMEOUT_MS);
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        out.end();
        err.end();
        if (existsSync(join(state, 'pwd'))) {
          const env: Record<string, string> = {};
          for (const entry of readFileSync(join(state, 'env'), 'utf8').split('\0').filter(Boolean)) {
            const eq = entry.indexOf('=');
            env[entry.slice(0, eq)] = entry.slice(eq + 1);
          }
          for (const k of ['PWD', 'OLDPWD', 'SHLVL', '_']) delete env[k];
          for (const [k, v] of Object.entries(vars)) if (env[k] === v && this.env[k] !== v) delete env[k];
          secretsOfEnv(env);
          this.env = env;
          this.cwd = readFileSync(join(state, 'pwd'), 'utf8').trim();
        }
        resolvePromise({ code, signal, stdout, stderr });
      });
    });
  }
}

/** Not copied into the reader's clone: what the suite and tools leave, installed modules (linked instead). */
const NOT_COPIED = new Set(['node_modules', '.tools', 'test-artifacts', 'coverage']);

/** The reader's clone: this checkout's files as they stand (its git history, dist/ and the demo database included), node_modules linked. */
function cloneCheckout(to: string): void {
  const root = resolve(ROOT);
  cpSync(root, to, { recursive: true, filter: (src) => !(dirname(src) === root && (NOT_COPIED.has(basename(src)) || basename(src).endsWith('.tgz'))) });
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
}

/** A project of a reader's own, with a lock that pins fastsvc's dependencies at this checkout's versions (npm installs them offline). */
function makeProject(to: string): void {
  mkdirSync(to);
  writeFileSync(join(to, 'package.json'), JSON.stringify({ name: 'my-service', version: '1.0.0', private: true }, null, 2) + '\n');
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const packages: Record<string, unknown> = { '': { name: 'my-service', version: '1.0.0' } };
  for (const [k, v] of Object.entries(lock.packages)) if (k !== '' && !v.dev) packages[k] = v;
  writeFileSync(join(to, 'package-lock.json'), JSON.stringify({ name: 'my-service', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2) + '\n');
}

/** better-sqlite3's binary as its install script (prebuild-install) finds a local prebuild: the one this checkout built. */
function localPrebuilds(to: string): string {
  mkdirSync(to);
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(to, file), '-C', pkg, 'build/Release/better_sqlite3.node']);
  return to;
}

describe('a newcomer’s pages: every command runs as printed', function () {
  this.timeout(BLOCK_TIMEOUT_MS + 30_000);
  let tmp: string;
  let checkout: string;
  let base: Record<string, string>;

  before(() => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'fastsvc-guides-')));
    checkout = join(tmp, 'fastsvc');
    cloneCheckout(checkout);
    makeProject(join(tmp, 'my-service'));
    const env = childEnv({
      PORT: '0',
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    });
    // Where better-sqlite3's install script (prebuild-install) looks for a binary before the network: a
    // configuration file in a folder above the project, as a reader's own would be.
    writeFileSync(join(tmp, '.prebuild-installrc'), `local-prebuilds=${localPrebuilds(join(tmp, 'prebuilds'))}\n`);
    base = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
    mkdirSync(join(tmp, 'scratch'));
  });
  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  for (const page of PAGES) {
    const blocks = fencedBlocks(readFileSync(join(ROOT, page), 'utf8')).map((b) => ({ ...b, marker: parseMarker(b.before) }));
    describe(page, () => {
      let session: Session;
      before(() => {
        session = new Session(base, checkout, join(tmp, 'scratch'));
      });
      after(() => session?.stop());

      it('every sh block is run or says why not; markers belong where they are', () => {
        const wrong: string[] = [];
        for (const b of blocks) {
          const m = b.marker;
          const at = `${page}:${b.line}`;
          if (m?.kind === 'malformed') wrong.push(`${at}: cannot read the marker ${m.text.trim()}`);
          else if (m?.kind === 'serve') wrong.push(`${at}: a serve marker starts a server the page does not; start it with the page's own command and mark the block <!-- run -->`);
          else if (m?.kind === 'insert' && b.lang !== 'yaml') wrong.push(`${at}: an insert marker belongs before a yaml block`);
          else if ((m?.kind === 'run' || m?.kind === 'not run') && !isShell(b)) wrong.push(`${at}: a ${m.kind} marker belongs before a sh block, not ${b.lang || 'a plain block'}`);
          else if (isShell(b) && m?.kind !== 'run' && m?.kind !== 'not run') wrong.push(`${at}: a sh block with neither <!-- run --> nor <!-- not run: REASON -->`);
        }
        assert.deepEqual(wrong, []);
      });

      for (const b of blocks) {
        const m = b.marker;
        const name = `${page}:${b.line}`;
        if (m?.kind === 'run' && isShell(b)) {
          it(`${name}: runs as printed${SERVER.test(b.text) ? ' (its server keeps running)' : ''}`, () => {
            const own = mkdtempSync(join(tmp, 'block-'));
            return session.run(b, Object.fromEntries(Object.entries(m.env).map(([k, v]) => [k, v.replaceAll('{{tmp}}', own)])), m.paste, name);
          });
        } else if (m?.kind === 'insert' && b.lang === 'yaml') {
          it(`${name}: the edit it shows, into ${m.file}`, () => session.insert(m.file, m.after, b.text, name));
        }
      }
      if (page === 'docs/getting-started.md') {
        it('the project’s install ran better-sqlite3’s install script: its binary loads there', () => {
          const out = execFileSync(process.execPath, ['-e', 'const D = require("better-sqlite3"); process.stdout.write(String(new D(":memory:").prepare("select 41 + 1 as n").get().n))'], { cwd: join(tmp, 'my-service'), encoding: 'utf8' });
          assert.equal(out, '42');
        });
        it('init pointed the new svc.yaml at the schema the tarball installed, as the page says', () => {
          const first = readFileSync(join(tmp, 'my-service', 'svc.yaml'), 'utf8').split('\n')[0];
          assert.equal(first, '# yaml-language-server: $schema=./node_modules/fastsvc/schema/svc.schema.json');
          assert.ok(existsSync(join(tmp, 'my-service', 'node_modules', 'fastsvc', 'schema', 'svc.schema.json')));
        });
      }
    });
  }
});
