// Pages of the MCP lists (tools, resources, resource templates, prompts) per the protocol's
// cursors. Guarantees: a list no longer than the page size is one page with no nextCursor;
// a cursor is opaque (base64url), names its list and the first item of the next page by key
// (name, uri or uriTemplate), and is resolved against the caller's own scope-filtered view,
// so walking nextCursor returns every visible item exactly once and reveals nothing hidden;
// a cursor that is not one of ours for this list, or whose item is gone after a reload, is
// INVALID_CURSOR (-32602). Key → position maps are built once per cached list.

import { SvcError } from '../errors.js';

export type ListName = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

type Item = object;
const positions = new WeakMap<readonly Item[], Map<string, number>>();

const keyOf = (list: ListName, item: Item): string => {
  const w = item as { name?: string; uri?: string; uriTemplate?: string };
  return (list === 'resources' ? w.uri : list === 'resourceTemplates' ? w.uriTemplate : w.name) ?? '';
};

/** The page of `items` that `cursor` starts (the first page without one); `pageSize` undefined: everything. */
export function page(list: ListName, items: readonly Item[], cursor: unknown, pageSize: number | undefined): { items: readonly Item[]; nextCursor?: string } {
  const start = cursor === undefined ? 0 : position(list, items, cursor);
  if (pageSize === undefined || items.length - start <= pageSize) return { items: start === 0 ? items : items.slice(start) };
  const end = start + pageSize;
  return { items: items.slice(start, end), nextCursor: Buffer.from(`${list}\n${keyOf(list, items[end]!)}`).toString('base64url') };
}

function position(list: ListName, items: readonly Item[], cursor: unknown): number {
  const text = typeof cursor === 'string' && cursor !== '' ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const nl = text.indexOf('\n');
  let at: number | undefined;
  if (nl > 0 && text.slice(0, nl) === list) {
    let map = positions.get(items);
    if (!map) positions.set(items, (map = new Map(items.map((it, i) => [keyOf(list, it), i]))));
    at = map.get(text.slice(nl + 1));
  }
  if (at === undefined || at === 0) throw new SvcError('INVALID_CURSOR', `params.cursor is not a ${list} cursor of this server (or its item is gone): list again without a cursor`);
  return at;
}
