// The one readable start-up line `fastsvc serve` prints on stderr beside its JSON logs:
// what it loaded and how it is guarded. Guarantees: one line that starts `fastsvc: ` (the
// documented command; `svc` is only an alias bin), no secret (modes and paths only),
// stable order: name, URL, capability counts, auth, OAuth provider, external issuers, audit
// sink, metrics route, watched file.

import type { ResolvedConfig } from '../core/config.js';

export interface StartupFacts {
  name: string;
  url: string;
  tools: number;
  resources: number;
  prompts: number;
  config: ResolvedConfig;
  /** The watched manifest (relative to cwd), or undefined with --no-watch. */
  watching?: string;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "1 tool, 2 resources, 0 prompts": the counts as `svc serve` and `svc validate` print them. */
export function capabilityCounts(tools: number, resources: number, prompts: number): string {
  return `${plural(tools, 'tool')}, ${plural(resources, 'resource')}, ${plural(prompts, 'prompt')}`;
}

export function startupLine(f: StartupFacts): string {
  const c = f.config;
  const external = c.external_issuers;
  const auth = [c.auth && 'bearer', c.oauth?.enabled && 'oauth', external.length && 'external'].filter(Boolean).join('+') || 'none';
  const parts = [capabilityCounts(f.tools, f.resources, f.prompts), `auth ${auth}`];
  if (c.oauth?.enabled) parts.push(`oauth provider ${c.oauth_provider ? 'custom' : c.oauth.provider?.type ?? 'memory'}`);
  if (external.length) parts.push(`external issuers ${external.map((e) => e.issuer).join(' ')}`);
  if (c.audit) parts.push(`audit to ${typeof c.audit.to === 'object' ? c.audit.to.file : c.audit.to}`);
  const metrics = c.routes.public.includes('/metrics') ? 'public' : c.routes.protected.includes('/metrics') ? 'protected' : undefined;
  parts.push(metrics ? `metrics at /metrics (${metrics})` : 'metrics off');
  parts.push(f.watching ? `watching ${f.watching}` : 'not watching the manifest');
  return `fastsvc: serving ${f.name} on ${f.url}: ${parts.join('; ')}`;
}
