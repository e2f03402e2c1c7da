// `fastsvc import openapi DOC [filters]`: an OpenAPI document's operations as explicit
// manifest `tools:` entries on stdout.
// Guarantees: the entries are exactly the tools an `openapi` source with the same document,
// filters, naming, base_url, required_scopes, credential (`--auth`) and headers (`--header`)
// expands to (the same code makes both), so pasting them into a manifest serves the same catalog
// and calls the API the same way; each entry's fields are written one per line as JSON values
// (valid YAML, which the manifest's fast reader reads as JSON), with every `${NAME}` in a string
// the document gave written `$${NAME}` so the manifest loader gives back the text as the document
// has it — while the `${VAR}`s of `--auth` and `--header` stay references, read from the
// environment when the tools are served; `--auth` is checked as the manifest checks a source's
// `auth` (its shape; a secret written in clear is refused, never printed) before anything is
// printed; skipped operations are listed on stderr as warnings (and as comments at the top of the
// output); a problem is printed as FILE:LINE:COL: CODE: message (the document's position) and exits
// 1; nothing is written to stdout then.

import type { ErrorObject } from 'ajv';
import { CORE_SCHEMA, load as loadYaml } from 'js-yaml';
import { ManifestError } from '../errors.js';
import type { OpenApiSource, OutboundAuth } from '../core/manifest-types.gen.js';
import { expandOpenApi } from '../openapi/expand.js';
import type { OpenApiTool } from '../openapi/operation.js';
import { manifestValidator } from '../manifest/validate-schema.js';
import { sendable } from '../manifest/openapi-sources.js';
import { outboundAuthProblems, outboundSecretPaths } from '../outbound/credential-checks.js';
import { tell, printProblems, PROG, UsageError } from './output.js';

type Lists = Record<string, string[] | string | boolean | undefined>;

const COMMAND_LINE = '<command line>';

export function importSource(doc: string, v: Lists): OpenApiSource {
  const list = (k: string) => (v[k] as string[] | undefined)?.length ? (v[k] as string[]) : undefined;
  const filter = (side: 'include' | 'exclude') => {
    const f = {
      ...(list(`${side}-operation`) && { operations: list(`${side}-operation`) }),
      ...(list(`${side}-tag`) && { tags: list(`${side}-tag`) }),
      ...(list(`${side}-path`) && { paths: list(`${side}-path`) }),
      ...(list(`${side}-method`) && { methods: list(`${side}-method`)!.map((m) => m.toUpperCase()) }),
    };
    return Object.keys(f).length ? (f as OpenApiSource['include']) : undefined;
  };
  const include = filter('include');
  const exclude = filter('exclude');
  const auth = typeof v.auth === 'string' ? credential(v.auth) : undefined;
  const headers = list('header') && Object.fromEntries(list('header')!.map(header));
  const source: OpenApiSource = {
    name: 'import', document: doc,
    naming: typeof v.naming === 'string' ? v.naming : '{operationId}',
    required_scopes: list('required-scope') ?? [],
    ...(typeof v['base-url'] === 'string' && { base_url: v['base-url'] }),
    ...(include && { include }),
    ...(exclude && { exclude }),
    ...(auth && { auth }),
    ...(headers && { headers }),
  };
  checkAsSource(source);
  return source;
}

/** --auth: the credential as a source's `auth` writes it, in JSON or YAML flow style. */
function credential(text: string): OutboundAuth {
  let value: unknown;
  try {
    value = loadYaml(text, { schema: CORE_SCHEMA });
  } catch (e) {
    throw new UsageError(`--auth: not JSON or YAML (${(e as Error).message.split('\n')[0]})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--auth: give the credential as a mapping, as a source\'s auth is written: --auth \'{"static": {"bearer": "${API_TOKEN}"}}\'');
  return value as OutboundAuth;
}

/** --header 'Name: value'. */
function header(text: string): [string, string] {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new UsageError(`--header: ${JSON.stringify(text)} is not "Name: value"`);
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

/** The source's credential and headers checked as the manifest checks them: the schema, the credential's own rules, and no secret written in clear. */
function checkAsSource(source: OpenApiSource): void {
  // A copy: the validator fills defaults in, and what is printed is what was given.
  const manifest = { version: 1, name: 'import', openapi: [structuredClone(source)] };
  if (!manifestValidator(manifest)) {
    const first = (manifestValidator.errors ?? [])[0] as ErrorObject;
    const at = first.instancePath.replace(/^\/openapi\/0\/?/, '');
    const [flag, rest] = at.startsWith('auth') ? ['--auth', at.slice('auth'.length)] : at.startsWith('headers') ? ['--header', at.slice('headers'.length)] : [`--${at}`, ''];
    const extra = first.keyword === 'additionalProperties' ? ` (${(first.params as { additionalProperty: string }).additionalProperty})` : '';
    throw new UsageError(`${flag}${rest ? ` ${rest}` : ''}: ${first.message ?? 'is not valid'}${extra}`);
  }
  const problem = source.auth && outboundAuthProblems(source.auth)[0];
  if (problem) throw new UsageError(`--auth${problem.path.length ? ` ${problem.path.join('.')}` : ''}: ${problem.message}`);
  for (const path of source.auth ? outboundSecretPaths(source.auth) : []) {
    const value = path.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], source.auth);
    if (typeof value !== 'string' || !value.startsWith('${')) {
      throw new UsageError(`--auth: ${path.join('.')} is written in clear; write \${VAR} or use ${String(path[path.length - 1])}_file (the value is read from the environment when the tools are served)`);
    }
  }
}

export function cmdImport(positionals: string[], values: Lists): number {
  const [kind, doc] = positionals;
  if (kind !== 'openapi' || doc === undefined) throw new UsageError(`give the kind and the document: ${PROG} import openapi DOC`);
  const bad = ((values['include-method'] ?? []) as string[]).concat((values['exclude-method'] ?? []) as string[]).find((m) => !/^(GET|POST|PUT|PATCH|DELETE)$/i.test(m));
  if (bad !== undefined) throw new UsageError(`--include-method/--exclude-method: ${bad} is not one of GET POST PUT PATCH DELETE`);
  const source = importSource(doc, values);
  let x;
  try {
    x = sendable(expandOpenApi([source], { file: COMMAND_LINE, baseDir: process.cwd(), locate: () => ({ line: 1, col: 1 }) }), [source]);
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    const mine = e.problems.filter((p) => p.file === COMMAND_LINE);
    for (const p of mine) tell('import', `${p.code}: ${p.message.replace(/^openapi import: /, '')}${p.code === 'OPENAPI_CONFIG' && /base_url/.test(p.message) ? ' (--base-url)' : ''}`);
    printProblems(e.problems.filter((p) => p.file !== COMMAND_LINE));
    return 1;
  }
  for (const w of x.warnings) process.stderr.write(`${doc}: warning: ${w.code}: ${w.message.replace(/^openapi import: /, '')}\n`);
  process.stdout.write(toolsYaml(x.tools, `${PROG} import openapi ${doc}`, x.warnings.map((w) => w.message.replace(/^openapi import: /, '')), source));
  return 0;
}

/**
 * The tools as a YAML `tools:` list, each field one line of JSON. `given`: the credential and
 * headers the command line gave, whose `${VAR}`s stay references (the document's are escaped).
 */
export function toolsYaml(tools: readonly OpenApiTool[], made: string, skipped: readonly string[], given: Pick<OpenApiSource, 'auth' | 'headers'> = {}): string {
  const lines = [`# ${tools.length} tool${tools.length === 1 ? '' : 's'} written by ${made}`];
  for (const s of skipped) lines.push(`# skipped: ${s.replace(/\n/g, ' ')}`);
  lines.push('tools:');
  const verbatim = new WeakSet<object>();
  const keep = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || verbatim.has(v)) return;
    verbatim.add(v);
    for (const x of Object.values(v)) keep(x);
  };
  keep(given.auth);
  for (const t of tools) {
    const headers = t.http.headers;
    // In `this` (the holder) of each value: the command line's credential, or a header it gave.
    const escape = function (this: unknown, key: string, v: unknown): unknown {
      if (typeof v !== 'string' || !v.includes('${')) return v;
      if (verbatim.has(this as object) || (this === headers && given.headers && Object.hasOwn(given.headers, key))) return v;
      return v.replace(VAR, (m) => '$' + m);
    };
    let first = true;
    for (const [k, v] of Object.entries(t)) {
      lines.push(`${first ? '  - ' : '    '}${k}: ${JSON.stringify(v, escape)}`);
      first = false;
    }
  }
  return lines.join('\n') + '\n';
}

/** What the manifest loader reads as a variable (src/manifest/load.ts): each occurrence gets one more `$`, which the loader takes away. */
const VAR = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
