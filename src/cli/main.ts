// The `fastsvc` command table and its dispatch (the bin, src/cli.ts, hands it argv): with the
// commands' own files (serve.ts, validate.ts, init.ts, policy.ts …), the only reader of argv and env.
// Every command's summary, usage and help live once, in COMMANDS below (docs/reference/cli.md is
// generated from it); each usage line names every option in its `options` (a unit test holds it).
// Forms scripts rely on: `serve` prints exactly "listening on
// http://HOST:PORT" to stdout when ready; `validate` exits 0, or 1 with one
// FILE:LINE:COL: CODE: message line per problem; `diff --fail-on-widen` exits 3 on a widening.
// Guarantees: every command answers --help (its usage, exit 0) and refuses an unknown flag, a
// surplus argument, a flag given with its --no- form, or arguments it cannot run with (one line
// `fastsvc COMMAND: …` naming it, then usage, exit 2);
// serve's stdout carries only the listening line (logs go to stderr as JSON lines);
// SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the manifest; every other command
// writes human lines only — no JSON log line unless --log-json — and a failure is one
// line (FILE:LINE:COL: CODE: message, or fastsvc: CODE: message), never a stack trace;
// a reader that goes away ends every command but serve quietly, exit 0 (output.ts).

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ManifestError, SvcError } from '../errors.js';
import { logger } from '../log.js';
import { packageVersion } from '../util/package-root.js';
import { cmdHashPassword } from './hash-password.js';
import { cmdInit } from './init.js';
import { IO_OPTIONS, type Values } from './manifest.js';
import { printProblems, PROG, quietOnClosedPipe, say, UsageError } from './output.js';
import { cmdServe } from './serve.js';
import { cmdValidate } from './validate.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Every command but serve: logs (JSON lines on stderr) only when asked. */
const LOG_JSON = { 'log-json': { type: 'boolean' } } as const;
const LOG_JSON_HELP = '  --log-json          also write the log\'s JSON lines to stderr (default: none)';
/** The commands that read a manifest for its policy or its state, not to serve it. */
const ALLOW_UNSET_ENV = { 'allow-unset-env': { type: 'boolean' } } as const;
const ALLOW_UNSET_ENV_HELP = `  --allow-unset-env   an unset \${VAR} without a default gets the placeholder "unset:VAR"
                      instead of an error; a note on stderr lists them (CI without secrets)`;

export interface Command {
  /** One line: what it does (\`fastsvc --help\` lists it under the usage). */
  summary: string;
  /** The synopsis line (after "usage: "): every option of \`options\`. */
  usage: string;
  /** What it does and what each option means. */
  help: string;
  options: Options;
  maxPositionals: number;
  run(values: Values, positionals: string[]): Promise<number> | number;
}

export const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'serve a manifest over /svc, /mcp and /ws until a signal, reloading it when it changes',
    usage: `${PROG} serve [manifest] [--host H] [--port N] [--no-watch]`,
    help: `Serves the manifest (default ./svc.yaml). When ready, prints one line to stdout:
"listening on http://HOST:PORT". SIGTERM or SIGINT drains and exits 0; SIGHUP reloads.
There is no --allow-unset-env here: a server never runs on placeholders (the placeholder of an
unset token is a token anyone can guess). Set every variable the manifest names, or give it a
default in the manifest (\${VAR:-value}).

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
    summary: 'check a manifest as serve would, without serving',
    usage: `${PROG} validate [manifest] [--json] [--io | --no-io] [--network] [--allow-unset-env] [--log-json]`,
    help: `Checks the manifest (default ./svc.yaml) as serve would, without serving or any
network call (unless --network). Exit 0 when valid; otherwise exit 1 and one line per problem on stderr:
FILE:LINE:COL: CODE: message. Advice that does not fail it (TASK_ADVISED, SCOPE_ADVISED,
OPENAPI_SKIPPED, OPENAPI_NOT_FETCHED, LOCK_UPSTREAM_UNKNOWN, LISTING_LARGE) is one line each:
FILE:LINE:COL: warning: CODE: message. With upstreams, the pin lock file beside the manifest
(svc.lock.json) is checked too, as serve reads it (LOCK_INVALID at its own FILE:LINE:COL); a
missing one is no problem.

options:
  --json              print {valid, file, config_hash, problems, warnings, unset_env} on stdout
  --io, --no-io       open (the default), or not, what the manifest names, read-only: SQLite
                      files and queries, exec programs (on PATH), content and secret files,
                      fs roots, module files, the pin lock file
  --network           also fetch each external issuer's discovery document and signing keys
                      (reachable, a key set without private keys, a key for its algorithms);
                      its introspection endpoint is never called; and each openapi document
                      at a URL (without it, that source is not checked: OPENAPI_NOT_FETCHED)
  --allow-unset-env   an unset \${VAR} without a default gets the placeholder "unset:VAR"
                      instead of an error; the unset names are listed as a note (CI without secrets)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, ...IO_OPTIONS, network: { type: 'boolean' }, ...ALLOW_UNSET_ENV, ...LOG_JSON },
    maxPositionals: 1,
    run: (v, p) => cmdValidate(p[0] ?? 'svc.yaml', v),
  },
  init: {
    summary: 'write a commented starter svc.yaml',
    usage: `${PROG} init [dir] [--log-json]`,
    help: `Writes a commented starter svc.yaml into dir (default .); never overwrites one.
Its first line points editors at the JSON schema shipped in this package.

options:
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { ...LOG_JSON },
    maxPositionals: 1,
    run: (_v, p) => cmdInit(p[0] ?? '.'),
  },
  explain: {
    summary: 'say what a caller may see and call, and why, from the policy alone',
    usage: `${PROG} explain [manifest] (--scopes "a b" [--claims JSON] | --token NAME | --token-file F [--no-verify] | --subject USER) [--endpoint NAME] [--capability ID [--args JSON] [--task]] [--apps] [--json] [--io | --no-io] [--allow-unset-env] [--log-json]`,
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
  --endpoint NAME     through the named endpoint NAME (manifest endpoints): its door (its
                      required_scopes) and its selection; without it, each endpoint is listed
                      after the default one's view with what the caller reaches there
  --capability ID     explain one call instead: tool NAME (or tool:NAME, prompt:NAME,
                      resource:URI) with --args JSON; exit 0 if allowed, 1 if refused. A name
                      an upstream would import (its expose.prefix, include, exclude) is known
                      only at run time: the upstream's rule is explained, every upstream that
                      could serve it is named, and for a pinned one, whether the pin lock
                      beside the manifest (svc.lock.json) lists it (else it is withheld)
  --task              with --capability: explain a task-augmented call (params.task)
  --apps              a caller whose MCP client declares MCP Apps (io.modelcontextprotocol/ui):
                      app-only tools are there for it (default: a caller that does not, as on /svc)
  --json              print the JSON GET /svc/explain answers
  --io, --no-io       open, or not (the default), what the manifest names, read-only, as
                      validate does
${ALLOW_UNSET_ENV_HELP}
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: {
      scopes: { type: 'string' }, token: { type: 'string' }, 'token-file': { type: 'string' }, 'no-verify': { type: 'boolean' }, subject: { type: 'string' }, claims: { type: 'string' },
      endpoint: { type: 'string' }, capability: { type: 'string' }, args: { type: 'string' }, task: { type: 'boolean' }, apps: { type: 'boolean' }, json: { type: 'boolean' }, ...IO_OPTIONS, ...ALLOW_UNSET_ENV, ...LOG_JSON,
    },
    maxPositionals: 1,
    run: async (v, p) => (await import('./policy.js')).cmdExplain(p[0] ?? 'svc.yaml', v),
  },
  cost: {
    summary: 'say what each endpoint\'s tool listing costs a model: tools, bytes, tokens, per source and per tool',
    usage: `${PROG} cost [manifest] [--endpoint NAME] [--by source|tool] [--json] [--io | --no-io] [--allow-unset-env] [--log-json]`,
    help: `Prints, for each endpoint of the manifest (default ./svc.yaml; the default endpoint first, then
each of endpoints:, on its selection), what its tools/list costs a model before the user has asked anything: the tools it lists, the bytes of
their JSON and the tokens they make (estimated with the o200k encoding of GPT-4o and later; other
models' tokenizers differ by some percent), then each source's share (an openapi source, an upstream,
the manifest's own) or each tool's, largest first. The listing is the one the server sends a caller
shown every tool (a caller with fewer scopes is shown less: explain says how much). A progressive
endpoint lists meta-tools instead: its tools' figures say what it spares (auto: which way its
thresholds take it). A listing served directly past 40 tools or 20,000 tokens is flagged as validate
flags it (LISTING_LARGE). Upstream MCP servers'
tools are listed only when the server connects to them: they are not counted (stderr says so).
Only the policy is read: no backend file, database or program is opened (unless --io).

options:
  --endpoint NAME     only the endpoint NAME of the manifest's endpoints (default: the default
                      endpoint, /mcp /ws /svc)
  --by source|tool    the rows under each endpoint: per source (the default) or per tool
  --json              print {file, tokenizer, advised, endpoints: [{endpoint, paths, discovery,
                      listing: {tools, bytes, tokens, bySource, byTool}, past_advised}]}
  --io, --no-io       open, or not (the default), what the manifest names, read-only, as
                      validate does
${ALLOW_UNSET_ENV_HELP}
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { endpoint: { type: 'string' }, by: { type: 'string' }, json: { type: 'boolean' }, ...IO_OPTIONS, ...ALLOW_UNSET_ENV, ...LOG_JSON },
    maxPositionals: 1,
    run: async (v, p) => (await import('./cost.js')).cmdCost(p[0] ?? 'svc.yaml', v),
  },
  diff: {
    summary: 'say who gains or loses access between two manifests (a CI gate)',
    usage: `${PROG} diff OLD NEW [--json] [--fail-on-widen] [--io | --no-io] [--allow-unset-env] [--log-json]`,
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
  --io, --no-io       open, or not (the default), what the manifests name, read-only, as
                      validate does
${ALLOW_UNSET_ENV_HELP}
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, 'fail-on-widen': { type: 'boolean' }, ...IO_OPTIONS, ...ALLOW_UNSET_ENV, ...LOG_JSON },
    maxPositionals: 2,
    run: async (v, p) => {
      if (p.length < 2) throw new UsageError('give two manifests');
      return (await import('./policy.js')).cmdDiff(p[0]!, p[1]!, v);
    },
  },
  keys: {
    summary: 'rotate the OAuth signing and cookie keys in the durable store',
    usage: `${PROG} keys rotate [manifest] [--allow-unset-env] [--log-json]`,
    help: `Rotates the OAuth signing key and cookie key in the manifest's durable store
(oauth.provider sqlite or postgres): the new keys sign, the previous two of each stay
for verification. Replicas read keys when they start: restart them one at a time.
The manifest is loaded as serve loads it (default ./svc.yaml).

options:
${ALLOW_UNSET_ENV_HELP}
                      (the store's own path or URL must be set)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { ...ALLOW_UNSET_ENV, ...LOG_JSON },
    maxPositionals: 2,
    run: async (v, p) => (await import('./keys.js')).cmdKeys(p[0], p[1] ?? 'svc.yaml', v),
  },
  upstreams: {
    summary: 'show or accept what pinned upstream MCP servers list (the pin lock)',
    usage: `${PROG} upstreams (status [manifest] [--json] | accept NAME [manifest] [--dry-run]) [--allow-unset-env] [--log-json]`,
    help: `The pin lock of upstream MCP servers with pin: true (the lock file beside the manifest:
svc.lock.json for svc.yaml). Each upstream is listed by connecting to it as serve does
(its command or url, headers and auth from the manifest, default ./svc.yaml); no running server
is asked. Listing is connecting, so there is no --no-io here.

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
${ALLOW_UNSET_ENV_HELP}
                      (an upstream sent a placeholder credential will likely refuse it)
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { json: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, ...ALLOW_UNSET_ENV, ...LOG_JSON },
    maxPositionals: 3,
    run: async (v, p) => (await import('./upstreams.js')).cmdUpstreams(p, v),
  },
  import: {
    summary: 'print the tools an OpenAPI document would serve, as manifest entries',
    usage: `${PROG} import openapi DOC [--include-tag T] [--include-operation ID] [--include-path GLOB] [--include-method M] [--exclude-tag T] [--exclude-operation ID] [--exclude-path GLOB] [--exclude-method M] [--naming P] [--base-url U] [--required-scope S] [--auth CREDENTIAL] [--header 'NAME: VALUE'] [--log-json]`,
    help: `Prints, on stdout, the tools an \`openapi\` source with document DOC (YAML or JSON: OpenAPI 3.0,
3.1 or Swagger 2.0) would serve, as a YAML \`tools:\` list to paste into a manifest: served, it is
the same catalog as the source, calling the API the same way when --auth and --header say what the
source's auth and headers say. Operations fastsvc cannot call are listed as warnings on stderr
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
  --auth CREDENTIAL        the credential every tool sends, as a source's auth writes it, in JSON
                           or YAML flow style: '{"static": {"header": "X-Api-Key", "value": "\${API_KEY}"}}'
                           (a secret as \${VAR}, read when the tools are served; never in clear)
  --header 'NAME: VALUE'   a header every tool sends (repeatable; \${VAR} stays a reference)
${LOG_JSON_HELP}
  -h, --help               show this help`,
    options: Object.fromEntries([
      ...['include', 'exclude'].flatMap((side) => ['tag', 'operation', 'path', 'method'].map((k) => [`${side}-${k}`, { type: 'string', multiple: true }])),
      ['required-scope', { type: 'string', multiple: true }],
      ['naming', { type: 'string' }],
      ['base-url', { type: 'string' }],
      ['auth', { type: 'string' }],
      ['header', { type: 'string', multiple: true }],
      ...Object.entries(LOG_JSON),
    ]) as Options,
    maxPositionals: 2,
    run: async (v, p) => (await import('./import-openapi.js')).cmdImport(p, v),
  },
  'hash-password': {
    summary: 'hash a password read on stdin, for oauth.users[].password_hash',
    usage: `${PROG} hash-password [--log-json]`,
    help: `Reads a password on stdin (not echoed on a terminal) and prints its scrypt hash,
for oauth.users[].password_hash.

options:
${LOG_JSON_HELP}
  -h, --help          show this help`,
    options: { ...LOG_JSON },
    maxPositionals: 0,
    run: () => cmdHashPassword(),
  },
};

const USAGE = `usage:
${Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.summary}`).join('\n')}
  ${PROG} help [command]
  ${PROG} --version

"${PROG} COMMAND --help" describes a command. Also installed as "svc".`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  quietOnClosedPipe(name === 'serve');
  if (name === undefined) return usageError(USAGE);
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === undefined) return say(USAGE);
    const cmd = Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
    return cmd ? say(commandHelp(cmd)) : usageError(USAGE, `unknown command ${topic}`);
  }
  if (name === '--version') return say(packageVersion());
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) return usageError(USAGE, name.startsWith('-') ? `unknown option ${name}` : `unknown command ${name}`);

  const usage = `usage: ${cmd.usage}`;
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    return usageError(usage, argError(e as Error & { code?: string }), name);
  }
  // A command other than serve writes human lines only; its log is JSON, so it is silent unless asked.
  if (name !== 'serve' && !parsed.values['log-json']) logger.level = 'silent';
  if (parsed.values.help) return say(commandHelp(cmd));
  if (parsed.positionals.length > cmd.maxPositionals) return usageError(usage, `unexpected argument ${parsed.positionals[cmd.maxPositionals]}`, name);
  const both = Object.keys(cmd.options).find((k) => parsed.values[k] && parsed.values[`no-${k}`]);
  if (both) return usageError(usage, `--${both} and --no-${both} contradict each other: give one`, name);
  try {
    return await cmd.run(parsed.values, parsed.positionals);
  } catch (e) {
    if (e instanceof UsageError) return usageError(usage, e.message, name);
    throw e;
  }
}

/** What `fastsvc help` prints, then what each command's --help prints, in table order (scripts/gen-docs.mjs makes docs/reference/cli.md of it). */
export function helpPages(): { usage: string; commands: { name: string; help: string }[] } {
  return { usage: USAGE, commands: Object.entries(COMMANDS).map(([name, cmd]) => ({ name, help: commandHelp(cmd) })) };
}

function commandHelp(cmd: Command): string {
  return `usage: ${cmd.usage}\n\n${cmd.help}`;
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
