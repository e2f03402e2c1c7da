// The floors of src/, kept: README.md's Layout lists the rooms of src/ (folders, and files at its root) top
// floor first, one floor a line, and every import in src/ — `import … from`, `export … from`, `import '…'`,
// `import('…')` with a literal, read by TypeScript's own pre-processor, so an import in a comment or a
// string is not one — must stay in its room or go to a room on a floor below. The order is parsed from the
// README, so the two cannot drift. A file belongs to the longest listed path it lies under: a sub-folder
// without a line of its own (auth/signin/) is on its parent's floor, one with a line (upstreams/pin/) on its
// own. Rooms that share a line import nothing from each other. An import that climbs, goes sideways, or
// names a file under no listed room fails, naming the file and line, the import and the two floors; so does
// a Layout that lists a room twice or a path that does not exist. The checker itself is tried first on a
// small house of its own, so a parser that stopped seeing imports or floors fails here too.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The rooms of each floor, top floor first, from the first code block under a `## Layout` heading. */
function layoutFloors(readme: string): string[][] {
  const section = /^## Layout\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1];
  const block = section && /^```\n([\s\S]*?)^```/m.exec(section)?.[1];
  if (!block) throw new Error('README.md has no code block under "## Layout"');
  return block.split('\n').filter((l) => l.startsWith('src/')).map((line) => {
    const rooms: string[] = [];
    for (const word of line.split(/\s+/)) {
      const path = word.replace(/,$/, '');
      if (!path.startsWith('src/')) break;
      rooms.push(path);
    }
    return rooms;
  });
}

interface House {
  /** Rooms of each floor, top floor first. */
  floors: string[][];
  /** Source files by path from the project root (src/...), with their text. */
  files: Map<string, string>;
  /** Whether a path from the project root is a file of the project. */
  exists: (path: string) => boolean;
}

/** Everything wrong with the house: one line each. */
function violations(h: House): string[] {
  const out: string[] = [];
  const floorOf = new Map<string, number>();
  h.floors.forEach((rooms, i) => {
    for (const r of rooms) {
      if (floorOf.has(r)) {
        out.push(`README.md's Layout lists ${r} twice`);
        continue;
      }
      floorOf.set(r, h.floors.length - i);
      if (!h.exists(r.replace(/\/$/, ''))) out.push(`README.md's Layout lists ${r}, which does not exist`);
    }
  });
  const rooms = [...floorOf.keys()].sort((a, b) => b.length - a.length);
  const roomOf = (path: string) => rooms.find((r) => (r.endsWith('/') ? path.startsWith(r) : path === r));
  const where = (room: string) => `${room} (floor ${floorOf.get(room)})`;
  for (const [file, text] of h.files) {
    const from = roomOf(file);
    if (!from) {
      out.push(`${file} lies in no room README.md's Layout lists`);
      continue;
    }
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue; // a package or a node: module
      const line = text.slice(0, ref.pos).split('\n').length;
      const target = resolveImport(join(dirname(file), ref.fileName), h.exists);
      const to = roomOf(target);
      const at = `${file}:${line} imports '${ref.fileName}' (${target})`;
      if (!to) out.push(`${at}, which lies in no room README.md's Layout lists`);
      else if (to === from) continue;
      else if (floorOf.get(to)! > floorOf.get(from)!) out.push(`${at}: it climbs from ${where(from)} up to ${where(to)}`);
      else if (floorOf.get(to) === floorOf.get(from)) out.push(`${at}: ${from} and ${to} share floor ${floorOf.get(from)}, and rooms on one floor import nothing from each other`);
    }
  }
  return out;
}

/** The source a specifier names: x.js is x.ts when that exists (NodeNext), else the path as written. */
function resolveImport(path: string, exists: (p: string) => boolean): string {
  const source = path.replace(/\.js$/, '.ts');
  return source !== path && exists(source) ? source : path;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

describe('the floors of src/ (README.md Layout)', () => {
  it('the checker finds a climbing import, a sideways one, an unlisted folder, and a Layout listing a room twice or one that does not exist', () => {
    const floors = layoutFloors([
      '# house', '## Layout', '', '```', 'schema/x.json        not a room', 'src/top/             the top floor', 'src/mid/ src/side/   two rooms on one floor',
      'src/mid/sub/         a sub-folder with a line of its own', 'src/base.ts, src/gone/  a file as a room; a folder that is not there', 'src/top/             listed again', '```', '## Next',
    ].join('\n'));
    assert.deepEqual(floors, [['src/top/'], ['src/mid/', 'src/side/'], ['src/mid/sub/'], ['src/base.ts', 'src/gone/'], ['src/top/']]);
    const files = new Map([
      ['src/top/a.ts', "import { m } from '../mid/m.js';\nimport { b } from '../base.js';\n"],
      ['src/mid/m.ts', "// import { t } from '../top/a.js';\nimport { s } from './sub/s.js';\nexport const m = `import '../top/a.js'`;\n"],
      ['src/mid/sub/s.ts', "import type { M } from '../m.js';\nimport { t } from './t.js';\n"],
      ['src/mid/sub/t.ts', ''],
      ['src/side/x.ts', "export * from '../mid/m.js';\nawait import('../nowhere/n.js');\n"],
      ['src/base.ts', "import 'node:fs';\nimport { a } from './top/a.js';\n"],
      ['src/stray/y.ts', ''],
    ]);
    const paths = [...files.keys(), 'src/nowhere/n.ts'];
    const found = violations({ floors, files, exists: (p) => paths.some((f) => f === p || f.startsWith(`${p}/`)) });
    assert.deepEqual(found, [
      "README.md's Layout lists src/gone/, which does not exist",
      "README.md's Layout lists src/top/ twice",
      "src/mid/sub/s.ts:1 imports '../m.js' (src/mid/m.ts): it climbs from src/mid/sub/ (floor 3) up to src/mid/ (floor 4)",
      "src/side/x.ts:1 imports '../mid/m.js' (src/mid/m.ts): src/side/ and src/mid/ share floor 4, and rooms on one floor import nothing from each other",
      "src/side/x.ts:2 imports '../nowhere/n.js' (src/nowhere/n.ts), which lies in no room README.md's Layout lists",
      "src/base.ts:2 imports './top/a.js' (src/top/a.ts): it climbs from src/base.ts (floor 2) up to src/top/ (floor 5)",
      "src/stray/y.ts lies in no room README.md's Layout lists",
    ]);
  });

  it('every import in src/ stays in its room or goes down a floor', () => {
    const floors = layoutFloors(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    assert.ok(floors.length >= 10 && floors.flat().includes('src/core/'), `README.md's Layout gives ${floors.length} floors`);
    const files = new Map(sources('src').map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
    assert.ok(files.size > 200 && files.has('src/core/types.ts'), `${files.size} files read under src/`);
    const found = violations({ floors, files, exists: (p) => existsSync(join(ROOT, p)) });
    assert.deepEqual(found, [], `${found.length} problem(s) with the floors of src/:\n${found.join('\n')}`);
  });
});
