// The bench scripts' command lines, one way: node:util parseArgs with a --help flag added.
// Guarantees: an unknown or malformed option prints its error and the usage on stderr and exits 2;
// --help prints the usage on stdout and exits 0; otherwise the parsed values are returned.
import { parseArgs } from 'node:util';

export function cliOptions(options, usage) {
  let values;
  try {
    values = parseArgs({ options: { ...options, help: { type: 'boolean' } } }).values;
  } catch (err) {
    console.error(`${err.message}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}
