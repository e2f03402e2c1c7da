// Which operations a source serves, and what each tool is named.
// Guarantees: an operation is served when it matches every filter `include` gives and not
// every filter `exclude` gives (a filter not given matches; an empty include/exclude
// changes nothing); path globs match the path as the document writes it, `*` within one
// segment and `**` across segments; a name is `naming` with its placeholders filled —
// in a placeholder's value `/` becomes `.` and any other character a tool name cannot
// hold becomes `_` — and the result is checked against the tool name rule by the caller; the root
// path `/` is named `root` (GET / without an operationId: get_root).

import type { Operation } from './operation.js';

export interface Filter {
  operations?: string[];
  tags?: string[];
  paths?: string[];
  methods?: string[];
}

export function selected(o: Operation, include: Filter | undefined, exclude: Filter | undefined): boolean {
  if (include && !matches(o, include)) return false;
  return !(exclude && Object.keys(exclude).length && matches(o, exclude));
}

function matches(o: Operation, f: Filter): boolean {
  if (f.operations && !(o.operationId !== undefined && f.operations.includes(o.operationId))) return false;
  if (f.tags && !o.tags.some((t) => f.tags!.includes(t))) return false;
  if (f.methods && !f.methods.includes(o.method)) return false;
  if (f.paths && !f.paths.some((g) => globRegex(g).test(o.path))) return false;
  return true;
}

const globs = new Map<string, RegExp>();
export function globRegex(glob: string): RegExp {
  let re = globs.get(glob);
  if (!re) {
    const body = glob.split(/(\*\*|\*)/).map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))).join('');
    globs.set(glob, (re = new RegExp(`^${body}$`)));
  }
  return re;
}

/** A placeholder value made fit for a tool name. */
function part(v: string): string {
  return v.replace(/\//g, '.').replace(/[^A-Za-z0-9_.-]/g, '_').replace(/\.{2,}/g, '.').replace(/^\.+|\.+$/g, '');
}

/** The path's segments joined by `_`, braces dropped; the root path `/` is `root`. */
export function pathName(path: string): string {
  return path.split('/').filter(Boolean).map((s) => s.replace(/[{}]/g, '')).join('_') || 'root';
}

export function toolName(naming: string, o: Operation): string {
  const method = o.method.toLowerCase();
  const values: Record<string, string> = {
    operationId: o.operationId ?? `${method}_${pathName(o.path)}`,
    tag: o.tags[0] ?? 'default',
    method,
    path_name: pathName(o.path),
  };
  return naming.replace(/\{(operationId|tag|method|path_name)\}/g, (_, k: string) => part(values[k]!));
}
