// How much JSON an expansion may make: each tool at most MAX_TOOL_CHARS characters (its description
// and its schemas, every $ref inlined) and all the tools of a manifest's sources MAX_TOTAL_CHARS.
// Guarantees: the translation charges what it makes as it makes it — a shared (memoised) schema
// as the copies it stands for, a value copied from the document (example, default, enum…) by its
// JSON length measured with work bounded by what is left — so passing a bound is found after work
// bounded by the bound, never by the document's fan-out ($refs ten at a time, YAML aliases);
// passing one throws BoundPassed, which the caller locates in the document; the work of an
// operation later skipped counts too (it was done).

/** Most characters of JSON one expanded tool may hold (its description and schemas, every $ref inlined). */
export const MAX_TOOL_CHARS = 1 << 20;
/** Most characters of JSON all the tools of a manifest's openapi sources may hold together. */
export const MAX_TOTAL_CHARS = 32 << 20;

/** A tool passed its bound (`total`: the manifest's, else its own). */
export class BoundPassed extends Error {
  constructor(readonly limit: number, readonly total: boolean) {
    super(`more than ${limit} characters of JSON`);
  }
}

export class Budget {
  private used = 0;
  private tool = 0;
  private limit = MAX_TOOL_CHARS;
  private totalBinds = false;

  constructor(private readonly perTool = MAX_TOOL_CHARS, private readonly total = MAX_TOTAL_CHARS) {}

  /** Starts counting one tool: it may hold the smaller of its own bound and what the total leaves. */
  startTool(): void {
    this.tool = 0;
    const left = this.total - this.used;
    this.totalBinds = left < this.perTool;
    this.limit = Math.min(this.perTool, left);
  }

  /** Ends the tool begun last: its characters count toward the total. */
  endTool(): void {
    this.used += this.tool;
    this.tool = 0;
  }

  /** Characters counted for the current tool so far. */
  get toolChars(): number {
    return this.tool;
  }

  charge(n: number): void {
    this.tool += n;
    if (this.tool > this.limit) throw new BoundPassed(this.totalBinds ? this.total : this.perTool, this.totalBinds);
  }

  /** Charges a value copied as it is (its JSON length), measuring no more of it than the bound leaves. */
  chargeValue(v: unknown): void {
    this.charge(jsonChars(v, this.limit - this.tool + 1));
  }
}

/** The length of `v` as JSON (strings' escapes aside), or any number past `max` once it passes it: walks at most about `max` characters' worth. */
export function jsonChars(v: unknown, max: number): number {
  let n = 0;
  const pending: unknown[] = [v];
  while (pending.length && n <= max) {
    const x = pending.pop();
    if (typeof x === 'string') n += x.length + 2;
    else if (x === null || typeof x !== 'object') n += String(x).length;
    else if (Array.isArray(x)) {
      n += 1 + x.length;
      for (let i = x.length - 1; i >= 0; i--) pending.push(x[i]);
    } else {
      const keys = Object.keys(x);
      n += 1 + keys.length;
      for (const k of keys) {
        n += k.length + 3;
        pending.push((x as Record<string, unknown>)[k]);
        if (n > max) break;
      }
    }
  }
  return n;
}
