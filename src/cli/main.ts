// The `fastsvc` command table and its commands (the bin, src/cli.ts, hands it argv): with it, the only reader of argv and env.
// Every command's usage and help live once, in COMMANDS below (docs/reference/cli.md is
// generated from it). Forms scripts rely on: `serve` prints exactly "listening on
// http://HOST:PORT" to stdout when ready; `validate` exits 0, or 1 with one
// FILE:LINE:COL: CODE: message line per problem; `diff --fail-on-widen` exits 3 on a widening.
// Guarantees: every command answers --help (its usage, exit 0) and refuses an
// unknown flag or a surplus argument (one line naming it, then usage, exit 2);
// serve's stdout carries only the listening line (logs go to stderr as JSON lines);
// SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the manifest; every other command
// writes human lines only — no JSON log line unless --log-json — and a failure is one
// line (FILE:LINE:COL: CODE: message, or fastsvc: CODE: message), never a stack trace.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { checkIO, checkManifest, loadManifest } from '../manifest/index.js';
import { manifestWarnings } from '../manifest/warnings.js';
import { lockProblems } from '../manifest/lock-check.js';
import { uniqueWarnings } from '../manifest/openapi-sources.js';
import { ManifestError, SvcError } from '../errors.js';
import { serve } from '../server/serve.js';
import { logger } from '../log.js';
import { starterManifest } from './starter.js';
import { createReloader } from '../server/reloader.js';
import { capabilityCounts, startupLine } from '../observe/startup-line.js';
import { packageFile, packageVersion } from '../util/package-root.js';

const PROG = 'fastsvc';
const SCHEMA_FILE = packageFile('schema', 'svc.schema.json');

type Values = Record<string, string | boolean | undefined>;

/** Every command but serve: logs (JSON lines on stderr) only when asked. */
const LOG_JSON_HELP = '  --log-json          also write the log\'s JSON lines to stderr (default: none)';

interface Command {
  /** The synopsis line (after "usage: "). */
  usage: string;
  /** What it does and what each option means. */
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  maxPositionals: number;
  run(values: Values, positionals: string[]): Promise<number> | number;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: `${PROG} serve [manifest] [--host H] [--port N] [--no-watch]`,
    help: `Serves the manifest (default ./svc.yaml). When ready, prints one line to stdout:
"listening on http://HOST:PORT". SIGTERM or SIGINT drains and exits 0; SIGHUP reloads.

options:
  --host H      address to bind (overrides server.host; env HOST)
  --port N      port to bind, 0 picks a free one (overrides server.port; env PORT)
  --no-watch    do not reload the policy when the manifest (or an openapi document) changes
  -h, --help    show this help`,
    options: { host: { type: 'string' }, port: { type: 'string' }, 'no-watch': { type: 'boolean' } },
    maxPositionals: 1,
    run: (v, p) => cmdServe(p[0] ?? 'svc.yaml', v),
  },
  validate: {
    usage: `${PROG} validate [manifest] [--json] [--no-io] [--network] [--allow-unset-env]`,
    help: `Checks the manifest (default ./svc.yaml) as serve would, without serving or any
network call (unless --network). Exit 0 when valid; otherwise exit 1 and one line per problem on stderr:
FILE:LINE:COL: CODE: message. Advice that does not fail it (TASK_ADVISED, SCOPE_ADVISED,
OPENAPI_SKIPPED, OPENAPI_NOT_FETCHED, LOCK_UPSTREAM_UNKNOWN) is one line each:
FILE:LINE:COL: warning: CODE: message. With upstreams, the pin lock file beside the manifest
(svc.lock.json) is checked too, as serve reads it (LOCK_INVALID at its own FILE:LINE:COL); a
missing one is no problem.

options:
  --json              print {valid, file, config_hash, problems, warnings, unset_env} on stdout
  --no-io             skip the checks that read other files: SQLite files and queries,
                      exec programs (on PATH), content and secret files, fs roots, module files,
                      the pin lock file
  --network           also fetch each external issuer's discovery document and signing keys
                      (reachable, a key set without private keys, a key for its algorithms);
                      its introspection endpoint is never called; and each openapi document
                      at a URL (without it, that source is not checked: OPENAPI_NOT_FETCHED)
  --allow-unset-env   an unset \${VAR} without a default gets the placeholder "unset:VAR"
                      instead of an error; the unset names are listed as a note (CI without secrets)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, 'no-io': { type: 'boolean' }, network: { type: 'boolean' }, 'allow-unset-env': { type: 'boolean' } },
    maxPositionals: 1,
    run: (v, p) => cmdValidate(p[0] ?? 'svc.yaml', v),
  },
  init: {
    usage: `${PROG} init [dir]`,
    help: `Writes a commented starter svc.yaml into dir (default .); never overwrites one.
Its first line points editors at the JSON schema shipped in this package.

options:
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: {},
    maxPositionals: 1,
    run: (_v, p) => cmdInit(p[0] ?? '.'),
  },
  explain: {
    usage: `${PROG} explain [manifest] (--scopes "a b" | --token NAME | --token-file F [--no-verify] | --subject USER) [--claims JSON] [--capability ID [--args JSON] [--task]] [--apps] [--json] [--io]`,
    help: `Says, for every capability of the manifest (default ./svc.yaml), whether a caller sees it
(visible/hidden), whether it may call it, and why: the missing scope, the tenant binding,
the quota, a public route, a tool that runs only as a task, an app-only tool. The verdicts come
from the admission list the server runs for every call (served, visible, access, task, input,
quota); --capability prints that list step by step. GET /svc/explain answers the same for the
caller's own token. Only the policy is read: no
backend file, database or program the manifest names is opened (unless --io).

options:
  --scopes "a b"      a caller holding these scopes (with --claims '{"tenant":"acme"}')
  --token NAME        the manifest's token NAME (auth.subject or auth.tokens[].name)
  --token-file F      the token in file F: one of the manifest's static tokens, or an access
                      token of an external issuer (external_issuers), verified by asking the
                      issuer (its keys, or introspection for an opaque token): needs the network
  --no-verify         with --token-file: decode an external issuer's JWT without verifying it
                      (offline; says so), to see what its claims would give
  --subject USER      the OAuth user USER (oauth.users) holding every scope it may grant
  --capability ID     explain one call instead: tool NAME (or tool:NAME, prompt:NAME,
                      resource:URI) with --args JSON; exit 0 if allowed, 1 if refused
  --task              with --capability: explain a task-augmented call (params.task)
  --apps              a caller whose MCP client declares MCP Apps (io.modelcontextprotocol/ui):
                      app-only tools are there for it (default: a caller that does not, as on /svc)
  --json              print the JSON GET /svc/explain answers
  --io                also open what the manifest names, read-only, as validate does
  --allow-unset-env   unset \${VAR}s get a placeholder (as for validate)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: {
      scopes: { type: 'string' }, token: { type: 'string' }, 'token-file': { type: 'string' }, 'no-verify': { type: 'boolean' }, subject: { type: 'string' }, claims: { type: 'string' },
      capability: { type: 'string' }, args: { type: 'string' }, task: { type: 'boolean' }, apps: { type: 'boolean' }, json: { type: 'boolean' }, io: { type: 'boolean' }, 'allow-unset-env': { type: 'boolean' },
    },
    maxPositionals: 1,
    run: async (v, p) => (await import('./policy.js')).cmdExplain(p[0] ?? 'svc.yaml', v, printProblems),
  },
  diff: {
    usage: `${PROG} diff OLD NEW [--json] [--fail-on-widen] [--io] [--allow-unset-env]`,
    help: `Prints what changing manifest OLD into manifest NEW changes — what the reloader logs:
capabilities added (+), removed (-), changed (~); then each widening, one line per
capability: which callers (anonymous callers on a public route, any caller holding some
scopes, a named token, an OAuth user or client, an ID-JAG provider's users) can make some
call they could not make before, and why (required scopes before → after, a route, what
the caller gained); then each narrowing. Only the policy is read: no backend file,
database or program is opened (unless --io), so OLD can be a copy anywhere
(git show main:svc.yaml > /tmp/old.yaml). Exit 0; 1 if a manifest is invalid; 3 if
access widened and --fail-on-widen is given: a CI gate for GitOps pipelines.

options:
  --json              print {changes, widened, widenings, narrowings}
  --fail-on-widen     exit 3 when access widened
  --io                also open what the manifests name, read-only, as validate does
  --allow-unset-env   unset \${VAR}s get a placeholder (as for validate)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, 'fail-on-widen': { type: 'boolean' }, io: { type: 'boolean' }, 'allow-unset-env': { type: 'boolean' } },
    maxPositionals: 2,
    run: (v, p) => (p.length < 2 ? usageError(`usage: ${COMMANDS.diff!.usage}`, 'give two manifests', 'diff') : import('./policy.js').then((m) => m.cmdDiff(p[0]!, p[1]!, v, printProblems))),
  },
  keys: {
    usage: `${PROG} keys rotate [manifest]`,
    help: `Rotates the OAuth signing key and cookie key in the manifest's durable store
(oauth.provider sqlite or postgres): the new keys sign, the previous two of each stay
for verification. Replicas read keys when they start: restart them one at a time.

options:
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: {},
    maxPositionals: 2,
    run: async (_v, p) => (await import('./keys.js')).cmdKeys(PROG, p[0], p[1] ?? 'svc.yaml', printProblems),
  },
  upstreams: {
    usage: `${PROG} upstreams (status [manifest] [--json] | accept NAME [manifest] [--dry-run])`,
    help: `The pin lock of upstream MCP servers with pin: true (the lock file beside the manifest:
svc.lock.json for svc.yaml). Each upstream is listed by connecting to it as serve does
(its command or url, headers and auth from the manifest, default ./svc.yaml); no running server
is asked.

  status        per pinned upstream: definitions served, withheld (changed, new, unpinned,
                duplicate, invalid) and removed; per unpinned one: "not pinned", its state and
                protocol version, and what it serves, kind by kind. Exit 0 when nothing is
                withheld, 3 when something is, 1 when an upstream cannot be listed or the lock
                cannot be read
  accept NAME   record upstream NAME's current definitions in the lock (atomically; other
                upstreams' entries untouched) and print what was accepted: each added
                definition whole, each changed one as a diff of its description and schemas.
                A running server applies the new lock at once. Exit 0; 1 on a problem

options:
  --json              status: print {lock_file, lock_found, upstreams} instead
  --dry-run           accept: print what would be accepted; write nothing
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
    maxPositionals: 3,
    run: async (v, p) => (await import('./upstreams.js')).cmdUpstreams(PROG, p, { json: !!v.json, dryRun: !!v['dry-run'] }, printProblems),
  },
  import: {
    usage: `${PROG} import openapi DOC [--include-tag T] [--include-operation ID] [--include-path GLOB] [--include-method M] [--exclude-…] [--naming P] [--base-url U] [--required-scope S]`,
    help: `Prints, on stdout, the tools an \`openapi\` source with document DOC (YAML or JSON: OpenAPI 3.0,
3.1 or Swagger 2.0) would serve, as a YAML \`tools:\` list to paste into a manifest: served, it is
the same catalog as the source. Operations fastsvc cannot call are listed as warnings on stderr
(and as comments in the output). A broken document is reported at its FILE:LINE:COL; exit 1.

options:
  --include-tag T          only operations with tag T (repeatable: any of them)
  --include-operation ID   only the operation with operationId ID (repeatable)
  --include-path GLOB      only paths matching GLOB (* within a segment, ** across; repeatable)
  --include-method M       only method M: GET POST PUT PATCH DELETE (repeatable)
  --exclude-tag T, --exclude-operation ID, --exclude-path GLOB, --exclude-method M
                           leave out operations matching every --exclude-… given
  --naming P               tool names: placeholders {operationId} {tag} {method} {path_name}
                           (default {operationId})
  --base-url U             where the API is called (default: the document's first server)
  --required-scope S       a scope every tool requires (repeatable)
${LOG_JSON_HELP}
  -h, --help               show this help`,
    options: Object.fromEntries([
      ...['include', 'exclude'].flatMap((side) => ['tag', 'operation', 'path', 'method'].map((k) => [`${side}-${k}`, { type: 'string', multiple: true }])),
      ['required-scope', { type: 'string', multiple: true }],
      ['naming', { type: 'string' }],
      ['base-url', { type: 'string' }],
    ]) as NonNullable<ParseArgsConfig['options']>,
    maxPositionals: 2,
    run: async (v, p) => (await import('./import-openapi.js')).cmdImport(PROG, p, v, printProblems),
  },
  'hash-password': {
    usage: `${PROG} hash-password`,
    help: `Reads a password on stdin (not echoed on a terminal) and prints its scrypt hash,
for oauth.users[].password_hash.

options:
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: {},
    maxPositionals: 0,
    run: () => cmdHashPassword(),
  },
};

const USAGE = `usage:
${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}
  ${PROG} help [command]
  ${PROG} --version

"${PROG} COMMAND --help" describes a command. Also installed as "svc".`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) return usageError(USAGE);
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === undefined) return say(USAGE);
    const cmd = COMMANDS[topic];
    return cmd ? say(commandHelp(cmd)) : usageError(USAGE, `unknown command ${topic}`);
  }
  if (name === '--version') return say(packageVersion());
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) return usageError(USAGE, name.startsWith('-') ? `unknown option ${name}` : `unknown command ${name}`);

  // A command other than serve writes human lines only; its log is JSON, so it is silent unless asked.
  const logOption: NonNullable<ParseArgsConfig['options']> = name === 'serve' ? {} : { 'log-json': { type: 'boolean' } };
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...cmd.options, ...logOption, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    return usageError(`usage: ${cmd.usage}`, argError(e as Error & { code?: string }), name);
  }
  if (name !== 'serve' && !parsed.values['log-json']) logger.level = 'silent';
  if (parsed.values.help) return say(commandHelp(cmd));
  if (parsed.positionals.length > cmd.maxPositionals) return usageError(`usage: ${cmd.usage}`, `unexpected argument ${parsed.positionals[cmd.maxPositionals]}`, name);
  return cmd.run(parsed.values, parsed.positionals);
}

/** What `fastsvc help` prints, then what each command's --help prints, in table order (scripts/gen-docs.mjs makes docs/reference/cli.md of it). */
export function helpPages(): { usage: string; commands: { name: string; help: string }[] } {
  return { usage: USAGE, commands: Object.entries(COMMANDS).map(([name, cmd]) => ({ name, help: commandHelp(cmd) })) };
}

function commandHelp(cmd: Command): string {
  return `usage: ${cmd.usage}\n\n${cmd.help}`;
}

function say(text: string): number {
  process.stdout.write(text + '\n');
  return 0;
}

/** One line saying what is wrong (when there is something), then the usage; exit 2. */
function usageError(usage: string, problem?: string, command?: string): number {
  process.stderr.write((problem ? `${PROG}${command ? ' ' + command : ''}: ${problem}\n` : '') + usage + '\n');
  return 2;
}

/** node:util parseArgs errors, said shortly. */
function argError(e: Error & { code?: string }): string {
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${/'([^']+)'/.exec(e.message)?.[1] ?? ''}`.trimEnd();
  if (e.code?.startsWith('ERR_PARSE_ARGS_')) return e.message;
  throw e;
}

/** A path relative to the working directory when it is inside it, else absolute. */
function shortPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') ? rel : abs;
}

function printProblems(problems: SvcError[]): void {
  for (const p of problems) process.stderr.write(p.format() + '\n');
}

async function cmdServe(file: string, flags: Values): Promise<number> {
  let loaded;
  try {
    loaded = await loadManifest(file, process.env);
  } catch (e) {
    if (e instanceof ManifestError) {
      printProblems(e.problems);
      return 1;
    }
    throw e;
  }
  const flagPort = flags.port;
  const port = typeof flagPort === 'string' ? Number(flagPort) : process.env.PORT ? Number(process.env.PORT) : undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    process.stderr.write(`${PROG} serve: --port must be an integer 0..65535\n`);
    return 2;
  }
  const flagHost = flags.host;
  const host = typeof flagHost === 'string' ? flagHost : process.env.HOST || undefined;
  const served = await serve(loaded.svc, loaded.config, { host, port });
  const generated = served.handle.store.current().tokens?.generated;
  if (generated) {
    process.stderr.write(`\nNo token was set (auth.token is empty), so one was generated for this run:\n\n  export SVC_TOKEN=${generated}\n\nSet SVC_TOKEN yourself to keep a token across restarts.\n\n`);
  }
  // Hot reload: the watcher (unless --no-watch) and SIGHUP both go through the one serialized reloader.
  const reloader = createReloader({ file, store: served.handle.store, status: served.handle.status, current: loaded, logger, env: process.env, observer: served.handle.observer, catalogFor: served.handle.catalogFor });
  const watcher = flags['no-watch'] ? undefined : (await import('../server/watch.js')).watchManifest({ file, initialHash: loaded.fileHash, logger, onChange: async () => (await reloader.reload('watch')).hash_read });
  // The openapi sources' documents too: an edit of one reloads as an edit of the manifest does.
  const documents = flags['no-watch'] || !loaded.plan.manifest.openapi?.length ? undefined
    : (await import('../server/openapi-watch.js')).watchDocuments({ manifest: loaded.plan.manifest, file, logger, reload: () => reloader.reload('watch') });
  process.on('SIGHUP', () => void reloader.reload('SIGHUP', { force: true }));
  // Edits made after the listening line are seen: the watchers are ready first.
  await watcher?.ready;
  await documents?.ready;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'server.stopping', signal }, 'draining');
    await watcher?.close();
    await documents?.close();
    await served.close();
    await reloader.close();
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Printed only now: a supervisor may send SIGTERM the moment it reads this line.
  process.stdout.write(`listening on ${served.url}\n`);
  const cat = served.handle.store.current().catalog;
  process.stderr.write(startupLine({
    name: loaded.svc.name, url: served.url, tools: cat.tools.size, resources: cat.resources.size + cat.templates.length, prompts: cat.prompts.size,
    config: served.handle.config, watching: watcher ? shortPath(loaded.config.manifest_path ?? resolve(file)) : undefined,
  }) + '\n');
  logger.info({ event: 'server.started', url: served.url, manifest: relative(process.cwd(), loaded.config.manifest_path ?? file), config_hash: loaded.hash }, `serving ${loaded.svc.name}`);
  return -1; // keep running
}

async function cmdValidate(file: string, flags: Values): Promise<number> {
  const checked = checkManifest(file, process.env, { allowUnsetEnv: !!flags['allow-unset-env'], offline: !flags.network });
  const problems = checked.plan && !flags['no-io'] ? await checkIO(checked.plan, file, checked.locate) : checked.problems;
  const lock = checked.plan && !flags['no-io'] ? lockProblems(checked.plan.manifest, file) : undefined;
  problems.push(...lock?.problems ?? []);
  if (flags.network && checked.plan && !problems.length) problems.push(...await (await import('./network.js')).issuerProblems(checked.plan, file, checked.locate));
  // Warnings print (stderr, or `warnings` in --json) and never change the exit code.
  // Each in the manifest, but the lock's (in --json with the lock's `file`).
  const warnings: { code: string; path: string; line: number; col: number; message: string; file?: string }[] = checked.plan ? manifestWarnings(checked.plan.manifest, (p) => {
    // locate() falls back to the nearest node that exists: a path the file omits lands on its parent.
    const here = checked.locate(p);
    const parent = checked.locate(p.slice(0, -1));
    return here.line !== parent.line || here.col !== parent.col;
  }).map((w) => {
    const at = checked.locate(w.path);
    return { ...w, path: '/' + w.path.join('/'), line: at.line, col: at.col };
  }) : [];
  for (const w of checked.warnings) warnings.push({ ...w, path: '/' + w.path.join('/'), ...checked.locate(w.path) });
  warnings.push(...lock?.warnings ?? []);
  // An openapi source's tools share its lines: the same advice for many of them is said once.
  warnings.splice(0, warnings.length, ...uniqueWarnings(warnings));
  if (flags.json) {
    process.stdout.write(JSON.stringify({ valid: problems.length === 0, file, config_hash: checked.hash, problems: problems.map((p) => p.toJSON()), warnings, unset_env: checked.unsetEnv }, null, 2) + '\n');
    return problems.length ? 1 : 0;
  }
  for (const w of warnings) process.stderr.write(`${w.file ?? file}:${w.line}:${w.col}: warning: ${w.code}: ${w.message}\n`);
  if (problems.length) {
    printProblems(problems);
    if (problems.some((p) => p.code === 'ENV_UNSET')) process.stderr.write('hint: --allow-unset-env validates the rest without these variables (in CI, for secrets set only where the server runs)\n');
  } else {
    const m = checked.plan!.manifest;
    // A view (tools[].ui) is served as a resource of its own, so it counts as one, as `svc serve` counts it.
    const resources = (m.resources?.length ?? 0) + checked.plan!.views.views.length;
    process.stdout.write(`${file}: ok — ${capabilityCounts(m.tools?.length ?? 0, resources, m.prompts?.length ?? 0)}\n`);
  }
  if (checked.unsetEnv.length) process.stdout.write(`${file}: note: validated with placeholders for unset environment variables: ${checked.unsetEnv.join(', ')}\n`);
  return problems.length ? 1 : 0;
}

function cmdInit(dir: string): number {
  const file = join(dir, 'svc.yaml');
  if (existsSync(file)) {
    process.stderr.write(`${PROG} init: ${file} already exists; not overwriting\n`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  // This package's own schema, relative to the new file: ./node_modules/fastsvc/schema/… after `npm install fastsvc`.
  const ref = relative(resolve(dir), SCHEMA_FILE).split(sep).join('/');
  writeFileSync(file, starterManifest(ref.startsWith('.') ? ref : './' + ref), { flag: 'wx' });
  process.stdout.write(`wrote ${file}\nnext: npx ${PROG} validate ${file} && npx ${PROG} serve ${file}\n`);
  return 0;
}

async function cmdHashPassword(): Promise<number> {
  if (process.stdin.isTTY) process.stderr.write('password (input hidden; end with Enter): ');
  const password = await readSecretLine();
  if (!password) {
    process.stderr.write(`${PROG} hash-password: empty password\n`);
    return 1;
  }
  if (password.length < 8) process.stderr.write(`${PROG} hash-password: warning: passwords shorter than 8 characters are weak\n`);
  process.stdout.write((await (await import('../auth/oauth/password.js')).hashPassword(password)) + '\n');
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

/** Runs one command line to its end: its exit code, or one line (never a stack trace) and exit code 1. */
export function run(argv: string[]): Promise<void> {
  return main(argv).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (e: unknown) => {
      const hint = listenHint(e as NodeJS.ErrnoException & { address?: string; port?: number });
      if (e instanceof ManifestError) printProblems(e.problems);
      else process.stderr.write(`${PROG}: ${hint ?? failureLine(e)}\n`);
      // A bug: its stack goes to the log (serve's, or another command's with --log-json).
      if (!hint && !(e instanceof SvcError) && !(e instanceof ManifestError)) logger.error({ err: e }, 'fatal');
      process.exitCode = 1;
    },
  );
}

/** An unexpected failure as CODE: message — a file that cannot be read says which, anything else is INTERNAL. */
function failureLine(e: unknown): string {
  if (e instanceof SvcError) return e.format();
  const err = e as NodeJS.ErrnoException;
  if (err?.path && (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'EISDIR')) return `FILE_UNREADABLE: cannot read ${err.path}: ${err.code}`;
  return `INTERNAL: ${err?.message ?? String(e)}`;
}

/** What to do when the socket cannot be bound (the commonest first-run failure). */
function listenHint(e: NodeJS.ErrnoException & { address?: string; port?: number }): string | undefined {
  if (e?.syscall !== 'listen') return undefined;
  const where = `${e.address}:${e.port}`;
  if (e.code === 'EADDRINUSE') return `${where} is already in use: stop the other server, or pick another port with --port N (or PORT=N; --port 0 takes a free one)`;
  if (e.code === 'EACCES') return `not allowed to listen on ${where}: use a port above 1023, or run with the right to bind it`;
  if (e.code === 'EADDRNOTAVAIL') return `${e.address} is not an address of this machine: fix server.host, --host or HOST`;
  return undefined;
}
