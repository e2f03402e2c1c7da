#!/usr/bin/env node
// The `svc` command — the only reader of argv and env. Forms scripts rely on:
//   svc serve [manifest] [--host H] [--port N] [--no-watch]   → prints "listening on http://HOST:PORT"
//   svc validate [manifest] [--json]                           → exit 0, or 1 with FILE:LINE:COL: CODE: message lines
//   svc init [dir]                                             → writes a commented starter svc.yaml
//   svc hash-password                                          → reads a password on stdin, prints its scrypt hash
// Guarantees: stdout carries only the listening line (logs go to stderr);
// SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the manifest; a bad manifest never prints a stack trace.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkManifest, loadManifest } from './manifest/index.js';
import { ManifestError, SvcError } from './errors.js';
import { serve } from './http/serve.js';
import { logger } from './log.js';
import { STARTER_MANIFEST } from './starter.js';
import { createReloader } from './policy/reloader.js';
import { watchManifest } from './policy/watch.js';
import { hashPassword } from './auth/oauth/password.js';

interface Args { positional: string[]; flags: Map<string, string | true> }

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq !== -1) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else if (['host', 'port'].includes(a.slice(2)) && argv[i + 1] !== undefined) flags.set(a.slice(2), argv[++i]!);
    else flags.set(a.slice(2), true);
  }
  return { positional, flags };
}

const USAGE = `usage:
  svc serve [manifest] [--host H] [--port N] [--no-watch]
  svc validate [manifest] [--json]
  svc init [dir]
  svc hash-password        (password on stdin; prints a hash for oauth.users[].password_hash)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const args = parseArgs(rest);
  switch (command) {
    case 'serve':
      return cmdServe(args);
    case 'validate':
      return cmdValidate(args);
    case 'init':
      return cmdInit(args);
    case 'hash-password':
      return cmdHashPassword();
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE + '\n');
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`svc: unknown command ${command}\n${USAGE}\n`);
      return 2;
  }
}

function printProblems(problems: SvcError[]): void {
  for (const p of problems) process.stderr.write(p.format() + '\n');
}

async function cmdServe(args: Args): Promise<number> {
  const file = args.positional[0] ?? 'svc.yaml';
  let loaded;
  try {
    loaded = await loadManifest(file);
  } catch (e) {
    if (e instanceof ManifestError) {
      printProblems(e.problems);
      return 1;
    }
    throw e;
  }
  const flagPort = args.flags.get('port');
  const port = typeof flagPort === 'string' ? Number(flagPort) : process.env.PORT ? Number(process.env.PORT) : undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    process.stderr.write(`svc: --port must be an integer 0..65535\n`);
    return 2;
  }
  const flagHost = args.flags.get('host');
  const host = typeof flagHost === 'string' ? flagHost : process.env.HOST || undefined;
  const served = await serve(loaded.svc, loaded.config, { host, port });
  const generated = served.handle.store.current().tokens?.generated;
  if (generated) {
    process.stderr.write(`\nNo token was set (auth.token is empty), so one was generated for this run:\n\n  export SVC_TOKEN=${generated}\n\nSet SVC_TOKEN yourself to keep a token across restarts.\n\n`);
  }
  // Hot reload: the watcher (unless --no-watch) and SIGHUP both go through the one serialized reloader.
  const reloader = createReloader({ file, store: served.handle.store, status: served.handle.status, current: loaded, logger });
  const watcher = args.flags.has('no-watch') ? undefined : watchManifest({ file, initialHash: loaded.hash, logger, onChange: async () => (await reloader.reload('watch')).hash_read });
  process.on('SIGHUP', () => void reloader.reload('SIGHUP', { force: true }));
  // Edits made after the listening line are seen: the watcher is ready first.
  await watcher?.ready;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'server.stopping', signal }, 'draining');
    await watcher?.close();
    await served.close();
    await reloader.close();
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Printed only now: a supervisor may send SIGTERM the moment it reads this line.
  process.stdout.write(`listening on ${served.url}\n`);
  logger.info({ event: 'server.started', url: served.url, manifest: relative(process.cwd(), loaded.config.manifest_path ?? file), config_hash: loaded.hash }, `serving ${loaded.svc.name}`);
  return -1; // keep running
}

function cmdValidate(args: Args): number {
  const file = args.positional[0] ?? 'svc.yaml';
  const checked = checkManifest(file);
  if (args.flags.has('json')) {
    process.stdout.write(JSON.stringify({ valid: checked.problems.length === 0, file, config_hash: checked.hash, problems: checked.problems.map((p) => p.toJSON()) }, null, 2) + '\n');
  } else if (checked.problems.length) {
    printProblems(checked.problems);
  } else {
    const m = checked.plan!.manifest;
    process.stdout.write(`${file}: ok — ${m.tools?.length ?? 0} tools, ${m.resources?.length ?? 0} resources, ${m.prompts?.length ?? 0} prompts\n`);
  }
  return checked.problems.length ? 1 : 0;
}

function cmdInit(args: Args): number {
  const dir = args.positional[0] ?? '.';
  const file = join(dir, 'svc.yaml');
  if (existsSync(file)) {
    process.stderr.write(`svc: ${file} already exists; not overwriting\n`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, STARTER_MANIFEST, { flag: 'wx' });
  process.stdout.write(`wrote ${file}\nnext: svc validate ${file} && svc serve ${file}\n`);
  return 0;
}

async function cmdHashPassword(): Promise<number> {
  if (process.stdin.isTTY) process.stderr.write('password (input hidden; end with Enter): ');
  const password = await readSecretLine();
  if (!password) {
    process.stderr.write('svc: empty password\n');
    return 1;
  }
  if (password.length < 8) process.stderr.write('svc: warning: passwords shorter than 8 characters are weak\n');
  process.stdout.write((await hashPassword(password)) + '\n');
  return 0;
}

/** One line from stdin; on a terminal the typed characters are not echoed. */
function readSecretLine(): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const tty = stdin.isTTY;
    if (tty) stdin.setRawMode(true);
    let buf = '';
    const done = () => {
      stdin.off('data', onData);
      stdin.off('end', done);
      if (tty) {
        stdin.setRawMode(false);
        process.stderr.write('\n');
      }
      stdin.pause();
      resolve(buf.replace(/\r?\n$/, ''));
    };
    const onData = (chunk: Buffer) => {
      const s = chunk.toString('utf8');
      if (tty && s === '\u0003') process.exit(130);
      const nl = s.search(/[\r\n]/);
      if (tty && nl !== -1) {
        buf += s.slice(0, nl);
        return done();
      }
      buf += s;
    };
    stdin.on('data', onData);
    stdin.on('end', done);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    const hint = listenHint(e as NodeJS.ErrnoException & { address?: string; port?: number });
    process.stderr.write(`svc: ${hint ?? (e instanceof SvcError ? e.format() : (e as Error).message)}\n`);
    if (!hint && !(e instanceof SvcError)) logger.error({ err: e }, 'fatal'); // a bug: keep the stack in the log
    process.exitCode = 1;
  },
);

/** What to do when the socket cannot be bound (the commonest first-run failure). */
function listenHint(e: NodeJS.ErrnoException & { address?: string; port?: number }): string | undefined {
  if (e?.syscall !== 'listen') return undefined;
  const where = `${e.address}:${e.port}`;
  if (e.code === 'EADDRINUSE') return `${where} is already in use: stop the other server, or pick another port with --port N (or PORT=N; --port 0 takes a free one)`;
  if (e.code === 'EACCES') return `not allowed to listen on ${where}: use a port above 1023, or run with the right to bind it`;
  if (e.code === 'EADDRNOTAVAIL') return `${e.address} is not an address of this machine: fix server.host, --host or HOST`;
  return undefined;
}
