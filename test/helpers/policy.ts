// A manifest value's access policy through the real pipeline, without a file: schema
// validation (defaults applied), compile, the policy-only assembly `svc diff` runs (no
// backend built, nothing read) and the catalog; policyOf() throws the problems of an
// invalid manifest as FILE:LINE:COL lines.

import { buildCatalog } from '../../src/core/catalog.js';
import { assemble } from '../../src/manifest/assemble.js';
import { compilePlan, type Plan } from '../../src/manifest/compile.js';
import type { Source } from '../../src/manifest/load.js';
import { validateManifest } from '../../src/manifest/validate-schema.js';
import { accessPolicy, type AccessPolicy } from '../../src/policy/callers.js';

const at = () => ({ line: 1, col: 1 });

/** The compiled plan of a manifest value, or an Error listing its problems. */
export function planOf(manifest: object): Plan | Error {
  const src = { file: 'gen.yaml', text: '', hash: 'h', value: structuredClone(manifest), problems: [], unsetEnv: [], locate: at } as Source;
  const v = validateManifest(src);
  const c = v.manifest ? compilePlan(v.manifest, 'gen.yaml', at) : { problems: v.problems };
  return c.plan ?? new Error(c.problems.map((p) => p.format()).join('\n'));
}

export async function policyOf(manifest: object): Promise<AccessPolicy> {
  const plan = planOf(manifest);
  if (plan instanceof Error) throw plan;
  // A folder that does not exist: nothing may be read from it.
  const assembled = await assemble(plan, '/nonexistent/gen.yaml', 'h', at, { policyOnly: true });
  return accessPolicy(buildCatalog(assembled.svc), plan.manifest);
}
