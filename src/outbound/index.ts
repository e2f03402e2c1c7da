// Outbound credentials: what fastsvc sends when it calls a backend on a caller's behalf (the
// http backend's `auth`; an upstream MCP server's likewise). The one entry point is
// createOutboundCredential(spec, { baseDir }), built once per backend when the manifest is
// assembled; its header(caller, signal) gives the (name, value) to set on each request.
// Guarantees: the caller's own token is never the answer — every kind is a credential of its own
// (static-secret.ts's secret, client_credentials' token, token_exchange's exchanged token,
// upstream_login's provider token); a spec `svc validate` refuses (credential-checks.ts) is refused
// here too (OUTBOUND_AUTH_CONFIG), and secrets in files are read at build, so a broken
// credential fails the load, not the first call; header() rejects with OUTBOUND_AUTH_FAILED
// (the token endpoint), CALLER_CREDENTIAL_MISSING (a caller without the credential the kind
// needs) or UPSTREAM_TOKEN_UNAVAILABLE, and with the signal's reason when it aborts first; no
// secret or token is ever logged or put in an error (nothing here logs).

import type { OutboundAuth } from '../core/manifest-types.gen.js';
import { SvcError } from '../errors.js';
import { clientCredentials } from './client-credentials.js';
import type { OutboundCredential } from './credential.js';
import { outboundAuthProblems } from './credential-checks.js';
import { readSecretFile, staticHeader } from './static-secret.js';
import { tokenExchange } from './token-exchange.js';
import type { TokenEndpoint } from './token-endpoint.js';
import { signInToken } from './signin-token.js';

export type { OutboundCredential, OutboundHeader } from './credential.js';

export interface OutboundOptions {
  /** The manifest's folder: *_file paths resolve against it. */
  baseDir: string;
}

/** The credential of one backend, from its `auth` (the schema's defaults filled in). */
export function createOutboundCredential(spec: OutboundAuth, o: OutboundOptions): OutboundCredential {
  const problem = outboundAuthProblems(spec)[0];
  if (problem) throw new SvcError(problem.code, problem.message, { path: ['auth', ...problem.path].join('/') });
  if (spec.static) {
    const header = staticHeader(spec.static, o.baseDir);
    return { header: async () => header };
  }
  if (spec.upstream_login) return signInToken(spec.upstream_login);
  const cc = spec.client_credentials;
  if (cc) return clientCredentials(cc as typeof cc & TokenEndpoint, clientSecret(cc, 'client_credentials', o.baseDir));
  const te = spec.token_exchange!;
  return tokenExchange(te as typeof te & TokenEndpoint & { requested_token_type: string }, clientSecret(te, 'token_exchange', o.baseDir));
}

function clientSecret(c: { client_secret?: string; client_secret_file?: string }, kind: string, baseDir: string): string {
  return c.client_secret ?? readSecretFile(baseDir, c.client_secret_file!, `${kind}/client_secret_file`);
}
