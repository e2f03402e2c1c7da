// Real upstream MCP servers for the gateway tests, none of them written with fastsvc: the reference servers
// @modelcontextprotocol/server-everything (stdio and Streamable HTTP) and server-filesystem (stdio), a
// `fastmcp` server of ours that records what reached it (test/upstreams/fastmcp-recorder.ts, HTTP or stdio),
// and mcp-remote, the stdio↔HTTP bridge clients put in front of a remote server. Each start function returns
// a folder of its own and either a `url` (a server this helper started) or a `command` (argv, cwd-independent:
// fastsvc or an SDK client spawns it), with recorded() — what reached the server, test/upstreams/records.ts —
// and stop(). Servers we did not write run under test/upstreams/tap.mjs, which binds them to 127.0.0.1 and
// records their HTTP requests' headers and the JSON-RPC lines they read on stdin.
// Guarantees: every server listens on 127.0.0.1 on a port it chose (no port is guessed); a start that does not
// answer within 20 s rejects with the server's stderr; a running server does not keep the test process alive; stop() ends what the handle started (SIGTERM, SIGKILL
// after 5 s) and every process started from a handle's command that still runs, then removes the folder; when
// the test process exits, every such process still running is killed and every folder removed, even after a
// failed test. A process is only ever killed when its command line names the handle's folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './cli.js';
import { waitFor } from './wait.js';
import { readRecords, type UpstreamRecord } from '../upstreams/records.js';

interface Handle {
  /** The handle's own folder: records.jsonl, and what the server keeps there. */
  dir: string;
  /** Everything that reached the server so far, in order. */
  recorded(): UpstreamRecord[];
  /** The pids of the processes started so far (one more per restart), from their `start` records. */
  pids(): number[];
  stop(): Promise<void>;
}
export interface HttpUpstream extends Handle {
  /** The Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp. */
  url: string;
  /** Ends the server (SIGKILL: as a crash would) and resolves once it is gone; the port stays free meanwhile. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and folder (after kill(), or stopping it first). */
  restart(): Promise<void>;
}
export interface StdioUpstream extends Handle {
  /** argv: the program first. Spawn it without a shell, from any folder. */
  command: string[];
  /** Variables the command needs on top of the caller's environment. */
  env: Record<string, string>;
}
/** The recorder also lets a test change a tool's definition, as an upstream changing under a pin would. */
export interface Recorder {
  /** Sets a tool's description; the server announces notifications/tools/list_changed to every session. */
  describe(tool: string, description: string): Promise<void>;
  /** Adds a tool of that name (it returns its name); list_changed is announced as for describe(). */
  add(tool: string): Promise<void>;
  /** Lets the progress calls told to `hold` on this name answer (and any told so later). */
  release(hold: string): Promise<void>;
}

const bin = (pkg: string): string => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(ROOT, 'node_modules', pkg, Object.values(manifest.bin)[0]!);
};
const tsx = import.meta.resolve('tsx');
const RECORDER = join(ROOT, 'test', 'upstreams', 'fastmcp-recorder.ts');
const tap = (dir: string) => ['--import', `${pathToFileURL(join(ROOT, 'test', 'upstreams', 'tap.mjs')).href}?records=${encodeURIComponent(join(dir, 'records.jsonl'))}`];

/** Folders made here, and the servers started here; both go when the test process exits. */
const folders = new Set<string>();
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of folders) {
    for (const pid of startedFrom(d)) kill(pid, d, 'SIGKILL');
    rmSync(d, { recursive: true, force: true });
  }
});

function startedFrom(dir: string): number[] {
  return readRecords(join(dir, 'records.jsonl')).flatMap((r) => (r.kind === 'start' ? [r.pid] : []));
}

/** Signals pid only while its command line names dir (a pid the system gave to another process since is left alone). */
function kill(pid: number, dir: string, signal: NodeJS.Signals | 0): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(dir) && !cmdline.includes(encodeURIComponent(dir))) return false;
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-upstream-'));
  folders.add(dir);
  return dir;
}

function handle(dir: string, stop: () => Promise<void>): Handle {
  return {
    dir,
    recorded: () => readRecords(join(dir, 'records.jsonl')),
    pids: () => startedFrom(dir),
    async stop() {
      await stop();
      await endStarted(dir);
      folders.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Ends every process started from a handle's command (SIGTERM, then SIGKILL after 5 s). */
async function endStarted(dir: string): Promise<void> {
  const running = startedFrom(dir).filter((pid) => kill(pid, dir, 'SIGTERM'));
  const deadline = Date.now() + 5000;
  while (running.some((pid) => kill(pid, dir, 0))) {
    if (Date.now() > deadline) {
      for (const pid of running) kill(pid, dir, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Spawns argv (with env) and resolves with the URL its output announces; rejects on exit or after 20 s. */
function launch(argv: string[], env: Record<string, string>, announce: RegExp): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  proc.on('close', () => live.delete(proc));
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')}: not listening within 20 s; stderr:\n${err.slice(-2000)}`));
    }, 20_000);
    const seen = () => {
      const m = announce.exec(out + err);
      if (!m) return;
      clearTimeout(timer);
      // A server left running by a failed test must not keep the test process alive: its exit hook ends it.
      for (const handle of [proc, proc.stdout as Socket, proc.stderr as Socket]) handle.unref();
      resolve({ url: m[1]!, proc });
    };
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => ((out += c), seen()));
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => ((err += c), seen()));
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${argv.join(' ')} exited (${code ?? signal}) before listening; stderr:\n${err.slice(-2000)}`));
    });
  });
}

function ended(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const done = new Promise<void>((r) => proc.once('close', () => r()));
  proc.kill(signal);
  const force = setTimeout(() => proc.kill('SIGKILL'), 5000);
  return done.finally(() => clearTimeout(force));
}

/** An HTTP server from argv(port): started on port 0, restarted on the port it got. */
async function httpUpstream(dir: string, argv: (port: number) => string[], env: (port: number) => Record<string, string>, announce: RegExp, path: string): Promise<HttpUpstream> {
  let { url, proc } = await launch(argv(0), env(0), announce);
  const port = Number(new URL(url).port);
  const h = handle(dir, () => ended(proc, 'SIGTERM'));
  return {
    ...h,
    url: `http://127.0.0.1:${port}${path}`,
    kill: () => ended(proc, 'SIGKILL'),
    async restart() {
      await ended(proc, 'SIGTERM');
      ({ proc } = await launch(argv(port), env(port), announce));
    },
  };
}

const TAP_LISTENING = /^tap listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

/** server-everything over Streamable HTTP (its /mcp), its HTTP requests' headers recorded. */
export function everythingHttp(): Promise<HttpUpstream> {
  const dir = folder();
  const argv = () => [process.execPath, ...tap(dir), bin('@modelcontextprotocol/server-everything'), 'streamableHttp'];
  return httpUpstream(dir, argv, (port) => ({ PORT: String(port) }), TAP_LISTENING, '/mcp');
}

/** server-everything over stdio, the JSON-RPC messages it reads recorded. */
export function everythingStdio(): StdioUpstream {
  const dir = folder();
  return { ...handle(dir, async () => {}), command: [process.execPath, ...tap(dir), bin('@modelcontextprotocol/server-everything'), 'stdio'], env: {} };
}

/** server-filesystem over stdio, serving a fresh folder (`root`) holding `files` (path → content). */
export function filesystemStdio(files: Record<string, string> = {}): StdioUpstream & { root: string } {
  const dir = folder();
  const root = join(dir, 'root');
  mkdirSync(root);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return { ...handle(dir, async () => {}), root, command: [process.execPath, ...tap(dir), bin('@modelcontextprotocol/server-filesystem'), root], env: {} };
}

/** Recorder handle for a folder: POSTs to the control endpoint the running server wrote in control.json. */
function recorder(dir: string): Recorder {
  const post = async (path: string, body: Record<string, string>) => {
    // control.json appears (or, after a restart, changes) once the server can take the change: retry until then.
    const res = await waitFor(async () => {
      const { control } = JSON.parse(readFileSync(join(dir, 'control.json'), 'utf8')) as { control: string };
      return fetch(`${control}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    }, 'the recorder\'s control endpoint', 10_000, 50);
    if (res.status !== 204) throw new Error(`recorder ${path} answered ${res.status}`);
  };
  return {
    describe: (tool, description) => post('/describe', { tool, description }),
    add: (tool) => post('/add', { tool }),
    release: (hold) => post('/release', { hold }),
  };
}

const recorderArgv = (dir: string, mode: 'http' | 'stdio', port = 0) => [process.execPath, '--import', tsx, RECORDER, '--mode', mode, '--state', dir, '--port', String(port)];

/** The fastmcp recorder over its HTTP stream transport (/mcp). */
export async function recorderHttp(): Promise<HttpUpstream & Recorder> {
  const dir = folder();
  const up = await httpUpstream(dir, (port) => recorderArgv(dir, 'http', port), () => ({}), /^listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp$/m, '/mcp');
  return { ...up, ...recorder(dir) };
}

/** The fastmcp recorder over stdio (no `http` records: nothing arrives over HTTP; a `message` record per line it reads). */
export function recorderStdio(): StdioUpstream & Recorder {
  const dir = folder();
  return { ...handle(dir, async () => {}), ...recorder(dir), command: recorderArgv(dir, 'stdio'), env: {} };
}

/**
 * mcp-remote in front of an MCP endpoint (fastsvc's /mcp): a stdio server to drive with an SDK client, which
 * forwards to url with `Authorization: Bearer token` (from a header file, not its argv) and keeps its own state
 * in the handle's folder, not the home directory. protocol 'auto' lets it speak 2026-07-28 to a server that does.
 */
export function mcpRemote(url: string, token: string, o: { protocol?: 'legacy' | 'auto' } = {}): StdioUpstream {
  const dir = folder();
  const headers = join(dir, 'headers.txt');
  writeFileSync(headers, `Authorization: Bearer ${token}\n`, { mode: 0o600 });
  const command = [process.execPath, ...tap(dir), bin('mcp-remote'), url, '--header-file', headers, '--transport', 'http-only', '--protocol', o.protocol ?? 'legacy', '--silent'];
  return { ...handle(dir, async () => {}), command, env: { MCP_REMOTE_CONFIG_DIR: join(dir, 'mcp-auth') } };
}
