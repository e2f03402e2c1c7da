// FastSvc: the application — its tools, resources and prompts, and its named endpoints — as
// the code API builds it and as the YAML loader builds it. Guarantees: names are unique per
// kind (a duplicate throws DUPLICATE_NAME); definitions are stored as given and
// compiled into a frozen Catalog only by catalog.ts.

import { SvcError } from '../errors.js';
import type { CacheHint, DiscoverySettings, Limit, PromptDef, ResourceDef, ToolDef } from './types.js';
import { endpointNameProblem, type EndpointDef } from './endpoint.js';

/**
 * Quotas per principal class (manifest `limits`); external: each external issuer's (external_issuers[].limits),
 * by issuer; shared: counted in the OAuth provider's PostgreSQL database across replicas (limits.shared).
 */
export interface ClassLimits { token?: Limit; user?: Limit; oauth_client?: Limit; external?: Readonly<Record<string, Limit>>; shared?: boolean }

export interface FastSvcOptions {
  name: string;
  version?: string;
  description?: string;
  /** Text shown to MCP clients in the initialize answer. */
  instructions?: string;
  /** Caching hint of discover and the lists on MCP 2026-07-28. */
  cache?: CacheHint;
  /** Quotas per principal class, across every capability. */
  limits?: ClassLimits;
  /** How MCP clients are shown the tools (absent: direct). */
  discovery?: DiscoverySettings;
}

export class FastSvc {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly instructions?: string;
  readonly cache?: CacheHint;
  readonly limits?: ClassLimits;
  readonly discovery?: DiscoverySettings;
  readonly tools = new Map<string, ToolDef>();
  readonly resources = new Map<string, ResourceDef>();
  readonly prompts = new Map<string, PromptDef>();
  /** Named endpoints (compileEndpoint() makes one from the manifest's shape), served at /mcp/NAME, /ws/NAME, /svc/NAME. */
  readonly endpoints = new Map<string, EndpointDef>();

  constructor(opts: FastSvcOptions) {
    this.name = opts.name;
    this.version = opts.version ?? '0.1.0';
    this.description = opts.description ?? '';
    this.instructions = opts.instructions;
    this.cache = opts.cache;
    this.limits = opts.limits;
    this.discovery = opts.discovery;
  }

  tool(def: ToolDef): this {
    add(this.tools, def.name, def, 'tool');
    return this;
  }

  resource(def: ResourceDef): this {
    const key = def.uri ?? def.uri_template;
    if (!key) throw new SvcError('BACKEND_CONFIG', `resource ${def.name} needs uri or uri_template`);
    add(this.resources, key, def, 'resource');
    return this;
  }

  prompt(def: PromptDef): this {
    add(this.prompts, def.name, def, 'prompt');
    return this;
  }

  /** A named endpoint; a name that is reserved or no path segment throws ENDPOINT_CONFIG. */
  endpoint(def: EndpointDef): this {
    const bad = endpointNameProblem(def.name);
    if (bad) throw new SvcError('ENDPOINT_CONFIG', bad, { path: `/endpoints/${def.name}` });
    add(this.endpoints, def.name, def, 'endpoint');
    return this;
  }
}

function add<T>(map: Map<string, T>, key: string, def: T, kind: string): void {
  if (map.has(key)) throw new SvcError('DUPLICATE_NAME', `${kind} ${key} is declared twice`);
  map.set(key, def);
}
