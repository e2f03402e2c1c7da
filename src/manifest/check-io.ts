// The I/O half of `svc validate`: what `svc serve` would refuse although the
// manifest is well-formed — a missing SQLite file, a query that does not
// prepare, an exec program not found, a missing content or secret file, an
// fs.root that is not a folder. Guarantees: it runs assemble's own checks (one
// copy of each) in probe mode: files are only read, databases opened read-only,
// no module code is loaded and nothing touches the network; every problem
// comes back at the line:col of its field, none is thrown.

import { ManifestError, type SvcError } from '../errors.js';
import { assemble } from './assemble.js';
import type { Plan } from './compile.js';

type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export async function checkIO(plan: Plan, file: string, locate: Locate): Promise<SvcError[]> {
  try {
    (await assemble(plan, file, '', locate, { probe: true })).dispose();
    return [];
  } catch (e) {
    if (e instanceof ManifestError) return e.problems;
    throw e;
  }
}
