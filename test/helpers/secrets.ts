// The secret scan's two lists: secrets the tests create (tokens, client secrets,
// passwords, authorization codes, code verifiers — registered with secret()) and every
// log line the servers under test wrote (spawned `svc serve` children through
// test/helpers/serve.ts and cli.ts, in-process harness loggers through logLine()). The root hook in
// test/helpers/secret-scan.hooks.ts fails the run when a registered secret appears in
// any collected line. Secrets shorter than 8 characters are not registered (they would
// match ordinary words).

const secrets = new Set<string>();
const lines: { source: string; text: string }[] = [];

/** Register a secret a test made or was given; returns it, so `const t = secret(randomToken())` reads well. */
export function secret<T extends string | undefined>(value: T): T {
  if (typeof value === 'string' && value.length >= 8) secrets.add(value);
  return value;
}

/** Register the credentials of an OAuth token response (access, refresh and ID token); returns it. */
export function secretTokens<T extends { access_token?: string; refresh_token?: string; id_token?: string }>(t: T): T {
  secret(t.access_token);
  secret(t.refresh_token);
  secret(t.id_token);
  return t;
}

/** Register every value of an environment whose name says it is a secret (…TOKEN, …SECRET, …PASSWORD, …KEY). */
export function secretsOfEnv(env: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(env)) if (/TOKEN|SECRET|PASSWORD|_KEY$/i.test(k)) secret(v);
}

/** Collect output a server under test wrote (split into lines when scanned). */
export function logLine(source: string, text: string): void {
  lines.push({ source, text });
}

/** Every collected line that contains a registered secret: where it came from and the line with the secret masked. */
export function leaks(): { source: string; line: string }[] {
  return findLeaks([...secrets], lines);
}

/** The scan itself, over given secrets and output. */
export function findLeaks(all: readonly string[], output: readonly { source: string; text: string }[]): { source: string; line: string }[] {
  const found: { source: string; line: string }[] = [];
  for (const { source, text } of output) {
    for (const line of text.split('\n')) {
      const hit = all.find((s) => line.includes(s));
      if (hit) found.push({ source, line: line.split(hit).join('<SECRET>').slice(0, 500) });
    }
  }
  return found;
}

export function counts(): { secrets: number; chunks: number } {
  return { secrets: secrets.size, chunks: lines.length };
}
