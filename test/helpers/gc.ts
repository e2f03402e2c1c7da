// collector(): the garbage collector as a function, for tests that check what a collection takes, without running
// node with --expose-gc. Guarantees: the flag is set only while one vm context that holds `gc` is made, then unset,
// so no other context of this process gains a `gc` global (mocha --parallel runs many test files in one worker, and
// test/unit/util/release-heap.test.ts checks exactly that no context gains one).

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function collector(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
