// Files that ship beside the code (package.json, schema/svc.schema.json), found from
// wherever the code runs. Guarantees: the nearest directory above this module that holds
// a package.json — the same answer from src/ (tests), dist/ (tsc) and the bundled CLI's
// chunks (dist/cli-chunks/), so no module depends on how deep it sits; read on first use.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The package's root directory. */
export function packageRoot(): string {
  if (root) return root;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  }
}

/** A file of the package, by its path from the root. */
export const packageFile = (...parts: string[]): string => join(packageRoot(), ...parts);

/** package.json's version. */
export const packageVersion = (): string => JSON.parse(readFileSync(packageFile('package.json'), 'utf8')).version;
