// Generates, from schema/svc.schema.json, src/manifest/types.gen.ts (the manifest's
// TypeScript types), src/manifest/manifest-validator.gen.js (the manifest
// validator) and src/manifest/config-validator.gen.js (the code API's
// SvcServerConfig, definitions/SvcServerConfig), both precompiled by ajv's
// standalone mode so start-up and reload skip compiling the schema. `node scripts/gen-types.mjs` writes both; `--check`
// exits 1 when either is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { compile } from 'json-schema-to-typescript';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = new URL('..', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('schema/svc.schema.json', root), 'utf8'));
const out = new URL('src/manifest/types.gen.ts', root);
const validatorOut = new URL('src/manifest/manifest-validator.gen.js', root);
const configValidatorOut = new URL('src/manifest/config-validator.gen.js', root);

/**
 * The same options src/manifest/validate.ts documents: all errors, strict, schema defaults applied.
 * `ref`: a definition inside the schema to validate against instead of the whole manifest.
 */
export function generateValidator(ref) {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, useDefaults: true, allowUnionTypes: true, code: { source: true, esm: true } });
  ajv.addSchema(schema);
  const fn = ajv.getSchema(ref ? `${schema.$id}${ref}` : schema.$id);
  let code = standaloneCode.default ? standaloneCode.default(ajv, fn) : standaloneCode(ajv, fn);
  // ajv emits require() for its runtime helpers even in ESM mode: turn them into imports.
  const helpers = new Map();
  code = code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9]+)"\)\.default/g, (_m, name) => {
    helpers.set(name, `rt_${name}`);
    return `rt_${name}`;
  });
  if (/require\(/.test(code)) throw new Error('unexpected require() in the generated validator');
  const imports = [...helpers].map(([name, id]) => `import ${id}_module from 'ajv/dist/runtime/${name}.js';\nconst ${id} = ${id}_module.default ?? ${id}_module;`).join('\n');
  return `// GENERATED from schema/svc.schema.json by \`npm run gen:types\`. Do not edit by hand.\n// @ts-nocheck\n${imports}\n${code.replace(/^"use strict";/, '')}\n`;
}

export async function generate() {
  return compile(schema, 'SvcManifest', {
    bannerComment: '// GENERATED from schema/svc.schema.json by `npm run gen:types`. Do not edit by hand.',
    additionalProperties: false,
    style: { singleQuote: true },
    unreachableDefinitions: true,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = [[out, await generate()], [validatorOut, generateValidator()], [configValidatorOut, generateValidator('#/definitions/SvcServerConfig')]];
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
