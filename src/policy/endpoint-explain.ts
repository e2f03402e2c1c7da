// Explain and diff through named endpoints. Guarantees: an endpoint is explained with the same admission
// list as its capabilities, run on the endpoint's view (viewOf: outside the selection = not served, as the
// server answers), after its door (required_scopes, decided as any capability's fixed scopes: a caller
// that does not hold them reaches nothing there); with no endpoint named, each endpoint is listed with
// what the caller reaches through it. One call is explained through an endpoint as the server answers
// it there: the door first (refused: INSUFFICIENT_SCOPE, the admission list not reached), then the call
// on the view (a capability outside the selection does not exist there). endpointWidenings() reports, between two catalogs, a new endpoint,
// a capability an endpoint serves after the edit and did not before (its selection widened, or the
// catalog grew under it), and an endpoint whose required_scopes lost a scope, as widenings.

import type { Catalog } from '../core/catalog.js';
import type { Principal } from '../core/types.js';
import { viewOf } from '../catalog/endpoint-view.js';
import { entries } from './diff.js';
import { explainCall, explainView, type CallAskOptions, type CallVerdict, type ExplainContext, type Explanation } from './explain.js';
import type { ReachChange } from './reach.js';
import { decide } from './scopes.js';

/** An endpoint as a caller meets it: its door, and what it then sees there. */
export interface EndpointVerdict {
  name: string;
  required_scopes: string[];
  /** The caller passes the door (holds every required scope). */
  enters: boolean;
  missing?: string[];
  /** The capabilities the caller is shown there (ids). */
  visible: string[];
}

export function explainEndpoints(cat: Catalog, p: Principal, ctx: ExplainContext): EndpointVerdict[] {
  return [...cat.endpoints?.values() ?? []].map((ep) => {
    const door = decide(ep.requiredScopes, p.scopes);
    const visible = door.ok ? explainView(viewOf(cat, ep.name), p, ctx).capabilities.filter((c) => c.visible).map((c) => c.id) : [];
    return { name: ep.name, required_scopes: [...ep.requiredScopes], enters: door.ok, ...(!door.ok && { missing: door.missing }), visible };
  });
}

/** The caller's view through endpoint `name` explained, or undefined when the catalog declares no such endpoint. */
export function explainEndpoint(cat: Catalog, p: Principal, name: string, ctx: ExplainContext): (Explanation & { endpoint: EndpointVerdict }) | undefined {
  const ep = cat.endpoints?.get(name);
  if (!ep) return undefined;
  const door = decide(ep.requiredScopes, p.scopes);
  const view = explainView(viewOf(cat, name), p, ctx);
  const capabilities = door.ok ? view.capabilities : view.capabilities.map((c) => ({
    ...c, visible: false, callable: 'no' as const, reasons: [`endpoint ${name} requires scope ${door.missing.join(' ')} at its door`, ...c.reasons],
  }));
  const endpoint = { name, required_scopes: [...ep.requiredScopes], enters: door.ok, ...(!door.ok && { missing: door.missing }), visible: capabilities.filter((c) => c.visible).map((c) => c.id) };
  return { ...view, capabilities, endpoint };
}

/**
 * One call through endpoint `name` (one of cat.endpoints): refused at the door when the caller lacks its
 * required_scopes (whatever it names, as the server refuses any request there), else explainCall on the
 * view: undefined for a capability the endpoint does not serve.
 */
export function explainEndpointCall(cat: Catalog, p: Principal, name: string, id: string, args: unknown, ask: CallAskOptions = {}): CallVerdict | undefined {
  const v = explainCall(viewOf(cat, name), p, id, args, ask);
  const door = decide(cat.endpoints!.get(name)!.requiredScopes, p.scopes);
  if (door.ok) return v;
  return {
    id: v?.id ?? id, allowed: false, code: 'INSUFFICIENT_SCOPE',
    reasons: [`INSUFFICIENT_SCOPE: endpoint ${name} requires scope ${door.missing.join(' ')} at its door`],
    steps: (v?.steps ?? []).map((st) => ({ ...st, outcome: 'not reached' })),
  };
}

/** Text lines for explainEndpoints. */
export function formatEndpoints(list: EndpointVerdict[]): string[] {
  return list.map((e) => `endpoint ${e.name}: ${e.enters ? `enters; sees ${e.visible.join(' ') || 'nothing'}` : `refused at the door: missing ${e.missing!.join(' ')}`}`);
}

/** What an edit lets some caller reach through an endpoint that it could not before (see the header). */
export function endpointWidenings(before: Catalog, after: Catalog): ReachChange[] {
  const out: ReachChange[] = [];
  const existed = new Set(entries(before).map(([id]) => id));
  const change = (capability: string, why: string): ReachChange => ({ capability, key: 'any', caller: 'any caller', example: {}, why, exact: true });
  for (const ep of after.endpoints?.values() ?? []) {
    const was = before.endpoints?.get(ep.name);
    if (!was) {
      out.push(change(`endpoint:${ep.name}`, `new endpoint ${ep.name} at /mcp/${ep.name}, /ws/${ep.name}, /svc/${ep.name}`));
      continue;
    }
    const loosened = was.requiredScopes.filter((s) => !ep.requiredScopes.includes(s));
    if (loosened.length) out.push(change(`endpoint:${ep.name}`, `its door no longer requires ${loosened.join(' ')}: required_scopes ${was.requiredScopes.join(' ') || '(none)'} → ${ep.requiredScopes.join(' ') || '(none)'}`));
    const old = new Set(entries(viewOf(before, ep.name)).map(([id]) => id));
    for (const [id] of entries(viewOf(after, ep.name))) {
      if (!old.has(id)) out.push(change(`endpoint:${ep.name}:${id}`, `endpoint ${ep.name} now serves ${id}${existed.has(id) ? ' (its selection widened)' : ' (new in the catalog)'}`));
    }
  }
  return out;
}
