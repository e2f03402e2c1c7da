// Where MCP 2025 sessions live when more than one process serves them (replicas on PostgreSQL,
// workers of one box on SQLite): the SessionStore interface. One process alone keeps its sessions
// in memory (src/mcp/sessions.ts) and uses no store.
// Guarantees (every implementation passes test/contract/session-store.test.ts):
// - a record is written when its promise resolves, and read by any process sharing the store;
// - update() and end() are told to every process (this one included) as a `changed` / `ended`
//   signal, after they are durable; update() applies its change to the record as stored at that moment,
//   atomically (two processes adding to one list at once both keep theirs); a record past its expiry
//   is never returned, and sweep() ends it;
// - append() gives each message of a session's outbound stream the next number of that session
//   (1, 2, 3, …, no gaps, in commit order even when several processes append at once); the messages of
//   one append() are one write with consecutive numbers (another process's never land between them),
//   signalled as one `events`; since() returns a session's messages after a number, in order, from the last
//   `keep_events` kept; end() drops them with the record;
// - a signal is delivered to every process sharing the store, in the order it was sent from one
//   process; a message of any size is carried (a store whose channel bounds payloads keeps big ones
//   in a table and sends a pointer);
// - while the store's notification channel is down, listening() is false: a process then caches
//   nothing it would need a signal to invalidate.

/** An MCP 2025 session as every process sharing the store sees it. Messages are opaque JSON-RPC values. */
export interface SessionRecord {
  readonly id: string;
  /** principalKey of the principal that opened it (kind, issuer, subject, client): only it may use the session. */
  readonly owner: string;
  /** Its subject, for the log. */
  readonly sub: string;
  /** The credential (an OAuth grant id) it was opened with: revoking it ends the session. */
  readonly credentialId?: string;
  /** The named endpoint it was opened on; absent: the default endpoint. */
  readonly endpoint?: string;
  /** The protocol version initialize negotiated. */
  readonly version: string;
  /** The capabilities the client declared at initialize. */
  readonly clientCaps: Record<string, unknown>;
  /** logging/setLevel's level (an MCP LogLevel). */
  logLevel: string;
  /** resources/subscribe'd URIs. */
  subscriptions: string[];
  /** Tools a progressive endpoint's load_tools added to this session's listing. */
  loadedTools: string[];
  /** Tasks started in this session and not yet ended: their status changes are notified on its stream. */
  tasks: string[];
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms after which the session is ended (an idle session; see touch()). */
  expiresAt: number;
  /**
   * The process holding the session's GET stream (`by`: that stream's own id) and when it last said so (epoch ms): set
   * when the stream attaches, moved while it stays open (at most once per streamMarkEvery()), cleared when it closes
   * (streamMark()). A holder killed leaves it set: a reader counts a mark older than two of those periods as no stream.
   */
  stream?: { readonly by: string; readonly at: number };
}

/** Items of a record's lists. */
export interface SessionLists {
  readonly subscriptions?: readonly string[];
  readonly loadedTools?: readonly string[];
  readonly tasks?: readonly string[];
}

/**
 * What a process changes in a record after initialize: the log level set, and items added to or removed from its lists
 * (an item added is kept once, after those already there; removing one not there changes nothing). Applied by the store
 * atomically against the record as it is then, so changes several processes make at once are all kept.
 */
export interface SessionChange {
  readonly logLevel?: string;
  readonly add?: SessionLists;
  readonly remove?: SessionLists;
}

/** One message of a session's outbound stream (its GET stream on /mcp): `seq` is its SSE event id. */
export interface SessionEvent {
  readonly seq: number;
  readonly msg: unknown;
}

/** What one process tells the others about a session. */
export type SessionSignal =
  /** The record changed: re-read it. */
  | { readonly kind: 'changed'; readonly id: string }
  /** The session ended (DELETE, expiry, revocation): end what this process holds of it. */
  | { readonly kind: 'ended'; readonly id: string; readonly why: string }
  /** The session's outbound stream has new messages: the process holding its GET stream sends them. */
  | { readonly kind: 'events'; readonly id: string }
  /** The client answered a server→client request (a JSON-RPC response): the process that asked completes it. */
  | { readonly kind: 'answer'; readonly id: string; readonly msg: unknown }
  /** The client cancelled one of its requests: the process running it aborts it. */
  | { readonly kind: 'cancel'; readonly id: string; readonly requestId: string | number };

export interface SessionStore {
  create(r: SessionRecord): Promise<void>;
  /** The record, unless it is unknown, ended or expired. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Applies `change` to the record atomically and signals `changed`; false when the session is unknown or ended. */
  update(id: string, change: SessionChange): Promise<boolean>;
  /** Moves its expiry (no signal: a touch changes nothing another process caches). */
  touch(id: string, expiresAt: number): Promise<void>;
  /**
   * Marks the GET stream `by` as the session's, at `at` (record.stream; no signal: it is read when needed), and moves
   * the expiry to `expiresAt` when that is later — one write for a held stream's refresh; `at` 0 clears the mark, only
   * while it is still `by`'s (a stream that closes after another one attached leaves the new one's).
   */
  streamMark(id: string, by: string, at: number, expiresAt?: number): Promise<void>;
  /** Deletes the record and its messages, and signals `ended` with `why`; false when it was not there. */
  end(id: string, why: string): Promise<boolean>;
  /**
   * Adds `msgs` to the session's outbound stream in one write: they take the next numbers, consecutive and in their
   * order (another process's appends come before or after them, never between); resolves to the last one's number;
   * signals `events` once. Resolves to 0 (nothing stored or signalled) when the session is unknown, ended or expired,
   * or `msgs` is empty. One message is a batch of one: a single method keeps one write path in every store.
   */
  append(id: string, msgs: readonly unknown[]): Promise<number>;
  /** The session's messages numbered above `after`, oldest first (at most `keep_events` of them). */
  since(id: string, after: number): Promise<SessionEvent[]>;
  /** The number of the session's newest message (0 when none). */
  head(id: string): Promise<number>;
  /** Sends `answer` and `cancel` signals (the store sends the others itself). */
  signal(s: SessionSignal): Promise<void>;
  /** Called with every signal any process sends (this one's included). */
  onSignal(fn: (s: SessionSignal) => void): void;
  /** False while signals may be missed (the notification channel is down): cache nothing then. */
  listening(): boolean;
  /** Called when listening() changes; after a gap (true again) every cached record may be stale. */
  onListening(fn: (up: boolean) => void): void;
  /** Ends every session whose expiry is before `now` (signalling each); resolves to how many. */
  sweep(now: number): Promise<number>;
  /** Records in the store (for /metrics and the capacity plan). */
  count(): Promise<number>;
  close(): Promise<void>;
}

/**
 * How processes of one box that share a SQLite file reach each other (SQLite has no LISTEN/NOTIFY):
 * worker processes relay through their node:cluster primary; one process alone loops back. send()
 * delivers to every process, the sender included, in the order one process sent.
 */
export interface SignalRelay {
  send(s: SessionSignal): void;
  onSignal(fn: (s: SessionSignal) => void): void;
}
