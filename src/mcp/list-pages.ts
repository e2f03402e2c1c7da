// Pages of the catalog's lists (tools, resources, resource templates, prompts): the MCP lists'
// cursors, and GET /svc's one cursor over all four. Guarantees: a page holds at most `size`
// items and its list, as a JSON array, at most `bytes` characters (at least one item whatever
// its length — the catalog lists an entry longer than a page in short, core/list-entry.ts, so
// one item fits; each item's length is measured once per cached list item); a list
// within both is one page with no cursor; a cursor is opaque (base64url), names its list(s) and the
// first item of each next page by key (name, uri or uriTemplate), and is resolved against the
// caller's own scope-filtered view, so walking the cursors returns every visible item exactly
// once and reveals nothing hidden; a cursor that is not one of ours for this list (or for
// /svc), or whose item is gone after a reload, is INVALID_CURSOR (-32602, HTTP 400). Key →
// position maps are built once per cached list.

import { SvcError } from '../errors.js';
import type { ListPage } from '../core/catalog.js';

export type ListName = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

/** The lists GET /svc answers, in its cursor's order. */
export const ALL_LISTS: readonly ListName[] = ['tools', 'resources', 'resourceTemplates', 'prompts'];

type Item = object;
const positions = new WeakMap<readonly Item[], Map<string, number>>();
const lengths = new WeakMap<Item, number>();
const SVC = 'svc';

const keyOf = (list: ListName, item: Item): string => {
  const w = item as { name?: string; uri?: string; uriTemplate?: string };
  return (list === 'resources' ? w.uri : list === 'resourceTemplates' ? w.uriTemplate : w.name) ?? '';
};

const encode = (head: string, rest: string) => Buffer.from(`${head}\n${rest}`).toString('base64url');

const invalid = (what: string) => new SvcError('INVALID_CURSOR', `${what} is not a cursor this server issued for it (or its item is gone): list again without a cursor`);

/** The page of `items` that `cursor` starts (the first page without one); `limits` undefined: everything. */
export function page(list: ListName, items: readonly Item[], cursor: unknown, limits: ListPage | undefined): { items: readonly Item[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const [head, key] = decode(cursor);
    start = head === list ? indexOf(list, items, key) : 0;
    if (start === 0) throw invalid(`params.cursor (${list})`);
  }
  const end = pageEnd(items, start, limits);
  if (end === items.length) return { items: start === 0 ? items : items.slice(start) };
  return { items: items.slice(start, end), nextCursor: encode(list, keyOf(list, items[end]!)) };
}

/** Where the page from `start` ends: after `size` items, or before the item that would make the page's JSON array pass `bytes` (never before start + 1). */
function pageEnd(items: readonly Item[], start: number, limits: ListPage | undefined): number {
  if (!limits) return items.length;
  const last = Math.min(items.length, start + limits.size);
  let used = 1; // [ and ], less the comma the first item does not need
  for (let i = start; i < last; i++) {
    let n = lengths.get(items[i]!);
    if (n === undefined) lengths.set(items[i]!, (n = JSON.stringify(items[i]).length + 1));
    used += n;
    if (used > limits.bytes && i > start) return i;
  }
  return last;
}

/**
 * GET /svc's page: at most `limits` of each list, from one cursor that names where each list
 * resumes (or that it ended). Without a cursor, every list's first page; nextCursor only while some
 * list has more, and then a list that ended answers no items.
 */
export function pageAll(lists: Readonly<Record<ListName, readonly Item[]>>, cursor: unknown, limits: ListPage | undefined): { pages: Record<ListName, readonly Item[]>; nextCursor?: string } {
  let resume: (string | null)[] | undefined;
  if (cursor !== undefined) {
    const [head, rest] = decode(cursor);
    resume = head === SVC ? parseResume(rest) : undefined;
    if (!resume) throw invalid('?cursor');
  }
  const pages = {} as Record<ListName, readonly Item[]>;
  const next: (string | null)[] = [];
  let more = false;
  ALL_LISTS.forEach((list, i) => {
    const items = lists[list];
    const key = resume?.[i];
    const start = key === undefined ? 0 : key === null ? items.length : indexOf(list, items, key);
    if (start === 0 && key != null) throw invalid('?cursor');
    const end = pageEnd(items, start, limits);
    pages[list] = start === 0 && end === items.length ? items : items.slice(start, end);
    next.push(end < items.length ? keyOf(list, items[end]!) : null);
    more ||= end < items.length;
  });
  return more ? { pages, nextCursor: encode(SVC, JSON.stringify(next)) } : { pages };
}

/** [head, rest] of a cursor's text; ['', ''] when it is not one of ours. */
function decode(cursor: unknown): [string, string] {
  const text = typeof cursor === 'string' && cursor !== '' ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const nl = text.indexOf('\n');
  return nl > 0 ? [text.slice(0, nl), text.slice(nl + 1)] : ['', ''];
}

function parseResume(text: string): (string | null)[] | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) && v.length === ALL_LISTS.length && v.every((k) => k === null || typeof k === 'string') ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The position of the item keyed `key` in `items`; 0 when absent (a next page never starts at 0). */
function indexOf(list: ListName, items: readonly Item[], key: string): number {
  let map = positions.get(items);
  if (!map) positions.set(items, (map = new Map(items.map((it, i) => [keyOf(list, it), i]))));
  return map.get(key) ?? 0;
}
