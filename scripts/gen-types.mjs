// Generates src/manifest/types.gen.ts from schema/svc.schema.json.
// `node scripts/gen-types.mjs` writes it; `--check` exits 1 when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { compile } from 'json-schema-to-typescript';

const root = new URL('..', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('schema/svc.schema.json', root), 'utf8'));
const out = new URL('src/manifest/types.gen.ts', root);

export async function generate() {
  return compile(schema, 'SvcManifest', {
    bannerComment: '// GENERATED from schema/svc.schema.json by `npm run gen:types`. Do not edit by hand.',
    additionalProperties: false,
    style: { singleQuote: true },
    unreachableDefinitions: true,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ts = await generate();
  if (process.argv.includes('--check')) {
    const current = readFileSync(out, 'utf8');
    if (current !== ts) {
      console.error('src/manifest/types.gen.ts is stale: run npm run gen:types');
      process.exit(1);
    }
  } else {
    writeFileSync(out, ts);
  }
}
