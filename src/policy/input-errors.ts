// Input validation errors in a form a caller — or a model — can act on. Guarantees:
// at most MAX_PROBLEMS problems, each {path, message, params?} where path is a JSON
// pointer into the arguments and params are ajv's (allowed values, missing or extra
// property, limit…); every string and list is bounded; no argument value is ever
// echoed (ajv runs without `verbose`, so its messages and params hold only schema
// facts and property names). summarize() is the same list as one readable line.

import type { ErrorObject } from 'ajv';

export const MAX_PROBLEMS = 10;
const MAX_STRING = 120;
const MAX_VALUES = 20;

export interface InputProblem {
  path: string;
  message: string;
  params?: Record<string, unknown>;
}

export interface InputProblems {
  errors: InputProblem[];
  /** How many further problems the validator found but the list leaves out. */
  omitted: number;
}

export function inputProblems(errors: readonly ErrorObject[] | null | undefined): InputProblems {
  const all = errors ?? [];
  const list = all.slice(0, MAX_PROBLEMS).map((e): InputProblem => ({
    path: clip(e.instancePath || '/'),
    message: clip(e.message ?? 'is invalid'),
    ...(e.params && Object.keys(e.params).length > 0 && { params: bounded(e.params) as Record<string, unknown> }),
  }));
  return { errors: list, omitted: all.length - list.length };
}

/** `/name: must be string; /color: must be equal to one of the allowed values ("red", "green")`. */
export function summarize(p: InputProblems): string {
  const lines = p.errors.map((e) => `${e.path}: ${e.message}${detail(e.params)}`);
  if (p.omitted > 0) lines.push(`and ${p.omitted} more`);
  return lines.join('; ');
}

/** The part of ajv's params its message leaves out: which values are allowed, which property is extra. */
function detail(params: Record<string, unknown> | undefined): string {
  if (!params) return '';
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  if ('allowedValue' in params) return ` (${JSON.stringify(params.allowedValue)})`;
  if (typeof params.additionalProperty === 'string') return ` (${JSON.stringify(params.additionalProperty)})`;
  return '';
}

function clip(s: string): string {
  return s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}…` : s;
}

function bounded(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return clip(v);
  if (v === null || typeof v !== 'object') return v;
  if (depth >= 2) return '…';
  if (Array.isArray(v)) {
    const head = v.slice(0, MAX_VALUES).map((x) => bounded(x, depth + 1));
    return v.length > MAX_VALUES ? [...head, '…'] : head;
  }
  return Object.fromEntries(Object.entries(v).slice(0, MAX_VALUES).map(([k, x]) => [clip(k), bounded(x, depth + 1)]));
}
