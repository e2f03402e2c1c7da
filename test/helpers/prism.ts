// startPrism(): Stoplight Prism (`prism mock DOC`, the devDependency @stoplight/prism-cli pinned at 5.14.2 — 5.15+
// needs Node 24) as the API an OpenAPI document describes, so a request fastsvc builds is checked against the document
// by a tool this project did not write. Guarantees: Prism runs from node_modules under this Node, without a shell, on
// a free loopback port (127.0.0.1, --port 0: Prism reports the port it got) and with --errors, so a request that does
// not match the document is answered with an error (a problem+json 4xx naming the violation) instead of a mock
// answer; it resolves once Prism prints that it listens, and rejects with its output if it exits or stays silent
// first; everything it prints is kept (ANSI colours removed) for failure messages (tail()) and for counting the
// requests it received (received()); stop() ends it (SIGTERM, then how it exited); a Prism still running when the
// test process exits is killed.

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { ROOT, type Exit } from './cli.js';

const require = createRequire(import.meta.url);
/** A small document with no 4xx answer documented, so Prism answers a violation with its own problem+json naming it. */
export const PRISM_CHECK = join(ROOT, 'test', 'e2e', 'fixtures', 'prism-check.openapi.json');
/** Prism's command line, resolved from the devDependency (never a global install, never npx). */
export const PRISM_BIN = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');

export interface PrismRequest { method: string; path: string }

export interface Prism {
  /** http://127.0.0.1:PORT, the mock API's origin (append the document's base path if its servers have one). */
  url: string;
  /** Everything Prism printed so far, colours removed. */
  output(): string;
  /** The last lines Prism printed, for an assertion's message. */
  tail(lines?: number): string;
  /** The requests Prism received so far, in order (method lower-case as Prism prints it; path without the query). */
  received(): PrismRequest[];
  exit: Promise<Exit>;
  stop(): Promise<Exit>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
/** `[HTTP SERVER] get /pet/3 ℹ  info      Request received` */
const RECEIVED = /\[HTTP SERVER\] (\w+) (\S+) .*Request received/;

/** Starts `prism mock DOCUMENT --errors` on a free loopback port; args are added after Prism's own. */
export function startPrism(document: string, o: { args?: string[]; timeoutMs?: number } = {}): Promise<Prism> {
  const argv = [PRISM_BIN, 'mock', document, '--host', '127.0.0.1', '--port', '0', '--errors', ...(o.args ?? [])];
  const proc = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  live.add(proc);
  let out = '';
  const output = () => out.replace(ANSI, '');
  const tail = (n = 40) => output().trimEnd().split('\n').slice(-n).join('\n');
  const exit = new Promise<Exit>((done) => proc.on('close', (code, signal) => {
    live.delete(proc);
    done({ code, signal });
  }));
  const pipes = [proc, proc.stdout as Socket, proc.stderr as Socket];
  const stop = () => {
    for (const h of pipes) h.ref();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    return exit;
  };
  const received = () => output().split('\n').flatMap((l) => {
    const m = RECEIVED.exec(l);
    return m ? [{ method: m[1]!, path: m[2]! }] : [];
  });
  const timeoutMs = o.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`prism mock ${document}: not listening within ${timeoutMs} ms; it printed:\n${tail()}`));
    }, timeoutMs);
    let listening = false;
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = !listening && /Prism is listening on (http:\/\/\S+)/.exec(output());
      if (!m) return;
      listening = true;
      clearTimeout(timer);
      for (const h of pipes) h.unref();
      resolve({ url: m[1]!.replace(/\/$/, ''), output, tail, received, exit, stop });
    });
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => { out += c; });
    proc.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`prism mock ${document} exited (${code ?? signal}) before listening; it printed:\n${tail()}`));
    });
  });
}
