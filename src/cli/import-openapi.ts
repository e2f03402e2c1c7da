// `fastsvc import openapi DOC [filters]`: an OpenAPI document's operations as explicit
// manifest `tools:` entries on stdout.
// Guarantees: the entries are exactly the tools an `openapi` source with the same document,
// filters, naming, base_url and required_scopes expands to (the same code makes both), so
// pasting them into a manifest serves the same catalog; each entry's fields are written one
// per line as JSON values (valid YAML, which the manifest's fast reader reads as JSON), with
// every `${NAME}` in a string written `$${NAME}` so the manifest loader gives back the text as the
// document has it; skipped operations are listed on stderr as warnings (and as comments
// at the top of the output); a problem is printed as FILE:LINE:COL: CODE: message (the
// document's position) and exits 1; nothing is written to stdout then.

import { ManifestError } from '../errors.js';
import type { OpenApiSource } from '../core/manifest-types.gen.js';
import { expandOpenApi } from '../openapi/expand.js';
import type { OpenApiTool } from '../openapi/operation.js';
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
  return {
    name: 'import', document: doc,
    naming: typeof v.naming === 'string' ? v.naming : '{operationId}',
    required_scopes: list('required-scope') ?? [],
    ...(typeof v['base-url'] === 'string' && { base_url: v['base-url'] }),
    ...(include && { include }),
    ...(exclude && { exclude }),
  };
}

export function cmdImport(positionals: string[], values: Lists): number {
  const [kind, doc] = positionals;
  if (kind !== 'openapi' || doc === undefined) throw new UsageError(`give the kind and the document: ${PROG} import openapi DOC`);
  const bad = ((values['include-method'] ?? []) as string[]).concat((values['exclude-method'] ?? []) as string[]).find((m) => !/^(GET|POST|PUT|PATCH|DELETE)$/i.test(m));
  if (bad !== undefined) throw new UsageError(`--include-method/--exclude-method: ${bad} is not one of GET POST PUT PATCH DELETE`);
  let x;
  try {
    x = expandOpenApi([importSource(doc, values)], { file: COMMAND_LINE, baseDir: process.cwd(), locate: () => ({ line: 1, col: 1 }) });
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    const mine = e.problems.filter((p) => p.file === COMMAND_LINE);
    for (const p of mine) tell('import', `${p.code}: ${p.message.replace(/^openapi import: /, '')}${p.code === 'OPENAPI_CONFIG' && /base_url/.test(p.message) ? ' (--base-url)' : ''}`);
    printProblems(e.problems.filter((p) => p.file !== COMMAND_LINE));
    return 1;
  }
  for (const w of x.warnings) process.stderr.write(`${doc}: warning: ${w.code}: ${w.message.replace(/^openapi import: /, '')}\n`);
  process.stdout.write(toolsYaml(x.tools, `${PROG} import openapi ${doc}`, x.warnings.map((w) => w.message.replace(/^openapi import: /, ''))));
  return 0;
}

/** The tools as a YAML `tools:` list, each field one line of JSON. */
export function toolsYaml(tools: readonly OpenApiTool[], made: string, skipped: readonly string[]): string {
  const lines = [`# ${tools.length} tool${tools.length === 1 ? '' : 's'} written by ${made}`];
  for (const s of skipped) lines.push(`# skipped: ${s.replace(/\n/g, ' ')}`);
  lines.push('tools:');
  for (const t of tools) {
    let first = true;
    for (const [k, v] of Object.entries(t)) {
      lines.push(`${first ? '  - ' : '    '}${k}: ${JSON.stringify(v, escapeVars)}`);
      first = false;
    }
  }
  return lines.join('\n') + '\n';
}

/** What the manifest loader reads as a variable (src/manifest/load.ts): each occurrence gets one more `$`, which the loader takes away. */
const VAR = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function escapeVars(_key: string, v: unknown): unknown {
  return typeof v === 'string' && v.includes('${') ? v.replace(VAR, (m) => '$' + m) : v;
}
