// The stdio transport of a `command` upstream: newline-delimited JSON-RPC over a child's
// stdin/stdout. Guarantees: the program runs without a shell, in a process group of its own
// (detached), with exactly the environment it is given (nothing of fastsvc's leaks in), in
// the given folder; close() — and the child's own exit — SIGKILLs the whole group, so
// helpers the server started die with it, and close() resolves once the child is gone (at most
// CLOSE_WAIT_MS); a line longer than maxLine bytes is never held
// whole: it is skipped, and when its JSON-RPC id can be read from its first or last bytes
// the pending request gets an error response (too_large) at once, else onerror says so;
// stderr is read and only its last STDERR_KEEP bytes are kept, so a child that dies can say why:
// once it has exited on its own (not by close()), `exit` gives its exit code or signal and that tail (whole lines, at most
// STDERR_SHOWN characters, control characters dropped, and every value of its environment that is
// STDERR_SECRET_MIN characters or longer replaced by [redacted] — the child's secrets come through its
// env); the messages sent in one turn of the event loop reach the child in one write; a line read is
// JSON-parsed only (the client classifies messages itself) and `messageBytes` tells its size in
// bytes while onmessage has it, so the size of an answer is never measured by serializing it again.
// It exposes `pid` and `stderr` as the SDK's own stdio transport does, so the v2 client
// treats it as stdio when it negotiates the era (a silent probe means 2025; a child that exits on
// the probe is connected again without one, connection.ts).

import { spawn, type ChildProcess } from 'node:child_process';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { serializeMessage } from '@modelcontextprotocol/client';

/** JSON-RPC error code of the synthetic answer to a request whose response line was too long. */
export const TOO_LARGE_RPC = -32099;
const EDGE = 256;
/** Bytes of stderr kept (its end), and characters of it shown. */
const STDERR_KEEP = 8192;
const STDERR_SHOWN = 1024;
/** An env value this long or longer is redacted from the stderr shown. */
const STDERR_SECRET_MIN = 8;
/** How long close() waits for the killed child to be gone. */
const CLOSE_WAIT_MS = 2000;

/** How the child ended, and the end of what it wrote on stderr. */
export interface ChildExit {
  code: number | null;
  signal: string | null;
  stderr: string;
}

export interface StdioOptions {
  program: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Longest line (one JSON-RPC message) accepted, in bytes. */
  maxLine: number;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #opts: StdioOptions;
  #child?: ChildProcess;
  #parts: Buffer[] = [];
  #size = 0;
  /** The current line went over maxLine: its first bytes and its last EDGE bytes. */
  #over?: { head: string; tail: Buffer };
  #closed = false;
  #stderr: Buffer[] = [];
  #stderrBytes = 0;
  #stderrCut = false;
  /** close() killed the child: its exit is not its own. */
  #killed = false;
  /** The child exited on its own (its code or signal), before its streams closed. */
  #died?: { code: number | null; signal: string | null };
  #exit?: ChildExit;
  /** Resolves when the child is gone (its streams closed), or at once when it never started. */
  #gone?: Promise<void>;
  #delivering?: number;
  /** Messages sent in this turn of the event loop, not yet written; the promise their send()s return. */
  #batch = '';
  #batchWritten?: Promise<void>;
  #settleBatch?: { resolve: () => void; reject: (e: Error) => void };

  constructor(opts: StdioOptions) {
    this.#opts = opts;
  }

  /** The size in bytes of the message onmessage is being given (its line as read); undefined outside onmessage. */
  get messageBytes(): number | undefined {
    return this.#delivering;
  }

  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Never a stream (stderr is read here); present so the SDK sees a stdio transport. */
  get stderr(): null {
    return null;
  }

  /** How the child ended (undefined while it runs, or when it never started). */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const o = this.#opts;
      const child = spawn(o.program, [...o.args], { cwd: o.cwd, env: { ...o.env }, shell: false, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      this.#child = child;
      let spawned = false;
      let gone!: () => void;
      this.#gone = new Promise((r) => (gone = r));
      child.once('error', (e) => {
        if (!spawned) gone(); // it never ran: nothing to wait for
        reject(e);
        this.onerror?.(e);
      });
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.stdout!.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr!.on('data', (chunk: Buffer) => this.#keepStderr(chunk));
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.once('exit', (code, signal) => {
        if (!this.#killed) this.#died = { code, signal };
      });
      child.once('close', () => {
        if (this.#died) this.#exit = { ...this.#died, stderr: this.#stderrText() };
        this.#killGroup();
        this.#finish();
        gone();
      });
    });
  }

  /**
   * Queues the message; every message sent in one turn of the event loop reaches the child in one write, on
   * setImmediate (each write to a pipe is a system call that wakes the child: one per message was a sixth of a
   * proxied call's CPU, issue 31). Resolves when its batch is written, or has drained.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#child?.stdin || this.#closed) return Promise.reject(new Error('the upstream process is not running'));
    this.#batch += serializeMessage(message);
    if (!this.#batchWritten) {
      this.#batchWritten = new Promise((resolve, reject) => (this.#settleBatch = { resolve, reject }));
      setImmediate(this.#flush);
    }
    return this.#batchWritten;
  }

  readonly #flush = (): void => {
    const stdin = this.#child?.stdin;
    const text = this.#batch;
    const settle = this.#settleBatch!;
    this.#batch = '';
    this.#batchWritten = undefined;
    this.#settleBatch = undefined;
    if (!stdin || this.#closed) return settle.reject(new Error('the upstream process is not running'));
    if (stdin.write(text)) settle.resolve();
    else stdin.once('drain', settle.resolve);
  };

  async close(): Promise<void> {
    if (this.#child && !this.#died) this.#killed = true;
    this.#killGroup();
    this.#finish();
    if (!this.#gone) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#gone, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }

  #killGroup(): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  }

  /** Keeps the last STDERR_KEEP bytes of stderr. */
  #keepStderr(chunk: Buffer): void {
    this.#stderr.push(chunk);
    this.#stderrBytes += chunk.length;
    while (this.#stderrBytes - this.#stderr[0]!.length >= STDERR_KEEP) {
      this.#stderrBytes -= this.#stderr.shift()!.length;
      this.#stderrCut = true;
    }
  }

  /** The end of stderr as shown: whole lines, control characters dropped, env values redacted, at most STDERR_SHOWN characters. */
  #stderrText(): string {
    let all = Buffer.concat(this.#stderr);
    let cut = this.#stderrCut;
    if (all.length > STDERR_KEEP) {
      all = all.subarray(all.length - STDERR_KEEP);
      cut = true;
    }
    let text = all.toString('utf8');
    // A line cut at the start of what was kept is dropped: it may hold the end of a secret.
    if (cut) text = text.slice(text.indexOf('\n') + 1);
    for (const value of Object.values(this.#opts.env).filter((v) => v.length >= STDERR_SECRET_MIN).sort((a, b) => b.length - a.length)) text = text.split(value).join('[redacted]');
    text = text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '').trim();
    if (text.length <= STDERR_SHOWN) return text;
    const end = text.slice(text.length - STDERR_SHOWN);
    return end.slice(end.indexOf('\n') + 1);
  }

  #read(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#take(chunk.subarray(start, nl));
      this.#line();
      start = nl + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#over) {
      // Only the last EDGE bytes are kept: copying the whole part would allocate the line's size again.
      this.#over.tail = Buffer.concat([this.#over.tail, part.subarray(-EDGE)]).subarray(-EDGE);
      return;
    }
    this.#parts.push(part);
    this.#size += part.length;
    if (this.#size > this.#opts.maxLine) {
      const all = Buffer.concat(this.#parts);
      this.#over = { head: all.subarray(0, EDGE).toString('utf8'), tail: all.subarray(-EDGE) };
      this.#parts = [];
      this.#size = 0;
    }
  }

  #line(): void {
    if (this.#over) {
      const { head, tail } = this.#over;
      this.#over = undefined;
      const id = idIn(head, tail.toString('utf8'));
      if (id === undefined) this.onerror?.(new Error(`a message larger than ${this.#opts.maxLine} bytes was dropped`));
      else this.onmessage?.({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_RPC, message: `the answer is larger than ${this.#opts.maxLine} bytes`, data: { reason: 'too_large', max_bytes: this.#opts.maxLine } } });
      return;
    }
    const parts = this.#parts;
    const bytes = this.#size;
    this.#parts = [];
    this.#size = 0;
    if (bytes === 0) return;
    const text = (parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes)).toString('utf8');
    // JSON only (a trailing \r is JSON whitespace): the client classifies each message by its schemas itself,
    // so a schema pass here was a second one (issue 31).
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (e) {
      if (text.trim()) this.onerror?.(e as Error);
      return;
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) return void this.onerror?.(new Error('a line that is not a JSON-RPC message was ignored'));
    this.#delivering = bytes;
    try {
      this.onmessage?.(message as JSONRPCMessage);
    } finally {
      this.#delivering = undefined;
    }
  }
}

/** A response's id when the message opens with it ({"jsonrpc":"2.0","id":7,…) or ends with it (…,"id":7}); content is never searched. */
function idIn(head: string, tail: string): string | number | undefined {
  const ID = '"id"\\s*:\\s*(?:(-?\\d+)|"([^"\\\\]{1,200})")';
  const m = new RegExp(`^\\s*\\{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?${ID}`).exec(head) ?? new RegExp(`${ID}\\s*\\}\\s*$`).exec(tail);
  if (!m) return undefined;
  return m[1] !== undefined ? Number(m[1]) : m[2];
}
