// Where audit lines go, without a syscall per event. Guarantees: lines are written whole
// and in the order they were given; `sync` (audit fsync: always) writes and fsyncs each line
// before write() returns; otherwise lines are joined and written in one write at most
// BATCH_MS after the first of them (at once when 64 KiB are waiting), and what is still
// waiting is written by flush(), by close() and when the process exits. A file is opened
// for append (created with its folder); the stderr sink writes to fd 2. A failed write throws
// (an audit that cannot record stops the server rather than going on silently).

import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface AuditSink {
  write(line: string): void;
  /** Writes what is waiting, now. */
  flush(): void;
  close(): void;
}

/** Above this many waiting characters a batch is written at once. */
const HIGH_WATER = 64 * 1024;
/** How long a line may wait for others to share its write (a write per line costs ~20% of a /svc call). */
export const BATCH_MS = 5;

const open = new Set<AuditSink>();
const flushAll = () => {
  for (const s of open) s.flush();
};

export function fileSink(file: string, sync: boolean): AuditSink {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  if (!sync) return batched(fd, () => closeSync(fd));
  return {
    write(line) {
      writeAll(fd, line);
      fsyncSync(fd);
    },
    flush() {},
    close() {
      closeSync(fd);
    },
  };
}

export function stderrSink(): AuditSink {
  return batched(2, () => {});
}

/** Joins the lines of up to BATCH_MS into one write. */
function batched(fd: number, release: () => void): AuditSink {
  let waiting = '';
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const sink: AuditSink = {
    write(line) {
      if (closed) return;
      waiting += line;
      if (waiting.length >= HIGH_WATER) sink.flush();
      else timer ??= setTimeout(sink.flush, BATCH_MS);
    },
    flush() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (waiting === '') return;
      const text = waiting;
      waiting = '';
      writeAll(fd, text);
    },
    close() {
      if (closed) return;
      sink.flush();
      closed = true;
      open.delete(sink);
      if (open.size === 0) process.removeListener('exit', flushAll);
      release();
    },
  };
  if (open.size === 0) process.on('exit', flushAll);
  open.add(sink);
  return sink;
}

/** writeSync until every byte is written (a pipe may take part of it; EAGAIN on a non-blocking fd is retried). */
function writeAll(fd: number, text: string): void {
  let buf: Buffer | undefined;
  let off = 0;
  for (;;) {
    try {
      if (buf === undefined) {
        const n = writeSync(fd, text);
        if (n === Buffer.byteLength(text)) return;
        buf = Buffer.from(text);
        off = n;
      } else {
        off += writeSync(fd, buf, off);
        if (off >= buf.length) return;
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}
