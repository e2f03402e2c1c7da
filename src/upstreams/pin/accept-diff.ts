// What `fastsvc upstreams accept` shows the operator: the difference between the accepted and the
// newly recorded definitions of one upstream. Pure. Guarantees: every added definition is shown
// whole (each pinned member: a new description is what needs reading), every changed one member
// by member with a line diff of that member (text split into lines, schemas and annotations as
// key-sorted JSON), every removed one by name; kinds in the lock's order, names sorted; control
// characters, bidirectional overrides and other invisible format characters in upstream text
// are printed as \u escapes, so an upstream cannot move the cursor, recolour or reorder the
// terminal the operator reviews in.

import { canonicalJson, sortedKeys } from './canonical-json.js';
import type { UpstreamLock } from './lock-file.js';
import { KINDS, type PinKind } from './pinned-definitions.js';

export interface AcceptChange {
  readonly kind: PinKind;
  readonly name: string;
  readonly change: 'added' | 'changed' | 'removed';
  readonly before?: Readonly<Record<string, unknown>>;
  readonly after?: Readonly<Record<string, unknown>>;
}

export function acceptChanges(prev: UpstreamLock | undefined, next: UpstreamLock): AcceptChange[] {
  const out: AcceptChange[] = [];
  for (const rule of KINDS) {
    const a = prev?.[rule.list] ?? {};
    const b = next[rule.list] ?? {};
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const before = Object.hasOwn(a, name) ? a[name] : undefined;
      const after = Object.hasOwn(b, name) ? b[name] : undefined;
      if (before && after && before.digest === after.digest) continue;
      const change = !before ? 'added' : !after ? 'removed' : 'changed';
      out.push({ kind: rule.kind, name, change, before: before?.definition, after: after?.definition });
    }
  }
  return out;
}

/** Invisible or terminal-controlling characters: C0/C1 controls (but tab), line/paragraph separators, bidi and zero-width format characters. */
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

export function safe(s: string): string {
  return s.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A member's value as the lines a reader compares. */
function memberLines(v: unknown): string[] {
  if (v === undefined) return [];
  const text = typeof v === 'string' ? v : JSON.stringify(sortedKeys(v), null, 2);
  return text.split(/\r\n|\n/).map(safe);
}

/** Longest-common-subsequence line diff; past MAX_CELLS, everything before then everything after. */
const MAX_CELLS = 1_000_000;
export function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (i < a.length && (j === b.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out;
}

/** The lines accept prints: `+` added, `~` changed (with each changed member's diff), `-` removed. */
export function changeLines(changes: readonly AcceptChange[]): string[] {
  const lines: string[] = [];
  const indent = (ls: string[], by: string) => ls.map((l) => by + l);
  for (const c of changes) {
    const rule = KINDS.find((k) => k.kind === c.kind)!;
    const mark = c.change === 'added' ? '+' : c.change === 'removed' ? '-' : '~';
    lines.push(`${mark} ${c.kind} ${JSON.stringify(safe(c.name))}`);
    if (c.change === 'removed') continue;
    for (const f of rule.fields) {
      if (f === rule.key) continue;
      const before = c.before?.[f];
      const after = c.after?.[f];
      if (c.change === 'changed' && canonicalJson(before ?? null) === canonicalJson(after ?? null)) continue;
      if (c.change === 'added') {
        if (after !== undefined) lines.push(`    ${f}:`, ...indent(memberLines(after), '      '));
      } else {
        lines.push(`    ${f}:`, ...indent(lineDiff(memberLines(before), memberLines(after)), '    '));
      }
    }
  }
  return lines;
}
