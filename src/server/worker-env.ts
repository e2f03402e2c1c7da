// The environment a `server.workers` primary (workers.ts) gives each worker it forks, and how a process
// tells it is one. Guarantees: a process is fastsvc's worker only when WORKER_ENV.primary names its own
// parent's pid — not whenever it runs as a node:cluster worker (`svc serve` forked by someone else's
// cluster serves alone), and not when it merely inherited the variables (a worker's child that runs
// `svc serve` again, e.g. a stdio upstream, has the worker as its parent, not the primary).

/** The environment the primary gives each worker (never logged). */
export const WORKER_ENV = {
  /** The primary's pid: set, and equal to process.ppid, only in a worker fastsvc's primary forked. */
  primary: 'FASTSVC_WORKER_OF',
  /** The SQLite file the workers share (tasks, quotas and sessions unless on PostgreSQL — the provider's or `state`; OAuth state unless the provider is PostgreSQL). */
  db: 'FASTSVC_WORKER_DB',
  /** The request-state key when the manifest sets none. */
  stateKey: 'FASTSVC_WORKER_STATE_KEY',
  /** The token auth.generate_if_unset would generate, so every worker has the same one. */
  token: 'FASTSVC_WORKER_TOKEN',
} as const;

/** This process is a worker forked by fastsvc's own `server.workers` primary. */
export function isFastsvcWorker(env: NodeJS.ProcessEnv = process.env, ppid = process.ppid): boolean {
  return env[WORKER_ENV.primary] === String(ppid);
}
