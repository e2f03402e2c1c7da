// Generates, from schema/svc.schema.json, src/core/manifest-types.gen.ts (the manifest's
// TypeScript types), src/core/validators.gen.js (the manifest's validator,
// `validateManifest`, and the code API's SvcServerConfig's, `validateConfig`, from
// definitions/SvcServerConfig; one module, so the definitions they share are emitted
// once), precompiled by ajv's standalone mode so start-up and reload skip compiling
// the schema; and, the same way,
// src/core/meta-schema-draft-07.gen.js and src/core/meta-schema-2020-12.gen.js, the JSON
// Schema meta-schemas every tool's input_schema is checked against (compiling ajv's
// draft-07 meta-schema at start-up cost ~25 ms). `node scripts/gen-types.mjs` writes them
// all; `--check` exits 1 when one is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { compile } from 'json-schema-to-typescript';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = new URL('..', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('schema/svc.schema.json', root), 'utf8'));
const out = new URL('src/core/manifest-types.gen.ts', root);
const validatorsOut = new URL('src/core/validators.gen.js', root);
const metaOut = { 'draft-07': new URL('src/core/meta-schema-draft-07.gen.js', root), '2020-12': new URL('src/core/meta-schema-2020-12.gen.js', root) };

/** The same options src/manifest/validate-schema.ts documents: all errors, strict, schema defaults applied. */
export function generateValidators() {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, useDefaults: true, allowUnionTypes: true, code: { source: true, esm: true } });
  ajv.addSchema(schema);
  return moduleOf(ajv, { validateManifest: schema.$id, validateConfig: `${schema.$id}#/definitions/SvcServerConfig` }, 'schema/svc.schema.json');
}

/**
 * A JSON Schema meta-schema (ajv's own copy, as ajv.validateSchema() uses it) as a standalone
 * validator with all errors: what src/core/input-schemas.ts checks each input_schema against.
 */
export function generateMetaValidator(draft) {
  const opts = { allErrors: true, strict: true, strictTypes: false, code: { source: true, esm: true } };
  const ajv = draft === '2020-12' ? new Ajv2020(opts) : new Ajv(opts);
  const fn = ajv.getSchema(draft === '2020-12' ? 'https://json-schema.org/draft/2020-12/schema' : 'http://json-schema.org/draft-07/schema');
  return moduleOf(ajv, fn, `ajv's JSON Schema ${draft} meta-schema`);
}

/** ajv's standalone code for `what` (a validator, or export names → schema ids) as an ES module. */
function moduleOf(ajv, what, source) {
  let code = standaloneCode.default ? standaloneCode.default(ajv, what) : standaloneCode(ajv, what);
  // ajv emits require() for its runtime helpers even in ESM mode: turn them into imports.
  const helpers = new Map();
  code = code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9]+)"\)\.default/g, (_m, name) => {
    helpers.set(name, `rt_${name}`);
    return `rt_${name}`;
  });
  if (/require\(/.test(code)) throw new Error('unexpected require() in the generated validator');
  const imports = [...helpers].map(([name, id]) => `import ${id}_module from 'ajv/dist/runtime/${name}.js';\nconst ${id} = ${id}_module.default ?? ${id}_module;`).join('\n');
  // ASCII only: one character outside Latin-1 (a … in a description) makes V8 keep the whole module's source
  // text in two bytes per character, for the life of the process (~0.4 MiB of heap for the manifest validator).
  code = code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `// GENERATED from ${source} by \`npm run gen:types\`. Do not edit by hand.\n// @ts-nocheck\n${imports}\n${code.replace(/^"use strict";/, '')}\n`;
}

/**
 * The schema with every `$ref` to an object standing alone: json-schema-to-typescript turns a `$ref` with
 * siblings (`default`, `description`) into a new numbered copy of the object's interface (ServerSettings1, …),
 * which has its own doc comment anyway. A `$ref` to anything else keeps its `description` (the property's doc).
 */
function bareRefs(node) {
  if (Array.isArray(node)) return node.map(bareRefs);
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    const target = node.$ref.startsWith('#/definitions/') ? schema.definitions[node.$ref.slice('#/definitions/'.length)] : undefined;
    return target?.type === 'object' || !node.description ? { $ref: node.$ref } : { $ref: node.$ref, description: node.description };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, bareRefs(v)]));
}

export async function generate() {
  return compile(bareRefs(schema), 'SvcManifest', {
    bannerComment: '// GENERATED from schema/svc.schema.json by `npm run gen:types`. Do not edit by hand.',
    additionalProperties: false,
    style: { singleQuote: true },
    unreachableDefinitions: true,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = [[out, await generate()], [validatorsOut, generateValidators()],
    ...Object.entries(metaOut).map(([draft, file]) => [file, generateMetaValidator(draft)])];
  if (process.argv.includes('--check')) {
    for (const [file, text] of files) {
      let current = '';
      try {
        current = readFileSync(file, 'utf8');
      } catch {}
      if (current !== text) {
        console.error(`${file.pathname.split('/').slice(-3).join('/')} is stale: run npm run gen:types`);
        process.exitCode = 1;
      }
    }
  } else {
    for (const [file, text] of files) writeFileSync(file, text);
  }
}
