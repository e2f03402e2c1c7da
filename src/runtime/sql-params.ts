// The named parameters of one SQL statement, as SQLite binds them. Guarantees:
// pure (no database); names inside string literals, quoted identifiers and
// comments are not parameters; a positional `?` is refused (BACKEND_CONFIG), so
// arguments can only ever bind by name. Shared by the compile step (which checks
// the names against input_schema) and the sqlite backend (which binds them).

import { SvcError } from '../errors.js';

/**
 * Names of the :name / @name / $name parameters a statement uses (without the
 * prefix), skipping strings, quoted identifiers and comments. Positional `?`
 * parameters are refused (BACKEND_CONFIG): arguments bind by name only.
 */
export function sqlParamNames(sql: string): string[] {
  const names = new Set<string>();
  const idChar = /[A-Za-z0-9_$\u0080-\uffff]/;
  const closers: Record<string, string> = { "'": "'", '"': '"', '`': '`', '[': ']' };
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c in closers) {
      const end = closers[c]!;
      for (i++; i < sql.length; i++) {
        if (sql[i] === end) {
          if (end !== ']' && sql[i + 1] === end) i++;
          else break;
        }
      }
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '?') {
      throw new SvcError('BACKEND_CONFIG', 'sqlite backend: positional ? parameters are not allowed; use :name');
    } else if ((c === ':' || c === '@' || c === '$') && idChar.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && idChar.test(sql[j]!)) j++;
      names.add(sql.slice(i + 1, j));
      i = j - 1;
    }
  }
  return [...names];
}
