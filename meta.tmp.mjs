import { build } from 'esbuild';
const r = await build({ bundle: true, format: 'esm', platform: 'node', target: 'node20', minifyWhitespace: true, minifySyntax: true, entryPoints: { cli: '/work/main/dist/cli.js' }, outdir: '/tmp/metaout', chunkNames: 'c/[name]-[hash]', splitting: true, external: ['better-sqlite3', 'oidc-provider', 'oidc-provider/*'], metafile: true, write: true, logLevel: 'error' });
const outs = r.metafile.outputs;
for (const [name, o] of Object.entries(outs)) {
  if (name.endsWith('.map')) continue;
  const pk = new Map();
  for (const [inp, v] of Object.entries(o.inputs)) { const m = inp.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/); const k = m ? m[1] : inp.replace(/^.*dist\//, 'dist/'); pk.set(k, (pk.get(k) ?? 0) + v.bytesInOutput); }
  console.log(`\n${name} ${(o.bytes / 1024).toFixed(0)} KiB; imports: ${o.imports.filter(i=>!i.external).map(i => (i.kind === 'dynamic-import' ? 'dyn:' : '') + i.path.replace('/tmp/metaout/', '')).join(' ')}`);
  for (const [k, b] of [...pk].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${(b / 1024).toFixed(0).padStart(5)} KiB ${k}`);
}
