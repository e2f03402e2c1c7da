// `svc validate --network`: what only the network can tell about external_issuers. Guarantees:
// each issuer's discovery document (when its jwks_uri or introspection endpoint comes from
// there) and its signing keys are fetched as `svc serve` fetches them (bounded, https off
// loopback, the document's issuer exactly the configured one), a key set publishing a private
// key or no key usable with `algorithms` is a problem; its introspection endpoint is never
// called (that would need a token); every problem is EXTERNAL_ISSUER_CONFIG at the issuer's
// line; nothing is logged.

import { dirname, resolve } from 'node:path';
import { pino } from 'pino';
import { profileScopes, type ResolvedExternalIssuer } from '../core/config.js';
import { SvcError } from '../errors.js';
import type { Plan } from '../manifest/index.js';

type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export async function issuerProblems(plan: Plan, file: string, locate: Locate): Promise<SvcError[]> {
  // A validated manifest has the schema's defaults applied (validate.ts: ajv useDefaults).
  const issuers = (plan.manifest.external_issuers ?? []) as ResolvedExternalIssuer[];
  if (!issuers.length) return [];
  const { ExternalIssuers } = await import('../auth/external/issuers.js');
  const external = new ExternalIssuers({ issuers, profile: profileScopes(plan.manifest.profile), baseDir: dirname(resolve(file)), log: pino({ level: 'silent' }) });
  const found = await external.probe();
  return found.flatMap((messages, i) => messages.map((message) => {
    const path = ['external_issuers', i, 'issuer'];
    const { line, col } = locate(path);
    return new SvcError('EXTERNAL_ISSUER_CONFIG', message, { file, line, col, path: `/${path.join('/')}` });
  }));
}
