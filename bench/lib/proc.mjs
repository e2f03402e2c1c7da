// Child server processes. Guarantees: each server runs as `node <argv>` from the repository root, is considered
// up only after printing `listening on http://<loopback>:PORT` (a `stdio` server: only after answering the MCP
// initialize on its stdin/stdout, which then stay the harness's connection to it), and is killed when the harness exits, is
// interrupted (SIGINT/SIGTERM) or crashes — as is any other child of the harness (e.g. the reload-latency
// server, which bench/reload-latency.mjs spawns itself); every wait is bounded in time.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from './clients.mjs';
import { StdioConn } from './stdio.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const live = new Set();
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Start a server; resolves { child, pid, url, died() } once it listens (died() → null, or why the process is gone),
 * rejects with a one-line reason otherwise. `def.wrap`: a command that runs node (argv before node's path, e.g. valgrind's);
 * `def.nodeArgs`: node's own options (before the script). `def.stdio`: an MCP server on stdin/stdout, up once it
 * answers initialize; it resolves with `conn` (lib/stdio.mjs) and a `stdio:PID` url that names it in the report.
 */
export function startServer(def, env, timeoutMs = 15_000) {
  if (!existsSync(resolvePath(ROOT, def.argv[0]))) {
    return Promise.reject(new Error(`${def.argv[0]} not found${def.hint ? ` (${def.hint})` : ''}`));
  }
  const [command, ...args] = [...(def.wrap ?? []), process.execPath, ...(def.nodeArgs ?? []), ...def.argv];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: [def.stdio ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = () => (child.exitCode ?? child.signalCode) !== null;
  const died = () => (exited() ? `exited (${child.exitCode ?? child.signalCode}): ${lastLine(stderr)}` : null);
  if (def.stdio) {
    const conn = new StdioConn(child);
    const gone = new Promise((_, reject) => child.once('exit', (code, sig) => reject(new Error(`exited (${code ?? sig}) before answering initialize: ${lastLine(stderr)}`))));
    gone.catch(() => {}); // after the race, an exit is died()'s to report
    return Promise.race([conn.initialize(timeoutMs), gone]).then(
      () => ({ child, pid: child.pid, url: `stdio:${child.pid}`, conn, died }),
      (err) => {
        child.kill('SIGKILL');
        throw err;
      });
  }
  return new Promise((resolve, reject) => {
    let out = '';
    let settled = false;
    const settle = (err, url) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else {
        resolve({ child, pid: child.pid, url, died });
      }
    };
    const timer = setTimeout(() => settle(new Error(`no listening line within ${timeoutMs} ms`)), timeoutMs);
    child.stdout.on('data', (d) => {
      if (settled) return; // keep draining so a chatty server never blocks on a full pipe
      out = (out + d).slice(-4000);
      const m = /listening on (http:\/\/([^\s/]+):(\d+))/.exec(out);
      if (!m) return;
      const host = m[2].replace(/:\d+$/, '');
      if (!LOOPBACK.has(host)) settle(new Error(`listens on ${m[1]}, not loopback`));
      else settle(null, m[1]);
    });
    child.once('error', (e) => settle(e));
    child.once('exit', (code, sig) => settle(new Error(`exited (${code ?? sig}) before listening: ${lastLine(stderr || out)}`)));
  });
}

/** The most telling line of a failed start: the last error line, else the last line (stack frames and the Node banner skipped). */
function lastLine(text) {
  const lines = text.split('\n').filter((l) => /\S/.test(l) && !/^\s+at |^Node\.js v\d/.test(l));
  return (lines.filter((l) => /error/i.test(l)).at(-1) ?? lines.at(-1) ?? 'no output').trim().slice(0, 200);
}

/** SIGTERM, then SIGKILL after 3 s. */
export async function stopServer(server) {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  if ((await Promise.race([exited, sleep(3000).then(() => 'timeout')])) === 'timeout') child.kill('SIGKILL');
}

export function killAll() {
  for (const child of live) child.kill('SIGKILL');
  for (const pid of childPids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {} // already gone
  }
}

/** Pids whose parent is this process, from /proc (Linux; empty elsewhere). */
function childPids() {
  const pids = [];
  let entries = [];
  try {
    entries = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return pids;
  }
  for (const d of entries) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) pids.push(Number(d));
    } catch {} // exited meanwhile
  }
  return pids;
}

/** Kill every child however the harness ends. */
export function installCleanup() {
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      killAll();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
  const crash = (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
}

/** CPU time a process has used (user + system, all its threads), in ms, from /proc/PID/stat (Linux, USER_HZ 100). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/**
 * CPU time (ms, as cpuMs) of the processes below pid — a proxy's stdio upstreams (through a shell, if it used one): each
 * live descendant's own and its reaped children's, plus what pid's reaped children used (an upstream that ended
 * between two readings still counts).
 */
export function descendantsCpuMs(pid) {
  const procs = new Map(); // pid → { ppid, own, reaped } (ms)
  for (const d of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) * 10, reaped: (Number(f[13]) + Number(f[14])) * 10 });
    } catch {} // exited meanwhile
  }
  const below = (p) => {
    for (let up = procs.get(p)?.ppid; up; up = procs.get(up)?.ppid) if (up === pid) return true;
    return false;
  };
  let ms = procs.get(pid)?.reaped ?? 0;
  for (const [p, { own, reaped }] of procs) if (below(p)) ms += own + reaped;
  return ms;
}

/** Resident set size of a process in MiB, from /proc/PID/status (Linux). */
export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** The file-backed part of a process's RSS in MiB (the node binary, its libraries, mapped files), from /proc/PID/smaps_rollup (Linux). */
export function fileBackedMiB(pid) {
  const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kB = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? NaN);
  return (kB('Rss') - kB('Anonymous')) / 1024;
}

/** Poll GET url every 5 ms until it answers 200; bounded by timeoutMs. */
export async function waitFor200(url, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(url, {}, 1000).catch(() => null);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/**
 * Milliseconds from spawn to the first 200 from /healthz (`def.health`: another path; a `stdio` server: its answer to
 * initialize), once per sample; the server is stopped each time.
 */
export async function measureStartup(def, env, samples) {
  const times = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const server = await startServer(def, env);
    try {
      if (!def.stdio) await waitFor200(`${server.url}${def.health ?? '/healthz'}`);
      times.push(performance.now() - t0);
    } finally {
      await stopServer(server);
    }
  }
  return times;
}
