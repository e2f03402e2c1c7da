// `fastsvc init [dir]`: a commented starter manifest. Guarantees: dir/svc.yaml is written only
// when there is none (never overwritten, exit 1 then); its first line points editors at the JSON
// schema shipped in this package, by a path relative to the new file.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { packageFile } from '../util/package-root.js';
import { starterManifest } from './starter.js';
import { tell, PROG } from './output.js';

const SCHEMA_FILE = packageFile('schema', 'svc.schema.json');

export function cmdInit(dir: string): number {
  const file = join(dir, 'svc.yaml');
  if (existsSync(file)) return tell('init', `${file} already exists; not overwriting`);
  mkdirSync(dir, { recursive: true });
  // This package's own schema, relative to the new file: ./node_modules/fastsvc/schema/… once the package is installed in the project.
  const ref = relative(resolve(dir), SCHEMA_FILE).split(sep).join('/');
  writeFileSync(file, starterManifest(ref.startsWith('.') ? ref : './' + ref), { flag: 'wx' });
  process.stdout.write(`wrote ${file}\nnext: npx ${PROG} validate ${file} && npx ${PROG} serve ${file}\n`);
  return 0;
}
