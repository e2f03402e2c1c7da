// Generates the three reference pages that must not drift from the code: docs/reference/manifest.md
// from schema/svc.schema.json (every field: path, type, default, whether required, description),
// docs/reference/errors.md from the error registry (MANIFEST_CODES and REQUEST_CODES in src/errors.ts) and the warnings (WARNINGS in src/manifest/warnings.ts),
// and docs/reference/cli.md from the command table's help text (helpPages() in src/cli/main.ts: what
// `fastsvc help` and each `fastsvc COMMAND --help` print). `node scripts/gen-docs.mjs` (npm run gen:docs)
// writes them; `--check` writes nothing and exits 1 naming each stale page; `--schema FILE` reads
// another schema instead (test/unit/docs-reference.test.ts shows --check notices a changed description).
// The TypeScript sources are read through tsx (a dev dependency, as the tests use it), not from dist/:
// the pages follow the sources as they are, so --check needs no build first and cannot pass against a
// stale build. Each page opens with an HTML comment and a visible line saying it is generated, from
// what, and how to regenerate it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = new URL('..', import.meta.url);
const SCHEMA = 'schema/svc.schema.json';
export const PAGES = { manifest: 'docs/reference/manifest.md', errors: 'docs/reference/errors.md', cli: 'docs/reference/cli.md' };

/** What the pages are made from: the schema (SCHEMA, or `schemaFile`), the error registry and the command table. */
async function inputs({ schemaFile } = {}) {
  const schema = JSON.parse(readFileSync(schemaFile ?? new URL(SCHEMA, root), 'utf8'));
  const { MANIFEST_CODES, REQUEST_CODES } = await tsImport('../src/errors.ts', import.meta.url);
  const { WARNINGS } = await tsImport('../src/manifest/warnings.ts', import.meta.url);
  const { helpPages } = await tsImport('../src/cli/main.ts', import.meta.url);
  return { schema, codes: { manifest: MANIFEST_CODES, requests: REQUEST_CODES, warnings: WARNINGS }, help: helpPages() };
}

/** Every page as [path relative to the repository, text]. */
export function pages({ schema, codes, help }) {
  return [[PAGES.manifest, manifestPage(schema)], [PAGES.errors, errorsPage(codes)], [PAGES.cli, cliPage(help)]];
}

/** The paths of the pages whose file is missing or differs from its generated text. */
export function stalePages(generated) {
  return generated.filter(([path, text]) => {
    try {
      return readFileSync(new URL(path, root), 'utf8') !== text;
    } catch {
      return true;
    }
  }).map(([path]) => path);
}

/** The page's first lines: an HTML comment and a visible sentence saying it is generated, from what, and how to change it. */
function banner(title, source, sourceLink, edit) {
  return `<!-- GENERATED from ${source} by scripts/gen-docs.mjs: do not edit by hand; ${edit}, then run \`npm run gen:docs\`. -->\n` +
    `# ${title}\n\n` +
    `*This page is generated from ${sourceLink} by \`npm run gen:docs\`: to change it, ${edit} and regenerate (a test fails while it is stale).*`;
}

// ---- Markdown ----

/** Description text as Markdown: its `code spans` kept; elsewhere <, > and * are literal. In a table cell, | is escaped. */
function md(text, inCell = false) {
  const out = text.replace(/\s*\n\s*/g, ' ').split(/(`[^`]*`)/).map((part, i) => (i % 2 ? part : part.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\*/g, '\\*'))).join('');
  return inCell ? cell(out) : out;
}

/** Markdown for a table cell: | escaped (also inside code spans, as GitHub's tables read it). */
function cell(markdown) {
  return markdown.replace(/\|/g, '\\|');
}

/** A code span for any text (a pattern may hold backticks). */
function code(text) {
  const ticks = '`'.repeat(Math.max(0, ...[...String(text).matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  return ticks.length > 1 ? `${ticks} ${text} ${ticks}` : `\`${text}\``;
}

/** GitHub's anchor for a heading's text. */
function slug(heading) {
  return heading.replace(/`/g, '').toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The first sentence of a description (for an index line). */
function firstSentence(text) {
  const m = /^.*?[.:](?=\s|$)/s.exec(text);
  return (m ? m[0] : text).replace(/:$/, '.');
}

// ---- docs/reference/manifest.md ----

/** Top-level keys in the order an operator meets them (starter manifest first); any other key follows in schema order. */
const TOP_ORDER = ['version', 'name', 'description', 'base_url', 'server', 'auth', 'profile', 'tools', 'resources', 'prompts', 'routes', 'oauth', 'limits', 'audit', 'cache', 'upstreams'];

function manifestPage(schema) {
  const defs = schema.definitions ?? {};
  const refName = (node) => (typeof node?.$ref === 'string' && node.$ref.startsWith('#/definitions/') ? node.$ref.slice('#/definitions/'.length) : undefined);
  const hasProps = (node) => !!node?.properties && Object.keys(node.properties).length > 0;

  // Each definition the manifest reaches, with how many places refer to it: one used in two places or more is a shared
  // type, documented once under "Shared types" and linked; one used once is documented where it is used.
  const uses = new Map();
  const countRefs = (node) => {
    if (Array.isArray(node)) return node.forEach(countRefs);
    if (!node || typeof node !== 'object') return;
    const name = refName(node);
    if (name) {
      uses.set(name, (uses.get(name) ?? 0) + 1);
      if (uses.get(name) === 1) countRefs(defs[name]);
    }
    for (const [k, v] of Object.entries(node)) if (!['default', 'examples', 'const', 'enum'].includes(k)) countRefs(k === 'properties' ? Object.values(v) : v);
  };
  countRefs(Object.values(schema.properties));
  const shared = (name) => uses.get(name) > 1;
  const sharedNames = [...uses.keys()].filter(shared).sort();

  // Every section's anchor is registered before any text is written, so every link is checked.
  const anchors = new Map();
  const anchor = (key, heading) => {
    const id = slug(heading);
    if ([...anchors.values()].includes(id)) throw new Error(`two sections would share the anchor #${id}`);
    anchors.set(key, id);
  };
  const link = (key) => {
    if (!anchors.has(key)) throw new Error(`no section for ${key}`);
    return `#${anchors.get(key)}`;
  };

  /** The object schemas a field holds (itself, its items, its alternatives) that get a section of their own, with their paths. */
  const objectsOf = (node, path) => {
    const name = refName(node);
    if (name && shared(name)) return [];
    const s = name ? defs[name] : node;
    if (hasProps(s)) return [[path, s]];
    if (s.items) return objectsOf(s.items, `${path}[]`);
    // A map whose values are objects (upstreams[].expose.overrides): its value gets the section, under NAME.*.
    if (s.additionalProperties && typeof s.additionalProperties === 'object') return objectsOf(s.additionalProperties, `${path}.*`);
    return [...(s.oneOf ?? []), ...(s.anyOf ?? [])].flatMap((alt) => objectsOf(alt, path));
  };

  /** A field's own description, else its definition's. */
  const describe = (node) => node.description ?? defs[refName(node)]?.description ?? '';

  // The sections: one per object schema, in page order; `rows` is the prefix its table shows, `nest` the path below it.
  const plan = (list, path, s, depth, rows, nest, intro) => {
    anchor(path, code(path));
    list.push({ path, s, depth, rows, nest, intro: intro && intro !== s.description ? intro : undefined });
    for (const [key, prop] of Object.entries(s.properties)) {
      for (const [sub, obj] of objectsOf(prop, `${nest}${key}`)) plan(list, sub, obj, depth + 1, `${sub}.`, `${sub}.`, describe(prop));
    }
  };
  anchor('top', 'Top level');
  const keys = [...TOP_ORDER.filter((k) => schema.properties[k]), ...Object.keys(schema.properties).filter((k) => !TOP_ORDER.includes(k))];
  const sections = [];
  for (const key of keys) {
    for (const [path, obj] of objectsOf(schema.properties[key], key)) plan(sections, path, obj, 0, `${path}.`, `${path}.`, describe(schema.properties[key]));
  }
  anchor('shared', 'Shared types');
  const sharedSections = [];
  for (const name of sharedNames) {
    if (hasProps(defs[name])) plan(sharedSections, name, defs[name], 1, '', `${name}.`);
    else anchor(name, code(name));
  }

  const usedAt = new Map();
  const constraints = (s) => {
    const out = [];
    if (s.minimum !== undefined && s.maximum !== undefined) out.push(`${s.minimum} to ${s.maximum}`);
    else if (s.minimum !== undefined) out.push(`at least ${s.minimum}`);
    else if (s.maximum !== undefined) out.push(`at most ${s.maximum}`);
    if (s.minLength === 1 && s.maxLength === undefined) out.push('not empty');
    else if (s.minLength !== undefined && s.maxLength !== undefined) out.push(`${s.minLength} to ${s.maxLength} characters`);
    else if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
    else if (s.minLength !== undefined) out.push(`at least ${s.minLength} characters`);
    if (s.pattern) out.push(`matching ${code(s.pattern)}`);
    if (s.minItems) out.push(`at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`);
    if (s.uniqueItems) out.push('no duplicates');
    return out;
  };
  const isMap = (s) => !hasProps(s) && !!s.additionalProperties && typeof s.additionalProperties === 'object';
  /** The JSON kind of a shared type, shown beside its link. */
  const kind = (s) => ([].concat(s.type ?? []).includes('array') ? 'list' : isMap(s) ? 'map' : [].concat(s.type ?? []).join(' or '));

  /** A field's type in words, linking the sections of the objects it holds and the shared types it uses (noted in usedAt). */
  const typeOf = (node, path) => {
    const name = refName(node);
    if (name) {
      if (!shared(name)) return typeOf(defs[name], path);
      usedAt.set(name, [...(usedAt.get(name) ?? []), path]);
      return hasProps(defs[name]) ? `[${name}](${link(name)})` : `${kind(defs[name])} ([${name}](${link(name)}))`;
    }
    if (node.const !== undefined) return code(JSON.stringify(node.const));
    if (node.enum) {
      const values = node.enum.map((v) => code(typeof v === 'string' ? v : JSON.stringify(v)));
      return values.length === 1 ? values[0] : `one of ${values.join(', ')}`;
    }
    const alts = node.oneOf ?? node.anyOf;
    if (alts) return alts.map((alt) => typeOf(alt, path)).join(' **or** ');
    const kinds = [].concat(node.type ?? []);
    let words;
    if (kinds.length === 0) words = 'any JSON value';
    else if (kinds.includes('array')) {
      const item = node.items ? typeOf(node.items, `${path}[]`) : undefined;
      words = item === undefined ? 'list' : /,|\*\*or\*\*/.test(item) ? `list of (${item})` : `list of ${item}`;
    } else if (hasProps(node)) words = `object (see [${code(path)}](${link(path)}))`;
    else if (isMap(node)) {
      const key = node.propertyNames?.pattern ? `name matching ${code(node.propertyNames.pattern)}` : 'name';
      words = `map of ${key} → ${typeOf(node.additionalProperties, `${path}.*`)}`;
    } else words = kinds.join(' or ');
    const more = constraints(node);
    return more.length ? `${words}, ${more.join(', ')}` : words;
  };

  /** A default as YAML flow: strings quoted, keys bare. */
  const value = (v) => {
    if (Array.isArray(v)) return `[${v.map(value).join(', ')}]`;
    if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}: ${value(x)}`).join(', ')}}`;
    return JSON.stringify(v);
  };

  const HEADER = ['Field', 'Type', 'Default', 'Description'];
  const tableOf = (s, rows, nest) => table(HEADER, Object.entries(s.properties).map(([key, prop]) => {
    const required = (s.required ?? []).includes(key) ? ' **(required)**' : '';
    const def = prop.default !== undefined ? prop.default : defs[refName(prop)]?.default;
    const examples = prop.examples ? ` Examples: ${prop.examples.map((e) => code(value(e))).join(', ')}.` : '';
    return [`${code(`${rows}${key}`)}${required}`, cell(typeOf(prop, `${nest}${key}`)), def === undefined ? '' : cell(code(value(def))), md(describe(prop) + examples, true)];
  }));

  // Every table first (each notes where the shared types it links are used), then the text around them.
  const topTable = tableOf({ ...schema, properties: Object.fromEntries(keys.map((k) => [k, schema.properties[k]])) }, '', '');
  const tables = new Map([...sections, ...sharedSections].map((section) => [section, tableOf(section.s, section.rows, section.nest)]));
  const scalarTypes = new Map(sharedNames.filter((n) => !hasProps(defs[n])).map((n) => [n, typeOf(defs[n], n)]));

  /** A section: ## for a top-level key, one more # per level down. */
  const heading = (depth, path) => `${'#'.repeat(Math.min(2 + depth, 6))} ${code(path)}`;
  const usedAtLine = (name) => `Used at ${[...new Set(usedAt.get(name))].map(code).join(', ')}.`;
  const sectionText = (section) => [
    heading(section.depth, section.path),
    ...[section.intro, section.s.description].filter(Boolean).map((d) => md(d)),
    ...(sharedNames.includes(section.path) ? [usedAtLine(section.path)] : []),
    tables.get(section),
    ...(section.s.additionalProperties === false ? [] : ['Keys other than these are allowed.']),
  ].join('\n\n');
  const sharedText = sharedNames.map((name) => {
    const section = sharedSections.find((sec) => sec.path === name);
    if (section) return [section, ...sharedSections.filter((sec) => sec.path.startsWith(`${name}.`))].map(sectionText).join('\n\n');
    return [heading(1, name), md(defs[name].description ?? ''), `Type: ${scalarTypes.get(name)}.`, usedAtLine(name)].join('\n\n');
  });

  const index = [
    `- [Top level](${link('top')})`,
    ...keys.flatMap((key) => {
      const own = schema.properties[key];
      const name = refName(own);
      if (name && shared(name)) return [`- ${code(key)}: see [${name}](${link(name)})`];
      const roots = objectsOf(own, key).map(([p]) => p);
      return sections.filter((sec) => roots.some((p) => sec.path === p || sec.path.startsWith(`${p}.`)))
        .map((sec) => `${'  '.repeat(sec.depth)}- [${code(sec.path)}](${link(sec.path)})${sec.depth === 0 ? ` — ${md(firstSentence(describe(own)))}` : ''}`);
    }),
    `- [Shared types](${link('shared')}): ${sharedNames.map((n) => `[${n}](${link(n)})`).join(', ')}`,
  ];

  const intro = `How to read it: ${code('a.b')} is key ${code('b')} inside ${code('a')}; ${code('a[]')} is an item of the list ${code('a')}. ` +
    `**(required)** means the key must be present whenever its parent is. The default is what applies when the key is absent. ` +
    `A type used in several places (a scope, a secret, a quota, a backend) is described once under [Shared types](${link('shared')}). ` +
    `In any string value, ${code('${VAR}')} and ${code('${VAR:-default}')} are replaced from the environment when the manifest is read (${code('$${')} writes a literal ${code('${')}). ` +
    `For a guided tour, see [the manifest guide](../manifest.md); to check a file, run ${code('fastsvc validate')} ([command-line reference](cli.md)).`;

  return [
    banner('Manifest reference', 'schema/svc.schema.json', '[`schema/svc.schema.json`](../../schema/svc.schema.json)', "edit the schema's descriptions"),
    intro,
    `## Contents\n\n${index.join('\n')}`,
    `## Top level\n\n${md(schema.description)}\n\n${topTable}`,
    ...sections.map(sectionText),
    '## Shared types\n\nEach is documented once; the fields above link here.',
    ...sharedText,
  ].join('\n\n') + '\n';
}

// ---- docs/reference/errors.md ----

function errorsPage(codes) {
  const rows = (group) => Object.entries(group).map(([name, info]) => [code(name), String(info.status), String(info.rpc), md(info.doc, true)]);
  const header = ['Code', 'HTTP status', 'JSON-RPC code', 'Meaning'];
  return [
    banner('Error reference', 'the error registry in src/errors.ts', 'the error registry in [`src/errors.ts`](../../src/errors.ts)', 'edit the `doc` line of a code there'),
    'Every error fastsvc raises on purpose carries one of these stable codes; the message text may change, the code does not. ' +
      'In the tables, `data` is the error\'s machine-readable detail.',
    '## How errors look',
    [
      '- **A manifest problem** (`fastsvc validate`, `fastsvc serve`, a reload) is one line, like a compiler\'s: `FILE:LINE:COL: CODE: message` ' +
        '(`fastsvc validate --json` lists them as `problems`, each with `code`, `message` and, where known, `path`, `file`, `line` and `col`). A reload with a problem changes nothing: the last good manifest keeps serving.',
      '- **On HTTP** (`/svc`, a refused `/ws` upgrade, and any HTTP-level answer such as a missing token) the status is the code\'s HTTP status and the body is `{"error": {"code", "message", …}}`, with `data`\'s fields inside `error`.',
      '- **On `/mcp` and `/ws`** (JSON-RPC) it is a JSON-RPC error with the code\'s JSON-RPC code, the message, and `data` holding `code` and the detail. ' +
        'On `/mcp`, a single request refused for a missing scope is also answered 403, and one over its quota 429 with `Retry-After`.',
      '- **Inside an MCP `tools/call`**, a backend failure (`BACKEND_FAILED`, `BACKEND_TIMEOUT`) — and, from protocol 2025-11-25 on, invalid arguments (`INVALID_INPUT`) — is not a JSON-RPC error but a tool result with `isError: true`: ' +
        'its text is `CODE: message` and its `structuredContent.error` the same object as on HTTP.',
      '- **A 401** carries `WWW-Authenticate: Bearer` with the scopes to ask for (and `resource_metadata` in OAuth mode); **a 403 for a missing scope** carries `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` naming every scope the operation needs. See [authentication](../authentication.md) and [access](../access.md).',
      '- **The OAuth endpoints** (`/token`, `/register`, `/authorize`, …) answer in OAuth\'s own form, `{"error": "invalid_grant", "error_description": "…"}`, not with these codes.',
    ].join('\n'),
    '## Manifest problems',
    'Found while a manifest is read and checked: they stop `fastsvc validate` and `fastsvc serve`, and a reload that meets one changes nothing. ' +
      'A few can also answer a request, with the status below: an `input_schema` that is refused only when first compiled, at its first call, answers `INPUT_SCHEMA_INVALID`.',
    table(header, rows(codes.manifest)),
    '## Request errors',
    'The answer to a request that is refused or fails.',
    table(header, rows(codes.requests)),
    '## Warnings',
    '`fastsvc validate` also gives advice that does not fail it (exit 0): `FILE:LINE:COL: warning: CODE: message`, and `warnings` in `--json`. ' +
      'Writing the setting it asks about explicitly is the answer that silences it.',
    table(['Code', 'Meaning'], Object.entries(codes.warnings).map(([name, doc]) => [code(name), md(doc, true)])),
  ].join('\n\n') + '\n';
}

// ---- docs/reference/cli.md ----

function cliPage(help) {
  const title = (name) => `fastsvc ${name}`;
  const synopsis = (text) => /^usage: (.*)$/m.exec(text)[1];
  const fence = (text) => `\`\`\`text\n${text}\n\`\`\``;
  return [
    banner('Command-line reference', 'the command table in src/cli/main.ts', 'the command table in [`src/cli/main.ts`](../../src/cli/main.ts)', 'edit the help text there'),
    'The command is `fastsvc`, also installed as `svc`. Run it with `npx fastsvc …` in a project that installed the package (nothing is downloaded), or `node dist/cli.js …` in this repository. ' +
      'Each section below is exactly what the command prints for `--help`.',
    '- Every command answers `-h`/`--help` with its usage (exit 0); an unknown option or a surplus argument prints one line naming it, then the usage (exit 2).\n' +
      '- `serve` prints only `listening on http://HOST:PORT` on stdout; its log goes to stderr as JSON lines. Every other command writes human lines only (`--log-json` adds the log\'s JSON lines on stderr).\n' +
      '- A failure is one line, `FILE:LINE:COL: CODE: message` or `fastsvc: CODE: message` (exit 1), never a stack trace; the codes are in the [error reference](errors.md).\n' +
      '- A reader that goes away (`fastsvc explain … | head -1`) ends a command quietly with exit 0, as most Unix tools do; `serve` goes on serving.\n' +
      '- The switch for opening what a manifest names is `--io`/`--no-io` on `validate` (on by default), `explain` and `diff` (off by default); `--allow-unset-env` is taken by every command that reads a manifest except `serve`.',
    `## Contents\n\n${[`- [Usage](#usage)`, ...help.commands.map(({ name, help: text }) => `- [${code(title(name))}](#${slug(title(name))}): ${code(synopsis(text))}`)].join('\n')}`,
    `## Usage\n\n\`fastsvc help\` (or \`fastsvc --help\`) prints:\n\n${fence(help.usage)}`,
    ...help.commands.map(({ name, help: text }) => `## ${code(title(name))}\n\n${code(`${title(name)} --help`)} prints:\n\n${fence(text)}`),
  ].join('\n\n') + '\n';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf('--schema');
  const generated = pages(await inputs({ schemaFile: at === -1 ? undefined : process.argv[at + 1] }));
  if (process.argv.includes('--check')) {
    for (const path of stalePages(generated)) {
      console.error(`${path} is stale: run npm run gen:docs`);
      process.exitCode = 1;
    }
  } else {
    for (const [path, text] of generated) {
      const file = new URL(path, root);
      mkdirSync(dirname(fileURLToPath(file)), { recursive: true });
      writeFileSync(file, text);
    }
  }
}
