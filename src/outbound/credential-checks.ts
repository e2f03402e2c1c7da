// The checks of a backend's `auth` a schema cannot express, shared by `svc validate` (the
// manifest's compile stage) and the builder (index.ts), so both refuse the same specs with the
// same codes. Guarantees: pure; each secret is given exactly once (the value or its *_file);
// a static `header` comes with its value and `bearer` without one; a token_url is https, or http
// only on a loopback address (the endpoint is the operator's, and a client secret must not cross
// a network in clear); a token exchange names the backend (audience or resource).
// outboundSecretPaths() lists the fields that hold a secret in the manifest itself, for the
// check that they are written ${VAR} (manifest/secret-refs.ts).

import type { OutboundAuth } from '../core/manifest-types.gen.js';
import type { ErrorCode } from '../errors.js';
import { isLoopbackUrl } from '../util/loopback.js';

export interface OutboundProblem {
  code: ErrorCode;
  /** Below the `auth` object. */
  path: (string | number)[];
  message: string;
}

export function outboundAuthProblems(auth: OutboundAuth): OutboundProblem[] {
  const out: OutboundProblem[] = [];
  const problem = (path: (string | number)[], message: string) => out.push({ code: 'OUTBOUND_AUTH_CONFIG', path, message });
  const s = auth.static;
  if (s) {
    const bearer = s.bearer !== undefined || s.bearer_file !== undefined;
    const value = s.value !== undefined || s.value_file !== undefined;
    if (s.bearer !== undefined && s.bearer_file !== undefined) problem(['static', 'bearer_file'], 'give static.bearer or static.bearer_file, not both');
    if (s.value !== undefined && s.value_file !== undefined) problem(['static', 'value_file'], 'give static.value or static.value_file, not both');
    if (bearer && (value || s.header !== undefined)) problem(['static'], 'static takes a bearer token or a header with its value, not both');
    if (!bearer && (s.header === undefined || !value)) problem(['static'], 'static needs bearer (or bearer_file), or header with value (or value_file)');
  }
  for (const kind of ['client_credentials', 'token_exchange'] as const) {
    const c = auth[kind];
    if (!c) continue;
    if (c.client_secret !== undefined && c.client_secret_file !== undefined) problem([kind, 'client_secret_file'], `give ${kind}.client_secret or client_secret_file, not both`);
    if (c.client_secret === undefined && c.client_secret_file === undefined) problem([kind], `${kind} needs client_secret (\${VAR}) or client_secret_file`);
    let url: URL | undefined;
    try {
      url = new URL(c.token_url);
    } catch {
      problem([kind, 'token_url'], `${kind}.token_url is not a URL`);
    }
    if (url && url.protocol !== 'https:' && !isLoopbackUrl(c.token_url)) problem([kind, 'token_url'], `${kind}.token_url must be https (http only on a loopback address)`);
  }
  if (auth.token_exchange && auth.token_exchange.audience === undefined && auth.token_exchange.resource === undefined) {
    problem(['token_exchange'], 'token_exchange needs audience or resource: the backend the exchanged token is for');
  }
  return out;
}

/** The fields of `auth` (paths below it) whose value is a secret written in the manifest. */
export function outboundSecretPaths(auth: OutboundAuth): (string | number)[][] {
  const paths: (string | number)[][] = [];
  if (auth.static?.bearer !== undefined) paths.push(['static', 'bearer']);
  if (auth.static?.value !== undefined) paths.push(['static', 'value']);
  for (const kind of ['client_credentials', 'token_exchange'] as const) {
    if (auth[kind]?.client_secret !== undefined) paths.push([kind, 'client_secret']);
  }
  return paths;
}
