// The ExternalIssuers a SvcServerConfig asks for (what createApp calls). Guarantees:
// undefined when external_issuers is empty, and then jose and the rest of external/ are not
// even loaded; otherwise the section is checked as `svc validate` checks it (a problem
// throws, so the server does not start), and every issuer's metadata and keys start being
// fetched at once without holding up start-up — an issuer that cannot be reached is logged
// and asked again when a token needs it (its callers get 503 IDP_UNAVAILABLE meanwhile).

import type { Logger } from 'pino';
import { profileScopes, type ResolvedConfig } from '../../core/config.js';
import type { ExternalIssuers } from './issuers.js';
import type { EndpointResources } from '../resource-metadata.js';

export async function externalIssuersFromConfig(cfg: ResolvedConfig, o: { logger: Logger; builtinIssuer?: string; endpoints?: EndpointResources }): Promise<ExternalIssuers | undefined> {
  const issuers = cfg.external_issuers;
  if (!issuers.length) return undefined;
  const { ExternalIssuers } = await import('./issuers.js');
  const external = new ExternalIssuers({ issuers, profile: profileScopes(cfg.profile), baseDir: cfg.base_dir, log: o.logger, builtinIssuer: o.builtinIssuer, ...(o.endpoints && { endpoints: o.endpoints }) });
  void external.warm();
  return external;
}
