// What Node.js will load a module handler file as, and whether the file's own syntax says otherwise —
// the one mistake a module backend's file makes that only shows when serve imports it. Guarantees:
// reads the file and the package.json files above it, runs nothing (so `fastsvc validate` can tell);
// the format is Node's (20.19 and later): .mjs an ES module, .cjs CommonJS, .js whatever the nearest
// package.json's "type" says — and with no package.json or no "type", Node detects the syntax itself, so
// either loads; a problem is named only when the format is fixed and the syntax is unambiguous — an
// `export`/`import` statement at the start of a line in a file loaded as CommonJS ("type": "commonjs",
// npm init's default), or `module.exports`, `exports.NAME =` or `require(` without any such statement in a
// file loaded as an ES module — and says how to fix it.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ESM_SYNTAX = /^[ \t]*(export[ \t]+(default\b|function\b|async\b|const\b|let\b|var\b|class\b|\{|\*)|import[ \t]*[\w*{'"])/m;
const CJS_SYNTAX = /\bmodule\.exports\b|^[ \t]*exports\.[A-Za-z_$][\w$]*[ \t]*=|\brequire[ \t]*\(/m;

/** How Node loads `file` — 'detected': by its syntax (no "type" decides) — and the package.json that decides it. */
export function loadedAs(file: string): { format: 'module' | 'commonjs' | 'detected'; decidedBy?: string } {
  if (file.endsWith('.mjs')) return { format: 'module' };
  if (file.endsWith('.cjs')) return { format: 'commonjs' };
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      let type: unknown;
      try {
        type = (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type;
      } catch {
        type = undefined; // Node refuses an unreadable package.json at load; that error will say so
      }
      return { format: type === 'module' ? 'module' : type === 'commonjs' ? 'commonjs' : 'detected', decidedBy: pkg };
    }
    if (path.dirname(dir) === dir) return { format: 'detected' };
  }
}

/** Why `file` (shown as `rel`) will not load as Node loads it, or undefined when its syntax agrees (or says nothing clear). */
export function formatProblem(file: string, rel: string): string | undefined {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return undefined; // the caller reports a missing file
  }
  const { format, decidedBy } = loadedAs(file);
  const why = decidedBy ? `the nearest package.json (${decidedBy}) says "type": "${format}"` : 'its extension says so';
  const esm = ESM_SYNTAX.test(source);
  if (format === 'commonjs' && esm) {
    return `${rel} uses ES module syntax (export/import) but Node loads it as CommonJS: ${why}; rename it ${rel.replace(/\.js$/, '')}.mjs, or set "type": "module" in that package.json, or write module.exports`;
  }
  if (format === 'module' && !esm && CJS_SYNTAX.test(source)) {
    return `${rel} uses CommonJS (module.exports, exports or require) but Node loads it as an ES module: ${why}; rename it ${rel.replace(/\.js$/, '')}.cjs, or write export function …`;
  }
  return undefined;
}
