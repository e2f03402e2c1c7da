// serveManifest(): the one way tests start the real server. It writes the manifest (YAML text, or a document
// written as YAML) and any extra files into a fresh temporary folder, runs the built command there as operators do
// (`node dist/cli.js serve DIR/svc.yaml --port 0 [args]`, cwd the repository root, environment childEnv() plus
// the test's overrides) and resolves once it prints `listening on http://HOST:PORT`, with the process, its output
// (the JSON log lines parsed) and stop(). An existing manifest ({ file }) is served in place, without a folder.
// Guarantees: stop() ends the server (SIGTERM, then how it exited) and removes its folder once no server started
// on it runs; every server and folder still there when the test process exits is killed and removed, even after
// a failed test, and a listening server does not keep the test process alive (its process and pipes are unref'd
// once it listens, ref'd again while stop() waits for it): a test that fails before stopping its server would
// otherwise leave mocha waiting on it forever, so the exit hook that kills it never ran; a server that exits or
// stays silent for 20 s before listening rejects with its stderr; every
// output line goes to the secret scan (test/helpers/secrets.ts), except lines a test names as printing a
// secret on purpose (`unscanned`). Run `npm run build` first (npm test's pretest does).

import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { CLI, childEnv, ROOT, type Exit } from './cli.js';
import { logLine } from './secrets.js';

/** A manifest: YAML text, a document (written as YAML), or an existing file served in place (relative to the repository root). */
export type ManifestSource = string | Record<string, unknown> | { file: string };

export interface ServeOptions {
  /** Files written beside svc.yaml: path relative to the folder → content (folders are made). */
  files?: Record<string, string | Uint8Array>;
  /** Files or folders copied beside svc.yaml: path relative to the folder → source, relative to the repository root. */
  copy?: Record<string, string>;
  /** Environment overrides on top of childEnv()'s (undefined deletes a variable). */
  env?: Record<string, string | undefined>;
  /** Arguments after `serve FILE --port N` (e.g. --no-watch). */
  args?: string[];
  /** Options of node itself, before the command (what NODE_OPTIONS may not carry, e.g. --single-threaded-gc). */
  nodeArgs?: string[];
  /** The --port value (default 0, a free port); null leaves --port out (the PORT variable or the manifest decides). */
  port?: number | null;
  /** Output lines the secret scan skips: ones that print a secret on purpose (e.g. a generated token's banner). */
  unscanned?: RegExp;
}

export interface Served {
  url: string;
  /** The folder the manifest was written to (the manifest's own folder when served in place). */
  dir: string;
  /** The manifest's path. */
  file: string;
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stderr's JSON log lines so far, parsed (other lines skipped). */
  logs(): Record<string, unknown>[];
  exit: Promise<Exit>;
  /** SIGTERM (unless it already ended), then how it exited; the folder goes once no server on it runs. */
  stop(): Promise<Exit>;
  /** Replaces the manifest in place (a watching server reloads it). */
  write(manifest: string | Record<string, unknown>): void;
  /** Another server on the same folder and manifest, with these options over this one's. */
  again(o?: ServeOptions): Promise<Served>;
  /** stop(), keeping the folder, then again(o): a restart on the same files. */
  restart(o?: ServeOptions): Promise<Served>;
}

const text = (m: string | Record<string, unknown>) => (typeof m === 'string' ? m : stringify(m));

/** Folders this helper made → how many servers started on each still run. */
const folders = new Map<string, number>();
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of folders.keys()) rmSync(d, { recursive: true, force: true });
});

export function serveManifest(manifest: ManifestSource, o: ServeOptions = {}): Promise<Served> {
  if (typeof manifest === 'object' && typeof manifest.file === 'string' && Object.keys(manifest).length === 1) {
    return start(manifest.file, dirname(resolve(ROOT, manifest.file)), false, o);
  }
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-serve-'));
  folders.set(dir, 0);
  writeFileSync(join(dir, 'svc.yaml'), text(manifest as string | Record<string, unknown>));
  for (const [rel, content] of Object.entries(o.files ?? {})) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  for (const [rel, from] of Object.entries(o.copy ?? {})) cpSync(join(ROOT, from), join(dir, rel), { recursive: true });
  return start(join(dir, 'svc.yaml'), dir, true, o);
}

function release(dir: string, owned: boolean, keep = false): void {
  if (!owned) return;
  const n = (folders.get(dir) ?? 1) - 1;
  folders.set(dir, n);
  if (n === 0 && !keep) {
    folders.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sends complete lines of one stream to the secret scan, without the unscanned ones. */
function scanner(source: string, unscanned: RegExp | undefined) {
  const skip = unscanned && new RegExp(unscanned.source, unscanned.flags.replace('g', ''));
  let rest = '';
  const send = (t: string) => logLine(source, skip ? t.split('\n').filter((l) => !skip.test(l)).join('\n') : t);
  return {
    push(chunk: string) {
      const all = rest + chunk;
      const cut = all.lastIndexOf('\n') + 1;
      rest = all.slice(cut);
      if (cut) send(all.slice(0, cut));
    },
    end: () => rest && send(rest),
  };
}

/** Runs `svc serve ARG`, ARG as the test gave it (a relative path is the repository root's, the child's cwd). */
function start(arg: string, dir: string, owned: boolean, o: ServeOptions): Promise<Served> {
  const file = resolve(ROOT, arg);
  const port = o.port === undefined ? ['--port', '0'] : o.port === null ? [] : ['--port', String(o.port)];
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), CLI, 'serve', arg, ...port, ...(o.args ?? [])], { cwd: ROOT, env: childEnv(o.env), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  if (owned) folders.set(dir, (folders.get(dir) ?? 0) + 1);
  let stdout = '';
  let stderr = '';
  let keep = false;
  const source = `serve ${arg}`;
  const scanOut = scanner(source, o.unscanned);
  const scanErr = scanner(source, o.unscanned);
  const exit = new Promise<Exit>((done) => proc.on('close', (code, signal) => {
    live.delete(proc);
    scanOut.end();
    scanErr.end();
    release(dir, owned, keep);
    done({ code, signal });
  }));
  const logs = () => stderr.split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l);
      return v && typeof v === 'object' ? [v as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
  const pipes = [proc, proc.stdout as Socket, proc.stderr as Socket];
  const stop = () => {
    // Waiting for the exit must keep the process alive, whoever waits.
    for (const h of pipes) h.ref();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    return exit;
  };
  const again = (more: ServeOptions = {}) => start(arg, dir, owned, { ...o, ...more, env: { ...o.env, ...more.env } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`no listening line within 20 s; stderr:\n${stderr.slice(-2000)}`));
    }, 20_000);
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      scanErr.push(c);
    });
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      scanOut.push(c);
      const m = /^listening on (http:\/\/\S+)\n/m.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      for (const h of pipes) h.unref();
      resolve({
        url: m[1]!, dir, file, proc, exit, stop, logs, again,
        stdout: () => stdout,
        stderr: () => stderr,
        write: (manifest) => writeFileSync(file, text(manifest)),
        async restart(more) {
          keep = true;
          await stop();
          return again(more);
        },
      });
    });
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited (${code ?? signal}) before listening; stderr:\n${stderr.slice(-2000)}`));
    });
  });
}
