// Bounded polling for tests: the one helper that waits for a condition (no sleeps
// standing in for "long enough"). It fails with what it waited for and the last error.

/** Poll until probe returns a value other than undefined: at most timeoutMs, every everyMs. */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 5000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
