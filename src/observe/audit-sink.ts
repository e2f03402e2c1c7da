// Where audit lines go, without a syscall per event. Guarantees: lines are written whole
// and in the order they were given; `sync` (audit fsync: always) writes and fsyncs each line
// before write() returns; otherwise lines are encoded as they come into one buffer and
// written in one write at most BATCH_MS after the first of them (at once when the next
// line might not fit in its 64 KiB), and what is still
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

/** The batch buffer's size: a line that might not fit in what is left writes the batch first. */
const BATCH_BYTES = 64 * 1024;
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

/** Joins the lines of up to BATCH_MS into one write, encoding each into the batch buffer as it comes. */
function batched(fd: number, release: () => void): AuditSink {
  const buf = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const sink: AuditSink = {
    write(line) {
      if (closed) return;
      // A UTF-16 code unit is at most 3 UTF-8 bytes: a line this long might not fit in what is left.
      if (used + 3 * line.length > BATCH_BYTES) {
        sink.flush();
        if (3 * line.length > BATCH_BYTES) return writeAll(fd, Buffer.from(line, 'utf8'));
      }
      used += buf.write(line, used, 'utf8');
      timer ??= setTimeout(sink.flush, BATCH_MS);
    },
    flush() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (used === 0) return;
      const n = used;
      used = 0;
      writeAll(fd, buf.subarray(0, n));
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
function writeAll(fd: number, data: string | Buffer): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}
